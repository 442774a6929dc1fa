package etcd_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
	"github.com/custodian-dev/custodian/store/storetest"
)

const key = ".asdd/state/manifest.json"

// stores returns n Stores on one prefix, each with its own etcd client, as
// n processes on n machines would be.
func stores(t *testing.T, n int) []*etcd.Store {
	t.Helper()
	prefix := etcdtest.Prefix(t)
	out := make([]*etcd.Store, n)
	for i := range out {
		out[i] = open(t, etcd.Options{Prefix: prefix})
	}
	t.Cleanup(func() { storetest.VerifyAll(t, out[0]) })
	return out
}

func set(name string, value any) store.UpdateFunc {
	return func(cur store.Document) (store.Change, error) {
		m := map[string]any{}
		if cur.Value != nil {
			if err := json.Unmarshal(cur.Value, &m); err != nil {
				return store.Change{}, err
			}
		}
		m[name] = value
		b, err := json.Marshal(m)
		return store.Change{Value: b, Actor: "tester", Reason: "set " + name}, err
	}
}

func fields(t *testing.T, doc store.Document) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(doc.Value, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Several clients (as on several machines) write one document at once:
// every acknowledged update is in the final value, revisions are
// contiguous, and every client's watcher sees the same sequence.
func TestConcurrentClients(t *testing.T) {
	ss := stores(t, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := ss[0].Update(ctx, key, set("init", true), store.Create()); err != nil {
		t.Fatal(err)
	}
	perStore, goroutines := testenv.Rounds(8, 25), 2
	if testing.Short() {
		perStore = 8
	}
	total := uint64(1 + len(ss)*perStore*goroutines)
	seen := make([][]string, len(ss))
	var wwg sync.WaitGroup
	for i, s := range ss {
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for c, err := range s.Watch(ctx, key, 0) {
				if err != nil {
					t.Error(err)
					return
				}
				seen[i] = append(seen[i], fmt.Sprintf("%d:%s", c.Rev, c.Hash))
				if c.Rev == total {
					return
				}
			}
		}()
	}
	var wg sync.WaitGroup
	acked := make(chan string, total)
	for i, s := range ss {
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range perStore {
					f := fmt.Sprintf("c%d-g%d-%d", i, g, n)
					res, err := s.Update(ctx, key, set(f, n))
					if err != nil {
						t.Error(err)
						return
					}
					if res.Changed {
						acked <- f
					}
				}
			}()
		}
	}
	wg.Wait()
	close(acked)
	doc, err := ss[3].Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	m := fields(t, doc)
	for f := range acked {
		if _, ok := m[f]; !ok {
			t.Errorf("acknowledged update %s is lost", f)
		}
	}
	if doc.Revision != total {
		t.Fatalf("revision %d, want %d", doc.Revision, total)
	}
	wwg.Wait()
	for i := range seen {
		if uint64(len(seen[i])) != total || strings.Join(seen[i], ",") != strings.Join(seen[0], ",") {
			t.Fatalf("watcher %d saw %d commits, differing from watcher 0 (%d)", i, len(seen[i]), len(seen[0]))
		}
	}
}

