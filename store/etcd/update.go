package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

const (
	// txnOverhead bounds what a commit transaction adds to its keys and
	// values on the wire (compares, field tags, raft entry framing).
	txnOverhead = 512
	// perRecordOverhead is the same for each journal record of a batch.
	perRecordOverhead = 96
	// maxBatch bounds the records of one transaction (etcd's default
	// --max-txn-ops is 128).
	maxBatch = 100
)

// request is one Update call waiting for its outcome.
type request struct {
	key  string
	ctx  context.Context
	fn   store.UpdateFunc
	o    store.UpdateOptions
	done chan struct{}
	res  store.Result
	err  error
	// panicked holds what fn panicked with: the batch goes on without
	// the request, and Update panics with it in the caller's goroutine.
	panicked any
}

// call runs the request's function, turning a panic into an error for the
// batch and a note for the caller.
func (r *request) call(cur store.Document) (ch store.Change, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = p
			err = fmt.Errorf("update function of %s panicked: %v", r.key, p)
		}
	}()
	return r.fn(cur)
}

func (r *request) finish(res store.Result, err error) {
	if err != nil && r.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The batch's etcd call ended because this caller gave up: say so
		// in the caller's terms.
		err = fmt.Errorf("update %s: %w", r.key, r.ctx.Err())
	}
	r.res, r.err = res, err
	close(r.done)
}

// Update runs fn against the latest value and commits what it returns (see
// the package documentation). Concurrent Updates of one document through
// one Store are group-committed: the functions run one after another on the
// evolving value and their records go to etcd in one transaction.
func (s *Store) Update(ctx context.Context, key string, fn store.UpdateFunc, opts ...store.UpdateOption) (store.Result, error) {
	d, err := s.doc(key)
	if err != nil {
		return store.Result{}, err
	}
	req := &request{key: key, ctx: ctx, fn: fn, o: store.ApplyOptions(opts), done: make(chan struct{})}
	d.qmu.Lock()
	d.queue = append(d.queue, req)
	lead := !d.leading
	d.leading = true
	d.qmu.Unlock()
	if lead {
		s.lead(d)
	}
	<-req.done
	if req.panicked != nil {
		panic(req.panicked)
	}
	return req.res, req.err
}

// lead commits one batch of the queue, then hands the lead to a new
// goroutine if more requests arrived meanwhile.
func (s *Store) lead(d *doc) {
	d.qmu.Lock()
	batch := d.queue
	d.queue = nil
	d.qmu.Unlock()
	rest := s.runBatch(d, batch)
	d.qmu.Lock()
	d.queue = append(rest, d.queue...)
	more := len(d.queue) > 0
	d.leading = more
	d.qmu.Unlock()
	if more {
		go s.lead(d)
	}
}

// outcome is what one request of a batch came to, pending the batch's
// commit.
type outcome struct {
	req *request
	res store.Result
	err error
}

