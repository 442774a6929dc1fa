package etcd

import (
	"context"
	"encoding/json"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// importBatch bounds the operations of one import transaction, under etcd's
// default --max-txn-ops of 128.
const importBatch = 100

// CheckJournal checks that recs are a complete journal from revision 1 —
// every record sealed by its own hash and linked to the previous one — and
// that replaying them reproduces value. It returns each record's line as
// the journal holds it (without the newline).
func CheckJournal(key string, recs []store.Record, value []byte) ([][]byte, error) {
	if len(recs) == 0 {
		return nil, reason.New(reason.InvalidInput, "%s has no journal records", key)
	}
	lines := make([][]byte, len(recs))
	var prev *store.Record
	for i := range recs {
		line, err := json.Marshal(&recs[i])
		if err != nil {
			return nil, fmt.Errorf("encode journal record %d of %s: %w", recs[i].Rev, key, err)
		}
		if _, err := store.DecodeRecord(line); err != nil {
			return nil, reason.New(reason.CorruptState, "%s: %v", key, err)
		}
		if err := store.Chain(prev, recs[i]); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		lines[i] = line
		prev = &recs[i]
	}
	v, err := store.Replay(nil, recs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	last := recs[len(recs)-1]
	got, err := store.SumOf(value)
	if err != nil {
		return nil, reason.New(reason.CorruptState, "%s: the value does not parse: %v", key, err)
	}
	// A file journal written by a group commit leaves the sum empty on all
	// but a batch's last record; the replay is then what vouches for it.
	if want, _ := store.SumOf(v); (last.Sum != "" && got != last.Sum) || want != got {
		return nil, reason.New(reason.CorruptState, "%s: the value is not what its journal's revision %d recorded", key, last.Rev)
	}
	return lines, nil
}

// Has reports whether the document exists.
func (s *Store) Has(ctx context.Context, key string) (bool, error) {
	if _, err := s.doc(key); err != nil {
		return false, err
	}
	st, _, err := s.read(ctx, key)
	return st.value != nil, err
}

// Import writes a document that does not exist yet here, with its journal
// records exactly as given (as another backend holds them, so the hash
// chain stays verifiable), and value as its current value. The records are
// checked first (CheckJournal). They are written in transactions of at most
// 100 keys, each conditional on the document still being absent; the
// document key goes last, so an interrupted import leaves no document (and
// running it again overwrites the partial journal).
func (s *Store) Import(ctx context.Context, key string, recs []store.Record, value []byte) error {
	d, err := s.doc(key)
	if err != nil {
		return err
	}
	lines, err := CheckJournal(key, recs, value)
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.known = false
	last := recs[len(recs)-1]
	dk := s.docKey(key)
	sum, err := store.SumOf(value) // CheckJournal vouched for it; the last record may carry no sum
	if err != nil {
		return err
	}
	dv, err := encodeDoc(header{Rev: last.Rev, Hash: last.Hash, Sum: sum}, value)
	if err != nil {
		return err
	}
	absent := clientv3.Compare(clientv3.CreateRevision(dk), "=", 0)
	var ops []clientv3.Op
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		resp, err := s.c.Txn(ctx).If(absent).Then(ops...).Commit()
		if err != nil {
			return etcdError("import "+key, err)
		}
		if !resp.Succeeded {
			return reason.New(reason.Conflict, "%s already exists in etcd under %s; import never overwrites a document", key, s.prefix)
		}
		ops, size = ops[:0], 0
		return nil
	}
	add := func(k string, v []byte) error {
		n := len(k) + len(v) + 64
		if n+txnOverhead > s.opts.MaxRequestBytes {
			return reason.New(reason.InvalidInput, "%s: etcd key %s would be %d bytes, over etcd's request limit of %d bytes (raise --max-request-bytes and the store's max-request-bytes)", key, k, n, s.opts.MaxRequestBytes)
		}
		if len(ops) >= importBatch || size+n+txnOverhead > s.opts.MaxRequestBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		ops = append(ops, clientv3.OpPut(k, string(v)))
		size += n
		return nil
	}
	if ok, err := s.Has(ctx, key); err != nil {
		return err
	} else if ok {
		return reason.New(reason.Conflict, "%s already exists in etcd under %s; import never overwrites a document", key, s.prefix)
	}
	for i, r := range recs {
		if err := add(s.journalKey(key, r.Rev), lines[i]); err != nil {
			return err
		}
	}
	if err := add(dk, dv); err != nil {
		return err
	}
	return flush()
}
