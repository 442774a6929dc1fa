package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Verify checks, without repairing anything, that the document's journal
// chain is intact, that replaying it reproduces every recorded value, and
// that the snapshot equals the latest one.
func (s *Store) Verify(ctx context.Context, key string) error {
	d, err := s.doc(key)
	if err != nil {
		return err
	}
	return d.locked(ctx, func() error {
		pj, err := d.readJournal(false)
		if err != nil {
			return err
		}
		snap, err := d.readFile(d.p.snap)
		if err != nil {
			return err
		}
		if len(pj.recs) == 0 {
			if snap == nil {
				return notFound(key)
			}
			if _, err := store.SumOf(snap); err != nil {
				return reason.New(reason.CorruptState, "%s does not parse: %v", d.p.snap, err)
			}
			return nil // a file not yet adopted
		}
		v, err := store.Replay(nil, pj.recs)
		if err != nil {
			return reason.New(reason.CorruptState, "journal %s: %v", d.p.journal, err)
		}
		last := pj.recs[len(pj.recs)-1]
		if snap == nil {
			return reason.New(reason.CorruptState, "%s is missing (journal is at revision %d)", d.p.snap, last.Rev)
		}
		sum, err := store.SumOf(snap)
		if err != nil {
			return reason.New(reason.CorruptState, "%s does not parse: %v", d.p.snap, err)
		}
		if sum != last.Sum {
			return reason.New(reason.CorruptState, "%s does not match revision %d of its journal", d.p.snap, last.Rev)
		}
		if want, _ := store.SumOf(v); want != sum {
			return reason.New(reason.CorruptState, "replaying %s does not reproduce %s", d.p.journal, d.p.snap)
		}
		if pj.torn {
			return reason.New(reason.CorruptState, "journal %s ends in a torn record (an unacknowledged commit; the next write cuts it off)", d.p.journal)
		}
		return nil
	})
}

// Watch yields every commit after revision from, in order, with no gap. It
// reads the journal without the lock (a partly written last line is left
// for the next round) and wakes on this process's commits at once and on
// other processes' commits within PollInterval.
func (s *Store) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return func(yield func(store.Commit, error) bool) {
		d, err := s.doc(key)
		if err != nil {
			yield(store.Commit{}, err)
			return
		}
		var (
			off  int64
			prev *store.Record
		)
		ticker := time.NewTicker(s.opts.PollInterval)
		defer ticker.Stop()
		for {
			d.mu.Lock()
			wake := d.changed
			d.mu.Unlock()
			recs, end, err := d.readFrom(off, prev)
			if err != nil {
				yield(store.Commit{}, err)
				return
			}
			off = end
			for i := range recs {
				prev = &recs[i]
				if recs[i].Rev <= from {
					continue
				}
				if !yield(store.Commit{Key: key, Record: recs[i]}, nil) {
					return
				}
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

// readFrom reads complete journal records from byte offset off on, without
// the lock.
func (d *doc) readFrom(off int64, prev *store.Record) ([]store.Record, int64, error) {
	f, err := d.s.root.Open(d.p.journal)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, off, nil
	}
	if err != nil {
		return nil, off, pathError(d.p.key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, off, fmt.Errorf("watch %s: %w", d.p.key, err)
	}
	if fi.Size() < off {
		return nil, off, reason.New(reason.CorruptState, "journal %s shrank below what was already delivered", d.p.journal)
	}
	if fi.Size() == off {
		return nil, off, nil
	}
	data := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(data, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, off, fmt.Errorf("watch %s: %w", d.p.key, err)
	}
	pj, err := parseJournal(d.p.journal, data[:n], off, prev)
	if err != nil {
		return nil, off, err
	}
	return pj.recs, pj.end, nil
}
