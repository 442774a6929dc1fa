package etcd

import (
	"context"
	"iter"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Watch yields every commit of key after revision from, in order, with no
// gap: it replays the journal as of one etcd revision R, then follows an
// etcd watch of the journal from R+1. When the etcd watch ends (cancelled
// by the server, compacted, leader lost) it starts over from the last
// record delivered. It ends when ctx is done or an error is yielded.
func (s *Store) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return func(yield func(store.Commit, error) bool) {
		if _, err := s.doc(key); err != nil {
			yield(store.Commit{}, err)
			return
		}
		// Close ends the watch, as it does the file store's.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-s.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		w := watcher{s: s, key: key, next: from + 1, yield: yield}
		if from > 0 {
			w.linkFrom = from
		}
		defer func() {
			select {
			case <-s.done:
				if !w.stopped {
					yield(store.Commit{}, errClosed)
				}
			default:
			}
		}()
		for {
			at, ok := w.catchUp(ctx)
			if !ok || !w.follow(ctx, at) || ctx.Err() != nil {
				return
			}
			sleep(ctx, 50*time.Millisecond)
		}
	}
}

type watcher struct {
	s        *Store
	key      string
	next     uint64        // the revision to deliver next
	prev     *store.Record // the last record delivered (or record linkFrom)
	linkFrom uint64        // a revision to read but not deliver, to check the first link
	yield    func(store.Commit, error) bool
	stopped  bool // the consumer stopped, or an error was yielded
}

// fail yields err, the last thing the watch yields.
func (w *watcher) fail(err error) {
	w.stopped = true
	w.yield(store.Commit{}, err)
}

// deliver checks r's link and yields it. It returns false to stop.
func (w *watcher) deliver(r store.Record) bool {
	if w.prev != nil || r.Rev == 1 {
		if err := store.Chain(w.prev, r); err != nil {
			w.fail(err)
			return false
		}
	}
	w.prev = &r
	w.next = r.Rev + 1
	if !w.yield(store.Commit{Key: w.key, Record: r}, nil) {
		w.stopped = true
		return false
	}
	return true
}

// catchUp delivers the records after w.next-1 that exist now, and returns
// the etcd revision it read them at.
func (w *watcher) catchUp(ctx context.Context) (int64, bool) {
	start := w.next
	if w.prev == nil && w.linkFrom > 0 {
		start = w.linkFrom
	}
	recs, at, err := w.s.recordsAt(ctx, w.key, start, 0, 0)
	if err != nil {
		if ctx.Err() == nil {
			w.fail(err)
		}
		return 0, false
	}
	for _, r := range recs {
		if r.Rev < w.next {
			w.prev = &r
			continue
		}
		if !w.deliver(r) {
			return 0, false
		}
	}
	return at, true
}

// follow delivers records from an etcd watch starting at etcd revision
// at+1. It returns true when the watch ended and should be resumed.
func (w *watcher) follow(ctx context.Context, at int64) bool {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	start, end := w.s.journalRange(w.key, w.next, 0)
	for wr := range w.s.c.Watch(wctx, start, clientv3.WithRange(end), clientv3.WithRev(at+1)) {
		if wr.Err() != nil || wr.Canceled || wr.CompactRevision != 0 {
			return true
		}
		for _, ev := range wr.Events {
			if ev.Type != mvccpb.PUT {
				continue
			}
			r, err := store.DecodeRecord(ev.Kv.Value)
			if err != nil {
				w.fail(reason.New(reason.CorruptState, "%s, etcd key %s: %v", w.key, ev.Kv.Key, err))
				return false
			}
			if n, ok := revOfJournalKey(ev.Kv.Key); !ok || n != r.Rev {
				w.fail(reason.New(reason.CorruptState, "%s: etcd key %s holds journal record %d", w.key, ev.Kv.Key, r.Rev))
				return false
			}
			switch {
			case r.Rev < w.next:
				continue
			case r.Rev > w.next:
				// Cannot happen with one transaction per record; resync
				// from the journal rather than skip anything.
				return true
			}
			if !w.deliver(r) {
				return false
			}
		}
	}
	return true
}
