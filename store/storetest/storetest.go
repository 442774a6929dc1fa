// Package storetest is the conformance suite of the store contract. Every
// backend runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return openMine(t) })
//	}
//
// Every test ends by verifying every document the store holds (hash chain
// intact, replay reproduces the snapshot), as bbolt's tests run its check.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Opener returns a fresh, empty store for one test. The same test may call
// it more than once only through Reopen.
type Opener func(t *testing.T) store.Store

// VerifyAll checks every document of s; tests call it on cleanup.
func VerifyAll(t testing.TB, s store.Store) {
	t.Helper()
	ctx := context.Background()
	keys, err := s.Keys(ctx)
	if err != nil {
		t.Errorf("verify: list keys: %v", err)
		return
	}
	for _, k := range keys {
		if err := s.Verify(ctx, k); err != nil {
			t.Errorf("verify %s: %v", k, err)
		}
	}
}

const key = "state/doc.json"

// set returns an UpdateFunc that sets field name to value in an object.
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
		if err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: b, Actor: "tester", Reason: "set " + name}, nil
	}
}

func decode(t testing.TB, b []byte) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("decode %q: %v", b, err)
	}
	return m
}

func wantCode(t testing.TB, err error, code reason.Code) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := reason.CodeOf(err); got != code {
		t.Fatalf("got %v (code %q), want code %s", err, got, code)
	}
}

// Run runs the whole suite.
func Run(t *testing.T, open Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"GetMissing", testGetMissing},
		{"CreateAndUpdate", testCreateAndUpdate},
		{"NoChangeCommitsNothing", testNoChange},
		{"RejectedFunctionCommitsNothing", testRejected},
		{"IfRevision", testIfRevision},
		{"HistoryAndGetAt", testHistoryAndGetAt},
		{"DiffAndRollback", testDiffAndRollback},
		{"HashChain", testHashChain},
		{"Events", testEvents},
		{"BadInput", testBadInput},
		{"BadKeys", testBadKeys},
		{"Keys", testKeys},
		{"ConcurrentWriters", testConcurrent},
		{"WatchReplaysAndFollows", testWatch},
		{"WatchUnderConcurrency", testWatchConcurrent},
		{"PatchChanges", testPatchChanges},
		{"PatchRefused", testPatchRefused},
		{"PatchConcurrentWriters", testPatchConcurrent},
		{"Model", testModel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() { VerifyAll(t, s) })
			tc.fn(t, s)
		})
	}
}

func testGetMissing(t *testing.T, s store.Store) {
	ctx := context.Background()
	_, err := s.Get(ctx, key)
	wantCode(t, err, reason.NotFound)
	_, err = s.Update(ctx, key, set("a", 1))
	wantCode(t, err, reason.NotFound)
	_, err = s.History(ctx, key, 0, 0)
	wantCode(t, err, reason.NotFound)
}

