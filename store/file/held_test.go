package file_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/store/storetest"
)

func TestConformanceHold(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, t.TempDir(), file.Options{Hold: true, SnapshotInterval: 5 * time.Millisecond})
	})
}

func TestSecondDaemonIsRefusedWithPid(t *testing.T) {
	dir := t.TempDir()
	open(t, dir, file.Options{Hold: true})
	_, err := file.Open(dir, file.Options{Hold: true})
	e, ok := reason.As(err)
	if !ok || e.Code != reason.Conflict {
		t.Fatalf("second daemon: got %v, want CONFLICT", err)
	}
	if want := fmt.Sprintf("pid %d", os.Getpid()); !strings.Contains(e.Message, want) {
		t.Fatalf("refusal %q does not name %q", e.Message, want)
	}
}

func TestDaemonLockIsReleasedOnClose(t *testing.T) {
	dir := t.TempDir()
	s, err := file.Open(dir, file.Options{Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	open(t, dir, file.Options{Hold: true})
}

func bump(w int) store.UpdateFunc {
	return func(cur store.Document) (store.Change, error) {
		m := map[string]int{}
		if cur.Value != nil {
			if err := json.Unmarshal(cur.Value, &m); err != nil {
				return store.Change{}, err
			}
		}
		m[fmt.Sprintf("w%02d", w)]++
		b, _ := json.Marshal(m)
		return store.Change{Value: b, Actor: fmt.Sprintf("w%02d", w), Reason: "bump"}, nil
	}
}

// Writers that arrive together share journal fsyncs, every commit is
// acknowledged only once synced, and the files are whole after Close.
func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	var syncs atomic.Int64
	s, err := file.Open(dir, file.Options{Hold: true, Fault: func(p string) error {
		if p == "journal.sync" {
			syncs.Add(1)
			time.Sleep(200 * time.Microsecond) // a disk, so that writers pile up
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const key, writers, each = "state/doc.json", 32, 20
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: json.RawMessage(`{}`)}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				res, err := s.Update(ctx, key, bump(w))
				if err != nil {
					t.Error(err)
					return
				}
				// Acknowledged means readable by anyone from now on.
				got, err := s.Get(ctx, key)
				if err != nil || got.Revision < res.Revision {
					t.Errorf("read after ack: rev %d < %d (%v)", got.Revision, res.Revision, err)
				}
			}
		}()
	}
	wg.Wait()
	n := syncs.Load()
	if n >= writers*each {
		t.Errorf("%d syncs for %d commits: no grouping", n, writers*each)
	}
	t.Logf("%d commits, %d journal syncs", writers*each+1, n)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, file.Options{})
	if err := s2.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
	doc, err := s2.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Revision != writers*each+1 {
		t.Fatalf("revision %d, want %d", doc.Revision, writers*each+1)
	}
	m := map[string]int{}
	json.Unmarshal(doc.Value, &m)
	for w := range writers {
		if m[fmt.Sprintf("w%02d", w)] != each {
			t.Fatalf("writer %d: %d commits present, want %d", w, m[fmt.Sprintf("w%02d", w)], each)
		}
	}
}

// The snapshot is rewritten in the background, not per commit, and a
// snapshot left behind (as a crash leaves it) is caught up by replay.
func TestSnapshotIsDeferred(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const key = "state/doc.json"
	for i := range 5 {
		opts := []store.UpdateOption{}
		if i == 0 {
			opts = append(opts, store.Create())
		}
		if _, err := s.Update(ctx, key, bump(i), opts...); err != nil {
			t.Fatal(err)
		}
	}
	snap := filepath.Join(dir, "state", "doc.json")
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Fatalf("snapshot written per commit (stat: %v)", err)
	}
	// A crash now: copy the files as they are, then compare with a reopen.
	crash := t.TempDir()
	copyTree(t, dir, crash)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("Close did not write the snapshot: %v", err)
	}
	s2 := open(t, crash, file.Options{})
	doc, err := s2.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Revision != 5 {
		t.Fatalf("after crash: revision %d, want 5", doc.Revision)
	}
	if err := s2.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
}

