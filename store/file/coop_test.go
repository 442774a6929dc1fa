package file_test

import (
	"context"
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