// A function that rejects, or changes nothing, against a cached copy that
// another process made stale is re-run on the latest value first.
func TestStaleCacheDoesNotDecide(t *testing.T) {
	ss := stores(t, 2)
	a, b := ss[0], ss[1]
	ctx := context.Background()
	if _, err := a.Update(ctx, key, set("x", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, key, set("ready", true)); err != nil {
		t.Fatal(err)
	}
	needReady := func(cur store.Document) (store.Change, error) {
		var m map[string]any
		if err := json.Unmarshal(cur.Value, &m); err != nil {
			return store.Change{}, err
		}
		if m["ready"] != true {
			return store.Change{}, reason.New(reason.InvalidTransition, "not ready at revision %d", cur.Revision)
		}
		return set("go", true)(cur)
	}
	res, err := a.Update(ctx, key, needReady)
	if err != nil {
		t.Fatalf("rejected on a stale copy: %v", err)
	}
	if res.Revision != 3 {
		t.Fatalf("committed at revision %d, want 3", res.Revision)
	}
	// IfRevision against a stale cache is decided on the latest revision.
	if _, err := b.Update(ctx, key, set("y", 2), store.IfRevision(3)); err != nil {
		t.Fatalf("IfRevision(3) at revision 3: %v", err)
	}
	// No change against a stale cache is confirmed on the latest value.
	res, err = a.Update(ctx, key, set("y", 2))
	if err != nil || res.Changed || res.Revision != 4 {
		t.Fatalf("unchanged update: %+v %v", res, err)
	}
}

// The model of one document for porcupine: its revision and a counter.
type regState struct {
	rev uint64
	v   int
}

type regIn struct {
	op string // get, incr, put
	x  int
}

type regOut struct {
	rev     uint64
	v       int
	changed bool
}

var regModel = porcupine.Model{
	Init: func() any { return regState{} },
	Step: func(st, in, out any) (bool, any) {
		s, i, o := st.(regState), in.(regIn), out.(regOut)
		switch i.op {
		case "get":
			return o.rev == s.rev && o.v == s.v, s
		case "incr":
			n := regState{s.rev + 1, s.v + 1}
			return o.changed && o.rev == n.rev && o.v == n.v, n
		case "put":
			if i.x == s.v && s.rev > 0 {
				return !o.changed && o.rev == s.rev && o.v == s.v, s
			}
			n := regState{s.rev + 1, i.x}
			return o.changed && o.rev == n.rev && o.v == n.v, n
		}
		return false, s
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(regIn), out.(regOut)
		return fmt.Sprintf("%s(%d) -> rev %d v %d changed %v", i.op, i.x, o.rev, o.v, o.changed)
	},
}

func counterOf(t *testing.T, doc store.Document) int {
	var m struct{ V int }
	if err := json.Unmarshal(doc.Value, &m); err != nil {
		t.Error(err)
	}
	return m.V
}

// A history of reads, increments and blind writes from three clients, two
// goroutines each, is linearizable (porcupine).
func TestLinearizable(t *testing.T) {
	ss := stores(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := ss[0].Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"v":0}`)}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	opsPerClient := testenv.Rounds(20, 40)
	if testing.Short() {
		opsPerClient = 20
	}
	start := time.Now()
	var mu sync.Mutex
	ops := []porcupine.Operation{{ClientId: 0, Input: regIn{op: "put", x: 0}, Call: 0, Output: regOut{1, 0, true}, Return: 1}}
	var wg sync.WaitGroup
	for ci, s := range ss {
		for g := range 2 {
			id := 1 + ci*2 + g
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range opsPerClient {
					in := regIn{op: []string{"get", "incr", "put"}[(n+id)%3], x: (n * id) % 4}
					call := time.Since(start).Nanoseconds()
					var out regOut
					switch in.op {
					case "get":
						doc, err := s.Get(ctx, key)
						if err != nil {
							t.Error(err)
							return
						}
						out = regOut{rev: doc.Revision, v: counterOf(t, doc)}
					default:
						res, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
							v := in.x
							if in.op == "incr" {
								v = counterOf(t, cur) + 1
							}
							return store.Change{Value: fmt.Appendf(nil, `{"v":%d}`, v), Actor: in.op}, nil
						})
						if err != nil {
							t.Error(err)
							return
						}
						out = regOut{rev: res.Revision, v: counterOf(t, res.Document), changed: res.Changed}
					}
					ret := time.Since(start).Nanoseconds()
					mu.Lock()
					ops = append(ops, porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	res, _ := porcupine.CheckOperationsVerbose(regModel, ops, 30*time.Second)
	if res != porcupine.Ok {
		t.Fatalf("history of %d operations is %s", len(ops), res)
	}
	t.Logf("%d operations, linearizable", len(ops))
}

// A commit that would exceed etcd's request limit is refused up front with
// INVALID_INPUT; one that etcd itself refuses (the option set above the
// server's real limit) is INVALID_INPUT too; neither changes anything.
func TestRequestSizeLimit(t *testing.T) {
	ctx := context.Background()
	big := func(n int) store.UpdateFunc {
		return func(store.Document) (store.Change, error) {
			return store.Change{Value: fmt.Appendf(nil, `{"pad":"%s"}`, strings.Repeat("x", n))}, nil
		}
	}
	s := open(t, etcd.Options{})
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	// 600 KB of value is ~1.2 MB with its first journal record: fits.
	if _, err := s.Update(ctx, key, big(600<<10)); err != nil {
		t.Fatalf("600 KB document: %v", err)
	}
	_, err := s.Update(ctx, key, big(1<<20))
	if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "request limit of 1572864 bytes") {
		t.Fatalf("1 MB document: got %v, want INVALID_INPUT naming the limit", err)
	}
	// A store told the server takes more than it does: etcd refuses.
	loose := open(t, etcd.Options{Prefix: s.Prefix(), MaxRequestBytes: 8 << 20})
	_, err = loose.Update(ctx, key, big(900<<10))
	if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("server-refused commit: got %v, want INVALID_INPUT", err)
	}
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != 2 {
		t.Fatalf("after refusals: revision %d, %v", doc.Revision, err)
	}
	storetest.VerifyAll(t, s)
}

// Tampering with a record in etcd is caught by Verify, History and Watch.
func TestTamperedJournal(t *testing.T) {
	s := open(t, etcd.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := s.Update(ctx, key, set("n", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	jk := s.Prefix() + "journal/" + key + "//00000000000000000002"
	resp, err := s.Client().Get(ctx, jk)
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("journal key %s: %v", jk, err)
	}
	forged := strings.Replace(string(resp.Kvs[0].Value), `"actor":"tester"`, `"actor":"mallory"`, 1)
	if _, err := s.Client().Put(ctx, jk, forged); err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, key); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("Verify: got %v, want CORRUPT_STATE", err)
	}
	if _, err := s.History(ctx, key, 0, 0); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("History: got %v, want CORRUPT_STATE", err)
	}
	for _, err := range s.Watch(ctx, key, 0) {
		if reason.CodeOf(err) != reason.CorruptState {
			t.Fatalf("Watch: got %v, want CORRUPT_STATE", err)
		}
		break
	}
	// A stray record where the next commit goes is refused, not overwritten.
	if _, err := s.Client().Put(ctx, s.Prefix()+"journal/"+key+"//00000000000000000004", "{}"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, key, set("n", 9)); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("commit over a stray record: got %v, want CORRUPT_STATE", err)
	}
}

// Watch does not depend on etcd's MVCC history: after a physical
// compaction of every older etcd revision it still replays the journal
// (which is current keys) and then follows new commits, with no gap and no
// repeat.
func TestWatchAfterCompaction(t *testing.T) {
	s := open(t, etcd.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		if _, err := s.Update(ctx, key, set("n", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := s.Client().Get(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client().Compact(ctx, resp.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}
	var revs []uint64
	for c, err := range s.Watch(ctx, key, 1) {
		if err != nil {
			t.Fatal(err)
		}
		revs = append(revs, c.Rev)
		if c.Rev == 3 {
			if _, err := s.Update(ctx, key, set("n", 7)); err != nil {
				t.Fatal(err)
			}
		}
		if c.Rev == 4 {
			break
		}
	}
	if fmt.Sprint(revs) != "[2 3 4]" {
		t.Fatalf("watch delivered %v, want [2 3 4]", revs)
	}
}

func TestLocks(t *testing.T) {
	s := open(t, etcd.Options{})
	ctx := context.Background()
	l, err := s.Acquire(ctx, "SLICE-001", "spec-agent", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Acquire(ctx, "SLICE-001", "design-agent", time.Minute)
	if e, ok := reason.As(err); !ok || e.Code != reason.SliceLocked || e.Details["holder"] != "spec-agent" {
		t.Fatalf("second holder: got %v, want SLICE_LOCKED naming spec-agent", err)
	}
	if err := l.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	// The same holder takes its own lock over (a restarted agent).
	l2, err := s.Acquire(ctx, "SLICE-001", "spec-agent", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody renews: the lease expires and the lock frees itself.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, held, err := s.LockHolder(ctx, "SLICE-001")
		if err != nil {
			t.Fatal(err)
		}
		if !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an expired lease still holds the lock after 10s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := l2.Renew(ctx); reason.CodeOf(err) != reason.Conflict {
		t.Fatalf("renewing an expired lock: got %v, want CONFLICT", err)
	}
	l3, err := s.Acquire(ctx, "SLICE-001", "design-agent", time.Minute)
	if err != nil {
		t.Fatalf("lock not free after expiry: %v", err)
	}
	if info, held, _ := s.LockHolder(ctx, "SLICE-001"); !held || info.Holder != "design-agent" {
		t.Fatalf("holder %+v %v", info, held)
	}
	if err := l3.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, held, _ := s.LockHolder(ctx, "SLICE-001"); held {
		t.Fatal("released lock still held")
	}
	if _, err := s.Acquire(ctx, "a/b", "x", time.Second); reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("bad lock name: %v", err)
	}
}

func TestHeartbeats(t *testing.T) {
	s := open(t, etcd.Options{})
	ctx := context.Background()
	if err := s.Beat(ctx, "spec-agent", json.RawMessage(`{"slice":"SLICE-001","status":"ACTIVE"}`), time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Beat(ctx, "design-agent", nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	beats, err := s.Beats(ctx)
	if err != nil || len(beats) != 2 || beats[1].Name != "spec-agent" || !strings.Contains(string(beats[1].Data), "SLICE-001") {
		t.Fatalf("beats %+v %v", beats, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		beats, err := s.Beats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(beats) == 1 && beats[0].Name == "design-agent" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("silent agent's heartbeat still there after 10s: %+v", beats)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := s.Beat(ctx, "x", json.RawMessage(`{`), time.Second); reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("bad heartbeat data: %v", err)
	}
}

// Import copies records verbatim and refuses to overwrite or to take a
// broken journal.
func TestImport(t *testing.T) {
	src := open(t, etcd.Options{})
	ctx := context.Background()
	for i := range 250 { // more than one import transaction
		if _, err := src.Update(ctx, key, set(fmt.Sprint("f", i%7), i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := src.History(ctx, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := src.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	dst := open(t, etcd.Options{})
	if err := dst.Import(ctx, key, recs, doc.Value); err != nil {
		t.Fatal(err)
	}
	if err := dst.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
	got, err := dst.History(ctx, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if got[i].Hash != recs[i].Hash {
			t.Fatalf("record %d differs after import", i+1)
		}
	}
	if err := dst.Import(ctx, key, recs, doc.Value); reason.CodeOf(err) != reason.Conflict {
		t.Fatalf("import over an existing document: got %v, want CONFLICT", err)
	}
	// The imported document takes new commits on top of its chain.
	if res, err := dst.Update(ctx, key, set("after", true)); err != nil || res.Revision != 251 || res.Record.Prev != recs[249].Hash {
		t.Fatalf("commit after import: %+v %v", res, err)
	}
	bad := append([]store.Record(nil), recs...)
	bad[10].Reason = "rewritten"
	if err := dst.Import(ctx, "other.json", bad, doc.Value); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("import of a tampered journal: got %v, want CORRUPT_STATE", err)
	}
	if err := dst.Import(ctx, "other.json", recs[:100], doc.Value); reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("import of a value its journal does not produce: got %v, want CORRUPT_STATE", err)
	}
	if ok, err := dst.Has(ctx, "other.json"); ok || err != nil {
		t.Fatalf("refused import left a document: %v %v", ok, err)
	}
}

func TestClosed(t *testing.T) {
	s := open(t, etcd.Options{})
	if _, err := s.Update(context.Background(), key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		var last error
		for _, err := range s.Watch(context.Background(), key, 0) {
			last = err
		}
		ended <- last
	}()
	time.Sleep(100 * time.Millisecond)
	s.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("watch ended on Close without saying why")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch still running 10s after Close")
	}
	if _, err := s.Get(context.Background(), key); err == nil {
		t.Fatal("Get after Close succeeded")
	}
	if _, err := s.Keys(context.Background()); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("Keys after Close: %v", err)
	}
}

// Across a restart of the etcd server (its own one, not the shared one):
// acknowledged commits are all there (fsynced raft log), writers carry on
// once it is back, and a watch that was running delivers every commit once,
// in order.
func TestServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server of its own")
	}
	srv, err := etcdtest.Start(t.TempDir(), etcdtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := srv.NewClient()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := etcd.New(c, etcd.Options{Prefix: "/restart/"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range 5 {
		if _, err := s.Update(ctx, key, set("n", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan uint64, 64)
	go func() {
		for c, err := range s.Watch(ctx, key, 0) {
			if err != nil {
				t.Error(err)
				return
			}
			got <- c.Rev
		}
	}()
	for want := uint64(1); want <= 5; want++ {
		if r := <-got; r != want {
			t.Fatalf("watch delivered %d, want %d", r, want)
		}
	}
	t0 := time.Now()
	if err := srv.Restart(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted in %v", time.Since(t0))
	for i := 5; i < 10; i++ {
		if _, err := s.Update(ctx, key, set("n", i)); err != nil {
			t.Fatalf("update after restart: %v", err)
		}
	}
	t.Logf("first commits after restart at %v", time.Since(t0))
	for want := uint64(6); want <= 10; want++ {
		select {
		case r := <-got:
			if r != want {
				t.Fatalf("after restart, watch delivered %d, want %d", r, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("after restart, watch delivered nothing for revision %d", want)
		}
	}
	if err := s.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
}

// Concurrent Updates through one Store are group-committed; each function
// still sees the changes of those serialised before it: of 50 claims on 20
// seats exactly 20 succeed, with distinct revisions, and the rest are
// rejected. A small request limit splits batches without refusing any
// commit that fits alone.
func TestGroupCommit(t *testing.T) {
	s := open(t, etcd.Options{MaxRequestBytes: 64 << 10})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"taken":0}`)}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	const seats, claims = 20, 50
	pad := strings.Repeat("p", 6<<10) // ~12 KB per record with its patch: batches split
	var wg sync.WaitGroup
	var mu sync.Mutex
	revs := map[uint64]bool{}
	rejected := 0
	for i := range claims {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
				var m struct {
					Taken int `json:"taken"`
				}
				if err := json.Unmarshal(cur.Value, &m); err != nil {
					return store.Change{}, err
				}
				if m.Taken >= seats {
					return store.Change{}, reason.New(reason.InvalidTransition, "all %d seats taken", seats)
				}
				return store.Change{Value: fmt.Appendf(nil, `{"taken":%d,"last":"c%d","pad":"%s%d"}`, m.Taken+1, i, pad, i), Actor: fmt.Sprint("c", i)}, nil
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case reason.CodeOf(err) == reason.InvalidTransition:
				rejected++
			case err != nil:
				t.Error(err)
			case !res.Changed || revs[res.Revision]:
				t.Errorf("claim %d: %+v", i, res)
			default:
				revs[res.Revision] = true
			}
		}()
	}
	wg.Wait()
	if len(revs) != seats || rejected != claims-seats {
		t.Fatalf("%d claims committed, %d rejected; want %d and %d", len(revs), rejected, seats, claims-seats)
	}
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != seats+1 || !strings.Contains(string(doc.Value), fmt.Sprintf(`"taken": %d`, seats)) {
		t.Fatalf("final %s at %d: %v", doc.Value[:min(len(doc.Value), 40)], doc.Revision, err)
	}
	storetest.VerifyAll(t, s)
}