func testCreateAndUpdate(t *testing.T, s store.Store) {
	ctx := context.Background()
	res, err := s.Update(ctx, key, set("a", 1), store.Create())
	if err != nil {
		t.Fatal(err)
	}
	if !res.Changed || res.Revision != 1 || res.Record == nil || res.Record.Rev != 1 {
		t.Fatalf("first commit: %+v", res)
	}
	res, err = s.Update(ctx, key, set("b", "two"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 2 {
		t.Fatalf("second commit at revision %d, want 2", res.Revision)
	}
	doc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Revision != 2 {
		t.Fatalf("Get revision %d, want 2", doc.Revision)
	}
	if diff := cmp.Diff(map[string]any{"a": 1.0, "b": "two"}, decode(t, doc.Value)); diff != "" {
		t.Fatalf("value (-want +got):\n%s", diff)
	}
}

func testNoChange(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	res, err := s.Update(ctx, key, set("a", 1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed || res.Revision != 1 {
		t.Fatalf("identical value committed: %+v", res)
	}
	res, err = s.Update(ctx, key, func(store.Document) (store.Change, error) { return store.Change{}, nil })
	if err != nil || res.Changed {
		t.Fatalf("nil value: %+v, %v", res, err)
	}
}

func testRejected(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	rej := reason.New(reason.InvalidTransition, "no")
	_, err := s.Update(ctx, key, func(store.Document) (store.Change, error) { return store.Change{}, rej })
	if !errors.Is(err, rej) {
		t.Fatalf("got %v, want the function's error", err)
	}
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != 1 {
		t.Fatalf("after rejection: %+v %v", doc, err)
	}
}

func testIfRevision(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(ctx, key, set("a", 2), store.IfRevision(0))
	wantCode(t, err, reason.Conflict)
	if _, err := s.Update(ctx, key, set("a", 2), store.IfRevision(1)); err != nil {
		t.Fatal(err)
	}
}

func testHistoryAndGetAt(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		if _, err := s.Update(ctx, key, set("n", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.History(ctx, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("history has %d records, want 5", len(recs))
	}
	for i, r := range recs {
		if r.Rev != uint64(i+1) || r.Actor != "tester" || r.Reason != "set n" || r.Time.IsZero() {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	part, err := s.History(ctx, key, 2, 3)
	if err != nil || len(part) != 2 || part[0].Rev != 2 {
		t.Fatalf("History(2,3) = %v, %v", part, err)
	}
	for i := uint64(1); i <= 5; i++ {
		doc, err := s.GetAt(ctx, key, i)
		if err != nil {
			t.Fatal(err)
		}
		if got := decode(t, doc.Value)["n"]; got != float64(i) || doc.Revision != i {
			t.Fatalf("GetAt(%d) = %v (rev %d)", i, got, doc.Revision)
		}
	}
	_, err = s.GetAt(ctx, key, 6)
	wantCode(t, err, reason.NotFound)
}

func testDiffAndRollback(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, key, set("b", 2)); err != nil {
		t.Fatal(err)
	}
	patch, err := store.DiffRevisions(ctx, s, key, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	var ops []map[string]any
	if err := json.Unmarshal(patch, &ops); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]map[string]any{{"op": "add", "path": "/b", "value": 2.0}}, ops); diff != "" {
		t.Fatalf("diff (-want +got):\n%s", diff)
	}
	res, err := store.Rollback(ctx, s, key, 1, "tl", "undo b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 3 || !strings.Contains(res.Record.Reason, "undo b") {
		t.Fatalf("rollback: %+v", res)
	}
	if diff := cmp.Diff(map[string]any{"a": 1.0}, decode(t, res.Value)); diff != "" {
		t.Fatalf("after rollback (-want +got):\n%s", diff)
	}
	_, err = store.Rollback(ctx, s, key, 9, "tl", "nope", nil)
	wantCode(t, err, reason.NotFound)
}

func testHashChain(t *testing.T, s store.Store) {
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		if _, err := s.Update(ctx, key, set("i", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.History(ctx, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var prev *store.Record
	for i := range recs {
		if err := store.Chain(prev, recs[i]); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(recs[i].Hash, "sha256:") || !strings.HasPrefix(recs[i].Sum, "sha256:") {
			t.Fatalf("record %d hashes: %q %q", i, recs[i].Hash, recs[i].Sum)
		}
		prev = &recs[i]
	}
	if err := s.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
}

func testEvents(t *testing.T, s store.Store) {
	ctx := context.Background()
	ev := []store.Event{{Type: "slice.halted", Data: json.RawMessage(`{"slice":"S-1"}`)}}
	_, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"x":1}`), Actor: "a", Reason: "r", Events: ev}, nil
	}, store.Create())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.History(ctx, key, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || len(recs[0].Events) != 1 || recs[0].Events[0].Type != "slice.halted" {
		t.Fatalf("events not recorded: %+v", recs)
	}
}

func testBadInput(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	raw := func(v string) store.UpdateFunc {
		return func(store.Document) (store.Change, error) { return store.Change{Value: []byte(v)}, nil }
	}
	cases := map[string]string{
		"malformed":     `{"a":`,
		"two values":    `{} {}`,
		"too deep":      strings.Repeat("[", store.DefaultMaxDepth+1) + strings.Repeat("]", store.DefaultMaxDepth+1),
		"trailing junk": `{"a":1}x`,
		"null":          ` null `, // no document: it would not replay
	}
	for name, v := range cases {
		_, err := s.Update(ctx, key, raw(v))
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("%s: got %v, want INVALID_INPUT", name, err)
		}
	}
	big := make([]byte, store.DefaultMaxBytes+1)
	for i := range big {
		big[i] = ' '
	}
	big[0], big[len(big)-1] = '{', '}'
	_, err := s.Update(ctx, key, raw(string(big)))
	wantCode(t, err, reason.InvalidInput)
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != 1 {
		t.Fatalf("bad input changed the document: %+v %v", doc, err)
	}
}

func testBadKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	for _, k := range []string{"", "../x.json", "/etc/x.json", "a/../../b.json", "a/./b.json", "x.txt", "a//b.json", ".json"} {
		_, err := s.Update(ctx, k, set("a", 1), store.Create())
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("key %q: got %v, want INVALID_INPUT", k, err)
		}
		_, err = s.Get(ctx, k)
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("Get %q: got %v, want INVALID_INPUT", k, err)
		}
	}
}

func testKeys(t *testing.T, s store.Store) {
	ctx := context.Background()
	want := []string{".asdd/state/other.json", "a.json", "state/doc.json"}
	for _, k := range want {
		if _, err := s.Update(ctx, k, set("a", 1), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Keys (-want +got):\n%s", diff)
	}
}

// concurrentWriters has 8 writers commit 10 changes each to key (16 and
// 20 in a soak run, testenv) (initialised with one field), change(w, i)
// adding field w<w>-<i>, and checks that no commit was lost: every field
// there, one revision each.
func concurrentWriters(t *testing.T, s store.Store, change func(w, i int) store.UpdateFunc) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("init", true), store.Create()); err != nil {
		t.Fatal(err)
	}
	writers, each := testenv.Rounds(8, 16), testenv.Rounds(10, 20)
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := s.Update(ctx, key, change(w, i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	doc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if m := decode(t, doc.Value); len(m) != writers*each+1 || doc.Revision != uint64(writers*each+1) {
		t.Fatalf("%d fields at revision %d, want %d", len(m), doc.Revision, writers*each+1)
	}
}

func testConcurrent(t *testing.T, s store.Store) {
	ctx := context.Background()
	concurrentWriters(t, s, func(w, i int) store.UpdateFunc { return set(fmt.Sprintf("w%d-%d", w, i), i) })
	recs, err := s.History(ctx, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Rev != uint64(i+1) {
			t.Fatalf("record %d has revision %d", i, r.Rev)
		}
	}
}

func testWatch(t *testing.T, s store.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := 1; i <= 3; i++ {
		if _, err := s.Update(ctx, key, set("n", i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan uint64, 16)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		for c, err := range s.Watch(wctx, key, 1) {
			if err != nil {
				done <- err
				return
			}
			if c.Key != key {
				done <- fmt.Errorf("commit for key %q", c.Key)
				return
			}
			got <- c.Rev
		}
		done <- nil
	}()
	for want := uint64(2); want <= 3; want++ {
		if r := recv(t, got); r != want {
			t.Fatalf("watch delivered %d, want %d", r, want)
		}
	}
	if _, err := s.Update(ctx, key, set("n", 4)); err != nil {
		t.Fatal(err)
	}
	if r := recv(t, got); r != 4 {
		t.Fatalf("watch delivered %d, want 4", r)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func recv(t *testing.T, c <-chan uint64) uint64 {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("watch delivered nothing within 10s")
		return 0
	}
}

func testWatchConcurrent(t *testing.T, s store.Store) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.Update(ctx, key, set("init", true), store.Create()); err != nil {
		t.Fatal(err)
	}
	const writers, each = 8, 10
	total := uint64(1 + writers*each)
	type result struct {
		revs []uint64
		err  error
	}
	watchers := make([]chan result, 3)
	for i := range watchers {
		watchers[i] = make(chan result, 1)
		go func(out chan<- result) {
			var r result
			for c, err := range s.Watch(ctx, key, 0) {
				if err != nil {
					r.err = err
					break
				}
				r.revs = append(r.revs, c.Rev)
				if c.Rev == total {
					break
				}
			}
			out <- r
		}(watchers[i])
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.Update(ctx, key, set(fmt.Sprintf("w%d-%d", w, i), i)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for _, w := range watchers {
		r := <-w
		if r.err != nil {
			t.Fatal(r.err)
		}
		if uint64(len(r.revs)) != total {
			t.Fatalf("watcher saw %d commits, want %d", len(r.revs), total)
		}
		for i, rev := range r.revs {
			if rev != uint64(i+1) {
				t.Fatalf("watcher saw revision %d at position %d", rev, i)
			}
		}
	}
}

// patch returns an UpdateFunc that proposes the RFC 6902 patch p.
func patch(p string) store.UpdateFunc {
	return func(store.Document) (store.Change, error) {
		return store.Change{Patch: json.RawMessage(p), Actor: "tester", Reason: "patch"}, nil
	}
}

// topKeys returns the members of a JSON object in the order written.
func topKeys(t testing.TB, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", b)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// A change given as a patch commits the value the patch makes from the
// current one (keeping its member order), journals a patch that replays
// to it, and can create a document (a whole-document add); an empty patch
// commits nothing.
func testPatchChanges(t *testing.T, s store.Store) {
	ctx := context.Background()
	res, err := s.Update(ctx, key, patch(`[{"op":"add","path":"","value":{"z":1,"a":{"y":2},"l":[1,2]}}]`), store.Create())
	if err != nil || !res.Changed || res.Revision != 1 {
		t.Fatalf("create by patch: %+v %v", res, err)
	}
	steps := []string{
		`[{"op":"add","path":"/a/c","value":"<&>"},{"op":"replace","path":"/z","value":5}]`,
		`[{"op":"add","path":"/l/1","value":9},{"op":"remove","path":"/l/0"}]`,
		`[{"op":"add","path":"/m~1n","value":{"deep":[{"x":null}]}}]`,
		`[{"op":"replace","path":"/m~1n/deep/0/x","value":1.50}]`,
	}
	for i, p := range steps {
		res, err := s.Update(ctx, key, patch(p))
		if err != nil || !res.Changed || res.Revision != uint64(i+2) || res.Record == nil || res.Record.Rev != res.Revision {
			t.Fatalf("patch %d: %+v %v", i, res, err)
		}
	}
	res, err = s.Update(ctx, key, patch(`[]`))
	if err != nil || res.Changed || res.Revision != 5 {
		t.Fatalf("empty patch: %+v %v", res, err)
	}
	doc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"z": 5.0, "a": map[string]any{"y": 2.0, "c": "<&>"}, "l": []any{9.0, 2.0}, "m/n": map[string]any{"deep": []any{map[string]any{"x": 1.5}}}}
	if diff := cmp.Diff(want, decode(t, doc.Value)); diff != "" || doc.Revision != 5 {
		t.Fatalf("value at %d (-want +got):\n%s", doc.Revision, diff)
	}
	if got := topKeys(t, doc.Value); strings.Join(got, ",") != "z,a,l,m/n" {
		t.Fatalf("member order %v, want z,a,l,m/n", got)
	}
	old, err := s.GetAt(ctx, key, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"z": 5.0, "a": map[string]any{"y": 2.0, "c": "<&>"}, "l": []any{1.0, 2.0}}, decode(t, old.Value)); diff != "" {
		t.Fatalf("revision 2 (-want +got):\n%s", diff)
	}
}

// A patch that does not apply, that removes the whole document or that
// comes with a value too is INVALID_INPUT and commits nothing.
func testPatchRefused(t *testing.T, s store.Store) {
	ctx := context.Background()
	if _, err := s.Update(ctx, key, set("a", 1), store.Create()); err != nil {
		t.Fatal(err)
	}
	for name, fn := range map[string]store.UpdateFunc{
		"missing member":  patch(`[{"op":"replace","path":"/nope/x","value":1}]`),
		"bad index":       patch(`[{"op":"add","path":"/a/7","value":1}]`),
		"not a patch":     patch(`{"op":"add"}`),
		"not JSON":        patch(`[{"op":"add","path":"/b","value":}]`),
		"remove document": patch(`[{"op":"remove","path":""}]`),
		"null document":   patch(`[{"op":"replace","path":"","value":null}]`),
		"value and patch": func(store.Document) (store.Change, error) {
			return store.Change{Value: []byte(`{"a":2}`), Patch: json.RawMessage(`[{"op":"replace","path":"/a","value":2}]`)}, nil
		},
	} {
		_, err := s.Update(ctx, key, fn)
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Fatalf("%s: %v, want INVALID_INPUT", name, err)
		}
	}
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != 1 || decode(t, doc.Value)["a"] != 1.0 {
		t.Fatalf("after refused patches: %d %s %v", doc.Revision, doc.Value, err)
	}
}

// Concurrent writers proposing patches lose no commit.
func testPatchConcurrent(t *testing.T, s store.Store) {
	concurrentWriters(t, s, func(w, i int) store.UpdateFunc {
		return patch(fmt.Sprintf(`[{"op":"add","path":"/w%d-%d","value":%d}]`, w, i, i))
	})
}

// model is a proposer's decoded value (store.Change.Model).
type model map[string]any

func (m model) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]any(m)) }

// A change may carry the proposer's model of the next value with its
// patch: an update function gets either the current value's bytes or, for
// a revision committed with a model, that very model (the proposer's copy
// is the current one) and its bytes through Bytes; readers and generic
// writers after a commit by model see the value's bytes.
func testModel(t *testing.T, s store.Store) {
	ctx := context.Background()
	var last model
	for i := range 6 {
		res, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
			next := model{}
			if cur.Exists() {
				raw, err := cur.Bytes()
				if err != nil {
					return store.Change{}, err
				}
				for k, v := range decode(t, raw) {
					next[k] = v
				}
				if m, ok := cur.Model.(model); ok && fmt.Sprint(m) != fmt.Sprint(next) {
					t.Errorf("revision %d: the model handed back is not the value", cur.Revision)
				}
			}
			next[fmt.Sprint("k", i)] = float64(i)
			last = next
			if i == 0 {
				b, _ := json.Marshal(next)
				return store.Change{Value: b}, nil
			}
			return store.Change{Patch: json.RawMessage(fmt.Sprintf(`[{"op":"add","path":"/k%d","value":%d}]`, i, i)), Model: next}, nil
		}, store.Create())
		if err != nil || !res.Changed || res.Revision != uint64(i+1) || !res.Exists() {
			t.Fatalf("commit %d: %+v %v", i, res, err)
		}
		if res.Model != nil && fmt.Sprint(res.Model) != fmt.Sprint(last) {
			t.Fatalf("commit %d: the result's model is not the one committed", i)
		}
	}
	want := map[string]any{"k0": 0.0, "k1": 1.0, "k2": 2.0, "k3": 3.0, "k4": 4.0, "k5": 5.0}
	doc, err := s.Get(ctx, key)
	if err != nil || !doc.Exists() {
		t.Fatal(doc, err)
	}
	raw, err := doc.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, decode(t, raw)); diff != "" {
		t.Fatalf("value (-want +got):\n%s", diff)
	}
	// A generic writer after a commit by model: a patch with no model,
	// then a whole value made from the bytes it was given.
	if _, err := s.Update(ctx, key, patch(`[{"op":"add","path":"/g","value":1}]`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		raw, err := cur.Bytes()
		if err != nil {
			return store.Change{}, err
		}
		m := decode(t, raw)
		m["h"] = 2.0
		b, _ := json.Marshal(m)
		return store.Change{Value: b}, nil
	}); err != nil {
		t.Fatal(err)
	}
	want["g"], want["h"] = 1.0, 2.0
	doc, err = s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = doc.Bytes(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, decode(t, raw)); diff != "" {
		t.Fatalf("value after generic writes (-want +got):\n%s", diff)
	}
	if got, err := s.GetAt(ctx, key, 6); err != nil {
		t.Fatal(err)
	} else if raw, err := got.Bytes(); err != nil || decode(t, raw)["k5"] != 5.0 {
		t.Fatalf("revision 6: %s %v", raw, err)
	}
}
