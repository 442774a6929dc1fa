package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Watch yields every commit after revision from, in order, with no gap. It
// reads the journal without the lock (a partly written last line is left
// for the next round), starting with the file that holds revision from+1,
// and wakes on this process's commits at once and on other processes'
// commits within PollInterval.
func (s *Store) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return func(yield func(store.Commit, error) bool) {
		d, err := s.doc(key)
		if err != nil {
			yield(store.Commit{}, err)
			return
		}
		if s.opts.Hold {
			// Load the document (and take its lock) so the durable
			// revision is known before reading the journal. One not
			// written yet is followed as it is: a watch creates nothing
			// (no directory, no lock file), its first commit wakes it.
			if err := d.lockedRead(ctx, d.refresh); err != nil && reason.CodeOf(err) != reason.NotFound {
				yield(store.Commit{}, err)
				return
			}
		}
		fw := &follower{d: d, from: from}
		defer fw.close()
		ticker := time.NewTicker(s.opts.PollInterval)
		defer ticker.Stop()
		for {
			wake := d.wake()
			recs, err := fw.poll(d.durableRev())
			for i := range recs {
				if !yield(store.Commit{Key: key, Record: recs[i]}, nil) {
					return
				}
			}
			if err != nil {
				yield(store.Commit{}, err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-wake:
			case <-ticker.C:
			}
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				yield(store.Commit{}, errClosed)
				return
			}
		}
	}
}

// follower reads a document's journal for Watch, without the lock: the
// sealed segments that hold what it has not delivered yet (whole), then
// the live journal, which it keeps open and follows by offset. When the
// live journal it follows is sealed (renamed; its descriptor still reads
// it), it reads it to the end and moves on to the file that holds the next
// revision.
type follower struct {
	d    *doc
	from uint64        // deliver revisions after this one
	prev *store.Record // the last record read (nil: none yet)
	f    *os.File      // the live journal followed (nil: none open)
	ino  fileID        // its identity
	off  int64         // how much of it was read
}

func (w *follower) close() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
}

// want is the next revision to read.
func (w *follower) want() uint64 {
	if w.prev != nil {
		return w.prev.Rev + 1
	}
	return w.from + 1
}

// sealed returns the sealed segment that holds the next revision (nil:
// none does).
func (w *follower) sealed() (*segment, error) {
	segs, err := w.d.segments()
	for i, s := range segs {
		if s.from <= w.want() && w.want() <= s.to {
			return &segs[i], nil
		}
	}
	return nil, err
}

// poll returns the records after from read since the last call, up to
// maxRev (in Hold mode, the last synced revision).
func (w *follower) poll(maxRev uint64) ([]store.Record, error) {
	d := w.d
	var out []store.Record
	keep := func(recs []store.Record) {
		for _, r := range recs {
			if r.Rev > w.from {
				out = append(out, r)
			}
		}
		if len(recs) > 0 {
			r := recs[len(recs)-1]
			w.prev = &r
		}
	}
	for round := 0; round < 1<<20; round++ {
		if w.f == nil {
			s, err := w.sealed()
			if err != nil {
				return out, err
			}
			if s != nil {
				if w.prev != nil && s.from != w.want() {
					return out, reason.New(reason.CorruptState, "journal segment %s starts at revision %d, but revision %d follows revision %d", s.name, s.from, w.want(), w.prev.Rev)
				}
				recs, err := d.parseSegment(*s, w.prev)
				if err != nil {
					return out, err
				}
				keep(recs)
				continue
			}
			f, fi, err := d.openRegular(d.p.journal, os.O_RDONLY, 0)
			if errors.Is(err, fs.ErrNotExist) {
				return out, nil // nothing after the last segment yet
			}
			if err != nil {
				return out, pathError(d.p.key, err)
			}
			w.f, w.off, w.ino = f, 0, idOf(fi)
		}
		// Still the live journal? Once sealed (or replaced), what was
		// written to it before the rename is visible: read to its end,
		// the reader goes on to the next file.
		id, err := d.stat(d.p.journal)
		if err != nil {
			return out, err
		}
		live := id.exists && id.dev == w.ino.dev && id.ino == w.ino.ino
		n, consumed, err := w.read(maxRev, keep)
		if err != nil {
			return out, err
		}
		if n < 0 {
			// The file is not the continuation: a segment was sealed
			// between the listing and the open.
			w.close()
			continue
		}
		if live || !consumed {
			return out, nil // more to come in this file (or not yet durable)
		}
		w.close()
	}
	return out, fmt.Errorf("watch %s: the journal keeps changing under the reader", d.p.key)
}

// read parses what the followed file holds past the offset, up to maxRev.
// n is the number of records read (-1 when the file's first record is not
// the one wanted); consumed reports that everything in the file was read.
func (w *follower) read(maxRev uint64, keep func([]store.Record)) (n int, consumed bool, err error) {
	d := w.d
	fi, err := w.f.Stat()
	if err != nil {
		return 0, false, fmt.Errorf("watch %s: %w", d.p.key, err)
	}
	size := fi.Size()
	if size < w.off {
		return 0, false, reason.New(reason.CorruptState, "journal %s shrank below what was already delivered", d.p.journal)
	}
	if size == w.off {
		return 0, true, nil
	}
	data := make([]byte, size-w.off)
	m, err := w.f.ReadAt(data, w.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, false, fmt.Errorf("watch %s: %w", d.p.key, err)
	}
	data = data[:m]
	prev := w.prev
	if w.off == 0 {
		first, ok := firstRev(data)
		if !ok {
			return 0, false, nil // no complete line yet
		}
		if first != w.want() && (w.prev != nil || first > w.want()) {
			if w.prev != nil && first < w.want() {
				return 0, false, reason.New(reason.CorruptState, "journal %s starts at revision %d, but revision %d was already read (it was replaced)", d.p.journal, first, w.prev.Rev)
			}
			if s, err := w.sealed(); err != nil || s != nil {
				return -1, false, err
			}
			return 0, false, reason.New(reason.CorruptState, "journal %s starts at revision %d and no journal file holds revision %d", d.p.journal, first, w.want())
		}
		if prev == nil {
			prev = loose(first - 1)
		}
	}
	pj, err := parseJournalUpTo(d.p.journal, data, w.off, prev, maxRev)
	if err != nil {
		return 0, false, err
	}
	keep(pj.recs)
	w.off = pj.end
	return len(pj.recs), w.off == size, nil
}