func TestHoldSyncFailurePoisons(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	s := open(t, dir, file.Options{Hold: true, Fault: func(p string) error {
		if p == "journal.sync" && fail.Load() {
			return fmt.Errorf("EIO (injected)")
		}
		return nil
	}})
	ctx := context.Background()
	const key = "state/doc.json"
	if _, err := s.Update(ctx, key, bump(0), store.Create()); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if _, err := s.Update(ctx, key, bump(1)); err == nil {
		t.Fatal("commit acknowledged after a failed sync")
	}
	fail.Store(false)
	if _, err := s.Update(ctx, key, bump(2)); err == nil {
		t.Fatal("write accepted after a failed sync")
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if fi.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bumpPatch is bump with the change's patch: the store applies the patch to
// its decoded value instead of diffing.
func bumpPatch(w int) store.UpdateFunc {
	return func(cur store.Document) (store.Change, error) {
		raw, err := cur.Bytes()
		if err != nil {
			return store.Change{}, err
		}
		m := counts{}
		if err := json.Unmarshal(raw, &m); err != nil {
			return store.Change{}, err
		}
		k := fmt.Sprintf("w%02d", w)
		m[k]++
		p := fmt.Sprintf(`[{"op":"add","path":"/%s","value":%d}]`, k, m[k])
		return store.Change{Patch: json.RawMessage(p), Model: m, Actor: k, Reason: "bump"}, nil
	}
}

// counts is bumpPatch's model of the value (store.Change.Model).
type counts map[string]int

func (c counts) MarshalJSON() ([]byte, error) { return json.Marshal(map[string]int(c)) }

// Commits given as a patch journal it as given, and the files verify and
// reopen to the same value; a change with both a value and a patch, and a
// patch that does not apply, are refused (INVALID_INPUT) and commit
// nothing.
func TestHoldPatchedCommits(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := open(t, dir, file.Options{Hold: true, SnapshotInterval: time.Millisecond})
	if _, err := s.Update(ctx, "doc.json", bump(0), store.Create()); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := s.Update(ctx, "doc.json", bumpPatch(w)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	h, err := s.History(ctx, "doc.json", 2, 2)
	if err != nil || len(h) != 1 || !strings.Contains(string(h[0].Patch), `"op":"add"`) {
		t.Fatalf("record 2: %v %v", h, err)
	}
	all, err := s.History(ctx, "doc.json", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	empty := 0
	for _, r := range all {
		if r.Sum == "" {
			empty++
		}
	}
	if empty == len(all) {
		t.Fatal("no record carries a sum")
	}
	t.Logf("%d of %d records left their sum to a later record", empty, len(all))
	for name, ch := range map[string]store.Change{
		"value and patch":  {Value: []byte(`{"w00":99}`), Patch: json.RawMessage(`[{"op":"replace","path":"/w00","value":99}]`)},
		"missing member":   {Patch: json.RawMessage(`[{"op":"replace","path":"/nope/x","value":1}]`)},
		"not a patch":      {Patch: json.RawMessage(`{"op":"add"}`)},
		"whole doc remove": {Patch: json.RawMessage(`[{"op":"remove","path":""}]`)},
	} {
		_, err = s.Update(ctx, "doc.json", func(cur store.Document) (store.Change, error) { return ch, nil })
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Fatalf("%s: %v, want INVALID_INPUT", name, err)
		}
	}
	want, err := s.Get(ctx, "doc.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, file.Options{})
	if err := s2.Verify(ctx, "doc.json"); err != nil {
		t.Fatal(err)
	}
	got, err := s2.Get(ctx, "doc.json")
	if err != nil {
		t.Fatal(err)
	}
	if got.Revision != 161 || !jsonEqual(got.Value, want.Value) {
		t.Fatalf("reopened at %d: %s, want 161: %s", got.Revision, got.Value, want.Value)
	}
}

func jsonEqual(a, b []byte) bool {
	sa, _ := store.SumOf(a)
	sb, _ := store.SumOf(b)
	return sa != "" && sa == sb
}

// A commit given as a patch with its model comes back without its bytes
// (not made) and with the model, which the next update function gets as
// the current revision's; the bytes made later reach the files whole.
func TestHoldModelBytesMadeLater(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const key = "doc.json"
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"a":1}`)}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	m := counts{"a": 1, "b": 2}
	res, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		return store.Change{Patch: json.RawMessage(`[{"op":"add","path":"/b","value":2}]`), Model: m}, nil
	})
	if err != nil || !res.Changed || res.Revision != 2 || res.Value != nil || res.Model == nil {
		t.Fatalf("patch commit: %+v %v", res, err)
	}
	if _, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		if _, ok := cur.Model.(counts); !ok || cur.Revision != 2 || !cur.Exists() {
			t.Errorf("next update: revision %d, model %v", cur.Revision, cur.Model)
		}
		return store.Change{Patch: json.RawMessage(`[{"op":"remove","path":"/a"}]`)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, dir, file.Options{})
	if err := s2.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
	got, err := s2.Get(ctx, key)
	if err != nil || got.Revision != 3 || !jsonEqual(got.Value, []byte(`{"b":2}`)) {
		t.Fatalf("reopened: %d %s %v", got.Revision, got.Value, err)
	}
}

// Group writes leave most records without a sum; a snapshot of such a
// revision is named by a mark, so a crash right after it recovers without
// replaying or moving anything aside — and a mark that does not match the
// journal identifies nothing.
func TestHoldSnapshotOfUnsummedRevision(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const key = "state/doc.json"
	if _, err := s.Update(ctx, key, bump(0), store.Create()); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := s.Update(ctx, key, bumpPatch(i%3)); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.History(ctx, key, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Sum == "" || recs[len(recs)-1].Sum != "" {
		t.Fatalf("sums: first %q, last %q; want only the first (one per interval)", recs[0].Sum, recs[len(recs)-1].Sum)
	}
	if err := s.Verify(ctx, key); err != nil { // forces the snapshot to the latest revision
		t.Fatal(err)
	}
	// Four more commits leave the snapshot (named by its mark) behind.
	for i := range 4 {
		if _, err := s.Update(ctx, key, bumpPatch(i%3)); err != nil {
			t.Fatal(err)
		}
	}
	want, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	crash := t.TempDir()
	copyTree(t, dir, crash)
	if _, err := os.Stat(filepath.Join(crash, "state", ".doc.marks")); err != nil {
		t.Fatalf("no mark file: %v", err)
	}
	s2 := open(t, crash, file.Options{})
	got, err := s2.Get(ctx, key)
	if wantRaw, _ := want.Bytes(); err != nil || got.Revision != 25 || !jsonEqual(got.Value, wantRaw) {
		t.Fatalf("after crash: %d %s %v", got.Revision, got.Value, err)
	}
	if err := s2.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
	if aside, _ := filepath.Glob(filepath.Join(crash, "state", "doc.json.*")); len(aside) > 0 {
		t.Fatalf("a snapshot named by its mark was moved aside: %v", aside)
	}

	// A mark whose record hash is not the journal's names nothing: the
	// snapshot, behind the journal, is taken for a hand edit.
	bad := t.TempDir()
	copyTree(t, dir, bad)
	mp := filepath.Join(bad, "state", ".doc.marks")
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var ms []map[string]any
	if err := json.Unmarshal(b, &ms); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		m["hash"] = "sha256:" + strings.Repeat("0", 64)
	}
	b, _ = json.Marshal(ms)
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := open(t, bad, file.Options{})
	got, err = s3.Get(ctx, key)
	if wantRaw, _ := want.Bytes(); err != nil || got.Revision != 25 || !jsonEqual(got.Value, wantRaw) {
		t.Fatalf("with a foreign mark: %d %s %v", got.Revision, got.Value, err)
	}
	if aside, _ := filepath.Glob(filepath.Join(bad, "state", "doc.json.unjournaled-*")); len(aside) != 1 {
		t.Fatalf("snapshot with a foreign mark not moved aside: %v", aside)
	}
}

// In Hold mode a read of the latest revision is served from memory without
// the commit lock: a Get returns while an update function runs (it would
// wait for it otherwise, and this test would not end), with the latest
// committed revision.
func TestHoldGetDoesNotWaitForACommit(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := file.Open(dir, file.Options{Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const key = "doc.json"
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"a":1}`)}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
			close(inside)
			<-release
			return store.Change{Patch: json.RawMessage(`[{"op":"add","path":"/b","value":2}]`)}, nil
		})
		done <- err
	}()
	<-inside
	doc, err := s.Get(ctx, key)
	close(release)
	if err != nil || doc.Revision != 1 || !jsonEqual(doc.Value, []byte(`{"a":1}`)) {
		t.Fatalf("get during a commit: %d %s %v", doc.Revision, doc.Value, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if doc, err := s.Get(ctx, key); err != nil || doc.Revision != 2 {
		t.Fatalf("get after the commit: %d %v", doc.Revision, err)
	}
}