// runBatch decides and commits a batch. It returns the requests it left for
// the next batch (those that did not fit in one transaction).
func (s *Store) runBatch(d *doc, batch []*request) []*request {
	d.mu.Lock()
	defer d.mu.Unlock()
	fail := func(reqs []*request, err error) {
		for _, r := range reqs {
			r.finish(store.Result{}, err)
		}
	}
	// etcd calls of the batch end when every caller's context is done (a
	// cancelled caller among others is answered at the next attempt).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waiting atomic.Int64
	waiting.Store(int64(len(batch)))
	for _, r := range batch {
		stop := context.AfterFunc(r.ctx, func() {
			if waiting.Add(-1) == 0 {
				cancel()
			}
		})
		defer stop()
	}
	fresh := false
	refresh := func() error {
		st, _, err := s.read(ctx, d.key)
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
			fail(batch, err)
			return nil
		}
	}
	for attempt := 0; ; attempt++ {
		live := batch[:0:0]
		for _, r := range batch {
			if err := r.ctx.Err(); err != nil {
				r.finish(store.Result{}, fmt.Errorf("update %s: %w", d.key, err))
				continue
			}
			live = append(live, r)
		}
		batch = live
		if len(batch) == 0 {
			return nil
		}
		if attempt >= store.MaxRetries {
			fail(batch, reason.New(reason.Conflict, "%s: gave up after %d attempts, each beaten by another writer", d.key, attempt))
			return nil
		}
		outs, p, rest := s.decide(d, batch)
		if p == nil {
			// No commit at all: only final when decided on a fresh read
			// (a cached copy may be behind another process).
			if !fresh {
				if err := refresh(); err != nil {
					fail(batch, err)
					return nil
				}
				continue
			}
			for _, o := range outs {
				o.req.finish(o.res, o.err)
			}
			return rest
		}
		ok, err := s.commit(ctx, d, p)
		if err != nil {
			for _, o := range outs {
				o.req.finish(store.Result{}, err)
			}
			return rest
		}
		if ok {
			d.state = p.next
			d.tree, d.hasTree = p.tree, true
			d.known = true
			for _, o := range outs {
				o.req.finish(o.res, o.err)
			}
			return rest
		}
		fresh = true
		if attempt >= 1 {
			// Several processes keep racing for this document: back off a
			// random, growing while, then read the document again (the
			// copy the failed transaction returned is stale by then).
			sleep(ctx, time.Duration(rand.Int64N(int64(min(time.Millisecond<<min(attempt, 5), 32*time.Millisecond)))+1))
			if err := refresh(); err != nil {
				fail(batch, err)
				return nil
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
}

// work is the evolving state of a document while a batch is decided.
type work struct {
	st   docState
	tree any
}

// decide runs the batch's functions one after another on the known state,
// each seeing the changes of those before it. It returns every request's
// outcome, the transaction that commits the changes (nil when there are
// none), and the requests that did not fit in it.
func (s *Store) decide(d *doc, batch []*request) ([]outcome, *pending, []*request) {
	w := work{st: d.state}
	if w.st.value != nil {
		if !d.hasTree {
			v, err := jsonval.ParseValue(w.st.value, store.Limits{MaxBytes: len(w.st.value) + 1, MaxDepth: 1 << 20})
			if err != nil {
				err = reason.New(reason.CorruptState, "stored value of %s: %v", d.key, err)
				outs := make([]outcome, len(batch))
				for i, r := range batch {
					outs[i] = outcome{req: r, err: err}
				}
				return outs, nil, nil
			}
			d.tree, d.hasTree = v.Tree, true
		}
		w.tree = d.tree
	}
	dk := s.docKey(d.key)
	base := d.state.modRev
	var (
		outs  []outcome
		cmps  = []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(dk), "=", base)}
		puts  []clientv3.Op
		lines int // bytes of the journal puts so far
	)
	for i, r := range batch {
		if len(puts) >= maxBatch {
			return outs, s.pendingOf(dk, w, cmps, puts), batch[i:]
		}
		res, rec, line, next, err := s.step(d, w, r)
		if err != nil || rec == nil {
			outs = append(outs, outcome{req: r, res: res, err: err})
			continue
		}
		dv, err := encodeDoc(header{Rev: next.st.rev, Hash: next.st.hash, Sum: next.st.sum}, next.st.value)
		if err != nil {
			outs = append(outs, outcome{req: r, err: err})
			continue
		}
		jk := s.journalKey(d.key, rec.Rev)
		add := len(jk) + len(line) + perRecordOverhead
		if size := len(dk) + len(dv) + lines + add + txnOverhead; size > s.opts.MaxRequestBytes {
			if len(puts) > 0 {
				// Fine alone, too much with the others: next batch.
				return outs, s.pendingOf(dk, w, cmps, puts), batch[i:]
			}
			outs = append(outs, outcome{req: r, err: reason.New(reason.InvalidInput,
				"%s: this commit would send etcd %d bytes (value %d bytes, journal record %d bytes), over its request limit of %d bytes: make the document smaller, or raise etcd's --max-request-bytes and the store's max-request-bytes together",
				d.key, size, len(next.st.value), len(line), s.opts.MaxRequestBytes)})
			continue
		}
		cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(jk), "=", 0))
		puts = append(puts, clientv3.OpPut(jk, string(line)))
		lines += add
		w = next
		outs = append(outs, outcome{req: r, res: res})
	}
	return outs, s.pendingOf(dk, w, cmps, puts), nil
}

