package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// TestCooperativeStateLock: a commit of .agents/tmp/state.json waits while
// another tool holds flock on .agents/tmp/state.json.lock (the lock the
// state-manager plugins take around their own rewrites), and goes through
// once it is released; other documents do not wait for it.
func TestCooperativeStateLock(t *testing.T) {
	dir := t.TempDir()
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	put := func(ctx context.Context, key, v string) error {
		_, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
			return store.Change{Value: []byte(v), Actor: "t"}, nil
		}, store.Create())
		return err
	}
	if err := put(ctx, ".agents/tmp/state.json", `{"n":1}`); err != nil {
		t.Fatal(err)
	}
	lock := flock.New(filepath.Join(dir, ".agents", "tmp", "state.json.lock"))
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	if err := put(short, ".agents/tmp/state.json", `{"n":2}`); err == nil {
		t.Fatal("committed while the plugin's lock was held")
	}
	if err := put(ctx, ".impl/manifest.json", `{"tasks":[]}`); err != nil {
		t.Fatalf("another document waited for the state lock: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- put(ctx, ".agents/tmp/state.json", `{"n":3}`) }()
	select {
	case err := <-done:
		t.Fatalf("commit did not wait for the lock: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	lock.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".agents", "tmp", "state.json"))
	if string(b) == "" || !strings.Contains(string(b), `"n": 3`) {
		t.Errorf("state.json = %s", b)
	}
}

// TestCooperativeStateLockHold: under the daemon (Hold mode) commits are
// acknowledged from the journal, and the background rewrite of state.json
// waits while another tool holds state.json.lock.
func TestCooperativeStateLockHold(t *testing.T) {
	dir := t.TempDir()
	s, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	put := func(v string) {
		t.Helper()
		if _, err := s.Update(ctx, ".agents/tmp/state.json", func(store.Document) (store.Change, error) {
			return store.Change{Value: []byte(v), Actor: "t"}, nil
		}, store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	snap := filepath.Join(dir, ".agents", "tmp", "state.json")
	read := func() string { b, _ := os.ReadFile(snap); return string(b) }
	put(`{"n":1}`)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(read(), `"n": 1`) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	lock := flock.New(snap + ".lock")
	if err := lock.Lock(); err != nil {
		t.Fatal(err)
	}
	put(`{"n":2}`) // acknowledged: the journal is the commit point
	time.Sleep(200 * time.Millisecond)
	if got := read(); !strings.Contains(got, `"n": 1`) {
		t.Fatalf("the snapshot was rewritten while the plugin's lock was held: %s", got)
	}
	if doc, err := s.Get(ctx, ".agents/tmp/state.json"); err != nil || !strings.Contains(string(doc.Value), "2") {
		t.Fatalf("committed value %s (%v)", doc.Value, err)
	}
	lock.Unlock()
	deadline = time.Now().Add(5 * time.Second)
	for !strings.Contains(read(), `"n": 2`) {
		if time.Now().After(deadline) {
			t.Fatalf("snapshot not rewritten after the lock was released: %s", read())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSnapshotOnCommit: in Hold mode, a document named by SnapshotOnCommit
// is on disk when its commit is acknowledged; others are not waited for.
func TestSnapshotOnCommit(t *testing.T) {
	dir := t.TempDir()
	s, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: time.Hour,
		SnapshotOnCommit: func(key string) bool { return key == ".impl/manifest.json" }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range 20 {
		v := fmt.Sprintf(`{"tasks":[],"n":%d}`, i)
		if _, err := s.Update(ctx, ".impl/manifest.json", func(store.Document) (store.Change, error) {
			return store.Change{Value: []byte(v), Actor: "t"}, nil
		}, store.Create()); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, ".impl", "manifest.json"))
		if !strings.Contains(string(b), fmt.Sprintf(`"n": %d`, i)) {
			t.Fatalf("commit %d acknowledged, file holds %s", i, b)
		}
	}
	for i := range 2 {
		v := fmt.Sprintf(`{"n":%d}`, i)
		if _, err := s.Update(ctx, ".agents/tmp/other.json", func(store.Document) (store.Change, error) {
			return store.Change{Value: []byte(v), Actor: "t"}, nil
		}, store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".agents", "tmp", "other.json")); strings.Contains(string(b), `"n": 1`) {
		t.Errorf("a document not named was rewritten at commit (interval is an hour): %s", b)
	}
}
