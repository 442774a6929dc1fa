package etcd

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// txnOverhead bounds what a commit transaction adds to its keys and values
// on the wire (compares, field tags, raft entry framing).
const txnOverhead = 512

// Update runs fn against the latest value and commits what it returns with
// one etcd transaction (see the package documentation).
func (s *Store) Update(ctx context.Context, key string, fn store.UpdateFunc, opts ...store.UpdateOption) (store.Result, error) {
	o := store.ApplyOptions(opts)
	d, err := s.doc(key)
	if err != nil {
		return store.Result{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()

	fresh := false
	refresh := func() error {
		st, _, err := s.read(ctx, key)
		if err != nil {
			d.known = false
			return err
		}
		d.set(st)
		fresh = true
		return nil
	}
	if !d.known {
		if err := refresh(); err != nil {
			return store.Result{}, err
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt >= store.MaxRetries {
			return store.Result{}, reason.New(reason.Conflict, "%s: gave up after %d attempts, each beaten by another writer", key, attempt)
		}
		if err := ctx.Err(); err != nil {
			return store.Result{}, fmt.Errorf("update %s: %w", key, err)
		}
		res, commit, err := s.propose(d, fn, o)
		if commit == nil {
			// An outcome with no commit is only final when decided on a
			// fresh read: a cached copy may be behind another process.
			if !fresh {
				if err := refresh(); err != nil {
					return store.Result{}, err
				}
				continue
			}
			return res, err
		}
		ok, err := s.commit(ctx, d, commit)
		if err != nil {
			return store.Result{}, err
		}
		if ok {
			d.state = commit.next
			d.tree, d.hasTree = commit.tree, true
			d.known = true
			return store.Result{Document: store.Document{Key: key, Revision: commit.next.rev, Value: commit.next.value}, Changed: true, Record: commit.rec}, nil
		}
		fresh = true
		if attempt >= 1 {
			// Several processes keep racing for this document: back off a
			// random, growing while, then read the document again (the
			// copy the failed transaction returned is stale by then).
			sleep(ctx, time.Duration(rand.Int64N(int64(min(time.Millisecond<<min(attempt, 5), 32*time.Millisecond)))+1))
			if err := refresh(); err != nil {
				return store.Result{}, err
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (d *doc) set(st docState) {
	d.state, d.known = st, true
	d.tree, d.hasTree = nil, false
}

// pending is a commit ready to send.
type pending struct {
	cmp  []clientv3.Cmp
	ops  []clientv3.Op // the Then branch
	next docState      // the state after the commit (modRev set on success)
	tree any
	rec  *store.Record
}

// propose runs fn on the known state. It returns either a result with no
// commit (a rejection, an empty change, bad input) or the commit to send.
func (s *Store) propose(d *doc, fn store.UpdateFunc, o store.UpdateOptions) (store.Result, *pending, error) {
	st := d.state
	if o.IfRevision != nil && *o.IfRevision != st.rev {
		return store.Result{}, nil, reason.New(reason.Conflict, "%s is at revision %d, not %d", d.key, st.rev, *o.IfRevision)
	}
	if st.value == nil && !o.Create {
		return store.Result{}, nil, notFound(d.key)
	}
	cur := store.Document{Key: d.key, Revision: st.rev, Value: bytes.Clone(st.value)}
	ch, err := fn(cur)
	if err != nil {
		return store.Result{}, nil, err
	}
	unchanged := store.Result{Document: store.Document{Key: d.key, Revision: st.rev, Value: st.value}}
	if ch.Value == nil {
		return unchanged, nil, nil
	}
	nv, err := store.ParseValue(ch.Value, s.opts.Limits)
	if err != nil {
		return store.Result{}, nil, err
	}
	if st.value != nil && nv.Sum == st.sum {
		return unchanged, nil, nil
	}
	var from any
	if st.value != nil {
		if !d.hasTree {
			v, err := store.ParseValue(st.value, store.Limits{MaxBytes: len(st.value) + 1, MaxDepth: 1 << 20})
			if err != nil {
				return store.Result{}, nil, reason.New(reason.CorruptState, "stored value of %s: %v", d.key, err)
			}
			d.tree, d.hasTree = v.Tree, true
		}
		from = d.tree
	}
	patch, err := store.DiffTrees(from, nv.Tree)
	if err != nil {
		return store.Result{}, nil, err
	}
	rec := &store.Record{Rev: st.rev + 1, Time: s.opts.Now().UTC(), Actor: ch.Actor, Reason: ch.Reason, Patch: patch, Events: ch.Events, Sum: nv.Sum}
	line, err := rec.Seal(st.hash)
	if err != nil {
		return store.Result{}, nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	snap, err := store.Indent(bytes.TrimRight(nv.Raw, " \t\r\n"))
	if err != nil {
		return store.Result{}, nil, reason.New(reason.InvalidInput, "%v", err)
	}
	next := docState{rev: rec.Rev, hash: rec.Hash, sum: nv.Sum, value: snap}
	dv, err := encodeDoc(header{Rev: next.rev, Hash: next.hash, Sum: next.sum}, snap)
	if err != nil {
		return store.Result{}, nil, err
	}
	dk, jk := s.docKey(d.key), s.journalKey(d.key, rec.Rev)
	if size := len(dk) + len(dv) + len(jk) + len(line) + txnOverhead; size > s.opts.MaxRequestBytes {
		return store.Result{}, nil, reason.New(reason.InvalidInput,
			"%s: this commit would send etcd %d bytes (value %d bytes, journal record %d bytes), over its request limit of %d bytes: make the document smaller, or raise etcd's --max-request-bytes and the store's max-request-bytes together",
			d.key, size, len(snap), len(line), s.opts.MaxRequestBytes)
	}
	return store.Result{}, &pending{
		cmp: []clientv3.Cmp{
			clientv3.Compare(clientv3.ModRevision(dk), "=", st.modRev),
			clientv3.Compare(clientv3.CreateRevision(jk), "=", 0),
		},
		ops:  []clientv3.Op{clientv3.OpPut(dk, string(dv)), clientv3.OpPut(jk, string(line))},
		next: next, tree: nv.Tree, rec: rec,
	}, nil
}

// commit sends the transaction. It returns false, with d updated to the
// current state, when another writer got there first.
func (s *Store) commit(ctx context.Context, d *doc, p *pending) (bool, error) {
	dk := s.docKey(d.key)
	resp, err := s.c.Txn(ctx).If(p.cmp...).Then(p.ops...).Else(clientv3.OpGet(dk)).Commit()
	if err != nil {
		// The outcome is unknown (the request may have been applied):
		// forget what we know and let the caller decide.
		d.known = false
		return false, etcdError("commit "+d.key, err)
	}
	if resp.Succeeded {
		p.next.modRev = resp.Header.Revision
		return true, nil
	}
	prevMod := d.state.modRev
	st, err := stateOf(d.key, resp.Responses[0].GetResponseRange().Kvs)
	if err != nil {
		d.known = false
		return false, err
	}
	if st.modRev == prevMod {
		// The document did not move, so the journal key was taken: a record
		// exists that the document does not account for.
		d.known = false
		return false, reason.New(reason.CorruptState, "%s: journal record %d exists in etcd but the document is at revision %d (written behind the custodian's back, or an interrupted import)", d.key, st.rev+1, st.rev)
	}
	d.set(st)
	return false, nil
}
