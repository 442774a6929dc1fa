package etcd

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// pageSize is how many journal records one range request fetches (a
// variable for tests).
var pageSize int64 = 500

// records returns the journal records from..to (to 0: all) as of etcd
// revision at, each checked against its own hash, in order, contiguous and
// linked to one another. When from > 1 the first record's link to its
// predecessor is not checked here.
func (s *Store) records(ctx context.Context, key string, from, to uint64, at int64) ([]store.Record, error) {
	recs, _, err := s.recordsAt(ctx, key, from, to, at)
	return recs, err
}

// recordsAt is records that also returns the etcd revision read (at, or the
// latest when at is 0).
func (s *Store) recordsAt(ctx context.Context, key string, from, to uint64, at int64) ([]store.Record, int64, error) {
	if from == 0 {
		from = 1
	}
	start, end := s.journalRange(key, from, to)
	var out []store.Record
	var prev *store.Record
	want := from
	for {
		resp, err := s.c.Get(ctx, start, clientv3.WithRange(end), clientv3.WithRev(at), clientv3.WithLimit(pageSize))
		if err != nil {
			return nil, 0, etcdError("read journal of "+key, err)
		}
		at = resp.Header.Revision
		for _, kv := range resp.Kvs {
			r, err := store.DecodeRecord(kv.Value)
			if err != nil {
				return nil, 0, reason.New(reason.CorruptState, "%s, etcd key %s: %v", key, kv.Key, err)
			}
			if n, ok := revOfJournalKey(kv.Key); !ok || n != r.Rev {
				return nil, 0, reason.New(reason.CorruptState, "%s: etcd key %s holds journal record %d", key, kv.Key, r.Rev)
			}
			if r.Rev != want {
				return nil, 0, reason.New(reason.CorruptState, "%s: journal record %d is missing (next is %d)", key, want, r.Rev)
			}
			if prev != nil {
				if err := store.Chain(prev, r); err != nil {
					return nil, 0, fmt.Errorf("%s: %w", key, err)
				}
			} else if r.Rev == 1 {
				if err := store.Chain(nil, r); err != nil {
					return nil, 0, fmt.Errorf("%s: %w", key, err)
				}
			}
			out = append(out, r)
			prev = &out[len(out)-1]
			want++
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, at, nil
		}
		start = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// History returns the records with from <= rev <= to (to 0: up to the
// latest), read at one etcd revision.
func (s *Store) History(ctx context.Context, key string, from, to uint64) ([]store.Record, error) {
	if _, err := s.doc(key); err != nil {
		return nil, err
	}
	st, at, err := s.read(ctx, key)
	if err != nil {
		return nil, err
	}
	if st.value == nil {
		return nil, notFound(key)
	}
	if to == 0 || to > st.rev {
		to = st.rev
	}
	if from == 0 {
		from = 1
	}
	if from > to {
		return nil, nil
	}
	recs, err := s.records(ctx, key, from, to, at)
	if err != nil {
		return nil, err
	}
	if uint64(len(recs)) != to-from+1 {
		return nil, reason.New(reason.CorruptState, "%s: journal ends at revision %d, the document is at %d", key, from+uint64(len(recs))-1, st.rev)
	}
	return recs, nil
}

// GetAt returns the document as it was right after revision rev, replayed
// from its journal. Revision 0 is the state before the first commit.
func (s *Store) GetAt(ctx context.Context, key string, rev uint64) (store.Document, error) {
	if _, err := s.doc(key); err != nil {
		return store.Document{}, err
	}
	st, at, err := s.read(ctx, key)
	if err != nil {
		return store.Document{}, err
	}
	if st.value == nil {
		return store.Document{}, notFound(key)
	}
	if rev > st.rev {
		return store.Document{}, reason.New(reason.NotFound, "%s has no revision %d (latest is %d)", key, rev, st.rev)
	}
	if rev == st.rev {
		return store.Document{Key: key, Revision: rev, Value: st.value}, nil
	}
	if rev == 0 {
		return store.Document{Key: key}, nil
	}
	recs, err := s.records(ctx, key, 1, rev, at)
	if err != nil {
		return store.Document{}, err
	}
	if uint64(len(recs)) != rev {
		return store.Document{}, reason.New(reason.CorruptState, "%s: journal ends at revision %d, before %d", key, len(recs), rev)
	}
	v, err := store.Replay(nil, recs)
	if err != nil {
		return store.Document{}, fmt.Errorf("%s: %w", key, err)
	}
	return store.Document{Key: key, Revision: rev, Value: v}, nil
}

// Verify checks, as of one etcd revision, that the document's journal is
// complete and its hash chain intact, that replaying it reproduces every
// recorded value, and that the document key holds the last one.
func (s *Store) Verify(ctx context.Context, key string) error {
	if _, err := s.doc(key); err != nil {
		return err
	}
	st, at, err := s.read(ctx, key)
	if err != nil {
		return err
	}
	recs, err := s.records(ctx, key, 1, 0, at)
	if err != nil {
		return err
	}
	if st.value == nil {
		if len(recs) == 0 {
			return notFound(key)
		}
		return reason.New(reason.CorruptState, "%s: the journal holds %d records but the document key is missing", key, len(recs))
	}
	if len(recs) == 0 {
		return reason.New(reason.CorruptState, "%s is at revision %d but has no journal", key, st.rev)
	}
	last := recs[len(recs)-1]
	if last.Rev != st.rev {
		return reason.New(reason.CorruptState, "%s is at revision %d but its journal ends at %d", key, st.rev, last.Rev)
	}
	if last.Hash != st.hash {
		return reason.New(reason.CorruptState, "%s: the document names record hash %s, the journal's record %d has %s", key, st.hash, last.Rev, last.Hash)
	}
	v, err := store.Replay(nil, recs)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	sum, err := store.SumOf(st.value)
	if err != nil {
		return reason.New(reason.CorruptState, "%s: the stored value does not parse: %v", key, err)
	}
	if (last.Sum != "" && sum != last.Sum) || sum != st.sum {
		return reason.New(reason.CorruptState, "%s: the stored value does not match revision %d of its journal", key, last.Rev)
	}
	if want, _ := store.SumOf(v); want != sum {
		return reason.New(reason.CorruptState, "%s: replaying the journal does not reproduce the stored value", key)
	}
	return nil
}