func (s *Store) pendingOf(dk string, w work, cmps []clientv3.Cmp, puts []clientv3.Op) *pending {
	if len(puts) == 0 {
		return nil
	}
	dv, _ := encodeDoc(header{Rev: w.st.rev, Hash: w.st.hash, Sum: w.st.sum}, w.st.value) // decide encoded it without error
	ops := append([]clientv3.Op{clientv3.OpPut(dk, string(dv))}, puts...)
	return &pending{cmp: cmps, ops: ops, next: w.st, tree: w.tree}
}

// step runs one request's function on w. It returns the result and, when
// the request commits, its record, the record's journal line and the state
// after it.
func (s *Store) step(d *doc, w work, r *request) (store.Result, *store.Record, []byte, work, error) {
	st := w.st
	if r.o.IfRevision != nil && *r.o.IfRevision != st.rev {
		return store.Result{}, nil, nil, w, reason.New(reason.Conflict, "%s is at revision %d, not %d", d.key, st.rev, *r.o.IfRevision)
	}
	if st.value == nil && !r.o.Create {
		return store.Result{}, nil, nil, w, notFound(d.key)
	}
	cur := store.Document{Key: d.key, Revision: st.rev, Value: bytes.Clone(st.value)}
	ch, err := r.call(cur)
	if err != nil {
		return store.Result{}, nil, nil, w, err
	}
	unchanged := store.Result{Document: store.Document{Key: d.key, Revision: st.rev, Value: bytes.Clone(st.value)}}
	if ch.Empty() {
		return unchanged, nil, nil, w, nil
	}
	if ch, err = ch.Resolve(st.value); err != nil {
		return store.Result{}, nil, nil, w, fmt.Errorf("%s: %w", d.key, err)
	}
	if ch.Empty() {
		return unchanged, nil, nil, w, nil // a patch "[]" on no document
	}
	value, stamped := store.StampRevision(ch.Value, st.rev+1)
	if stamped && st.value != nil {
		// A value that differs from the current one only by its revision
		// member (a rollback to the latest revision) changes nothing.
		if same, _ := store.StampRevision(ch.Value, st.rev); sumOf(same) == st.sum {
			return unchanged, nil, nil, w, nil
		}
	}
	nv, err := jsonval.ParseValue(value, s.opts.Limits)
	if err != nil {
		return store.Result{}, nil, nil, w, err
	}
	if st.value != nil && nv.Sum == st.sum {
		return unchanged, nil, nil, w, nil
	}
	var from any
	if st.value != nil {
		from = w.tree
	}
	patch, err := jsonval.DiffTrees(from, nv.Tree)
	if err != nil {
		return store.Result{}, nil, nil, w, err
	}
	rec := &store.Record{Rev: st.rev + 1, Time: s.opts.Now().UTC(), Actor: ch.Actor, Reason: ch.Reason, Patch: patch, Events: ch.Events, Sum: nv.Sum}
	line, err := rec.Seal(st.hash)
	if err != nil {
		return store.Result{}, nil, nil, w, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	snap, err := store.Indent(bytes.TrimRight(nv.Raw, " \t\r\n"))
	if err != nil {
		return store.Result{}, nil, nil, w, reason.New(reason.InvalidInput, "%v", err)
	}
	next := work{st: docState{rev: rec.Rev, hash: rec.Hash, sum: nv.Sum, value: snap}, tree: nv.Tree}
	res := store.Result{Document: store.Document{Key: d.key, Revision: rec.Rev, Value: bytes.Clone(snap)}, Changed: true, Record: rec}
	return res, rec, line, next, nil
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
		// The document did not move, so a journal key was taken: a record
		// exists that the document does not account for.
		d.known = false
		return false, reason.New(reason.CorruptState, "%s: a journal record after revision %d exists in etcd but the document is at revision %d (written behind the custodian's back, or an interrupted import)", d.key, st.rev, st.rev)
	}
	d.set(st)
	return false, nil
}

// sumOf is the canonical sum of v ("" when it does not parse).
func sumOf(v []byte) string {
	sum, err := store.SumOf(v)
	if err != nil {
		return ""
	}
	return sum
}