// With etcd unreachable, an Update gives up when its context does.
func TestUnreachable(t *testing.T) {
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s := etcd.New(c, etcd.Options{Prefix: "/nowhere/"})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.Update(ctx, key, set("a", 1), store.Create())
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the context's deadline", err)
	}
	// (without the context it would retry for ever: the bound leaves room
	// for a busy machine)
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("gave up after %v", d)
	}
	if _, err := etcd.Open(etcd.Config{Endpoints: []string{"127.0.0.1:1"}, Prefix: "/x/", DialTimeout: 300 * time.Millisecond}, etcd.Options{}); err == nil {
		t.Fatal("Open of an unreachable cluster succeeded")
	}
}

// History, GetAt, Verify, Keys and Watch read in pages; with pages of 7 a
// journal of 30 records and 12 documents take several.
func TestPaging(t *testing.T) {
	defer etcd.SetPageSize(7)()
	s := open(t, etcd.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 30 {
		if _, err := s.Update(ctx, key, set("n", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 11 {
		if _, err := s.Update(ctx, fmt.Sprintf("d/%02d.json", i), set("n", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.History(ctx, key, 0, 0)
	if err != nil || len(recs) != 30 {
		t.Fatalf("history: %d records, %v", len(recs), err)
	}
	part, err := s.History(ctx, key, 5, 20)
	if err != nil || len(part) != 16 || part[0].Rev != 5 || part[15].Rev != 20 {
		t.Fatalf("history 5..20: %d records, %v", len(part), err)
	}
	doc, err := s.GetAt(ctx, key, 23)
	if err != nil || fields(t, doc)["n"] != 22.0 {
		t.Fatalf("GetAt(23): %s %v", doc.Value, err)
	}
	keys, err := s.Keys(ctx)
	if err != nil || len(keys) != 12 || keys[0] != ".asdd/state/manifest.json" || keys[11] != "d/10.json" {
		t.Fatalf("keys %v %v", keys, err)
	}
	n := 0
	for c, err := range s.Watch(ctx, key, 3) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if c.Rev == 30 {
			break
		}
	}
	if n != 27 {
		t.Fatalf("watch from 3 delivered %d records, want 27", n)
	}
	storetest.VerifyAll(t, s)
}

// A function that panics panics in its caller, as with a store without
// batching, and does not wedge the document for the others.
func TestPanickingFunction(t *testing.T) {
	s := open(t, etcd.Options{})
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want boom", p)
			}
		}()
		_, _ = s.Update(ctx, key, func(store.Document) (store.Change, error) { panic("boom") })
		t.Fatal("Update returned after its function panicked")
	}()
	res, err := s.Update(ctx, key, set("b", 2))
	if err != nil || res.Revision != 2 {
		t.Fatalf("after a panic: %+v %v", res, err)
	}
}
