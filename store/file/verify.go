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
	return d.lockedRead(ctx, func() error {
		if d.held.locked {
			// Hold mode: make the files whole first (journal synced,
			// snapshot at the latest revision), then check them as usual.
			if err := d.awaitDurable(d.rev); err != nil {
				return err
			}
			if err := d.flushSnapshot(true); err != nil {
				return err
			}
		}
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
		if last.Sum != "" && sum != last.Sum {
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
		if s.opts.Hold {
			// Load the document (and take its lock) so the durable
			// revision is known before reading the journal.
			if err := d.locked(ctx, d.refresh); err != nil {
				yield(store.Commit{}, err)
				return
			}
		}
		var (
			off  int64
			prev *store.Record
		)
		ticker := time.NewTicker(s.opts.PollInterval)
		defer ticker.Stop()
		for {
			wake := d.wake()
			recs, end, err := d.readFrom(off, prev, d.durableRev())
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
// In Hold mode only records up to maxRev (the last synced one) are read.
func (d *doc) readFrom(off int64, prev *store.Record, maxRev uint64) ([]store.Record, int64, error) {
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
	pj, err := parseJournalUpTo(d.p.journal, data[:n], off, prev, maxRev)
	if err != nil {
		return nil, off, err
	}
	return pj.recs, pj.end, nil
}
