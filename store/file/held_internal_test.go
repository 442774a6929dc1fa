package file

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// cacheAll is a store.Cache that holds every revision: update functions
// get no value, so a commit by patch leaves its bytes to be made later.
type cacheAll struct{}

func (cacheAll) Holds(uint64) bool { return true }
func (cacheAll) Committed(uint64)  {}

// In Hold mode the bound on a patched value's size starts again from the
// bytes once a read (or the snapshot writer) made them: commits by patch
// on a value well under the size limit never make the whole value's bytes
// themselves, however many there are; a patch that takes the value over
// the limit is still refused.
func TestHoldSizeBoundFollowsMadeBytes(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := Open(dir, Options{Hold: true, SnapshotInterval: time.Hour, Limits: store.Limits{MaxBytes: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const key = "doc.json"
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: fmt.Appendf(nil, `{"pad":%q,"n":0}`, strings.Repeat("x", 1000))}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	d, err := s.doc(key)
	if err != nil {
		t.Fatal(err)
	}
	patch := func(p string) error {
		_, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
			return store.Change{Patch: json.RawMessage(p), Actor: "t", Reason: "bump"}, nil
		}, store.WithCache(cacheAll{}))
		return err
	}
	// Each patch raises the bound by six times its length (≈ 330 bytes):
	// without the made bytes, the bound passed 4,096 within a dozen commits.
	for i := range 60 {
		if err := patch(fmt.Sprintf(`[{"op":"replace","path":"/n","value":%d}]`, i+1)); err != nil {
			t.Fatal(err)
		}
		v := d.held.latest.Load()
		if v.lazy == nil {
			t.Fatalf("commit %d: not kept as a lazy value", i+1)
		}
		if v.lazy.made.Load() {
			t.Fatalf("commit %d made the whole value's bytes (%d) to check its size", i+1, len(v.lazy.raw))
		}
		// A read makes them, as the snapshot writer does.
		if got, err := s.Get(ctx, key); err != nil || !strings.HasSuffix(string(got.Value), fmt.Sprintf(`"n":%d}`, i+1)) {
			t.Fatalf("read after commit %d: %v", i+1, err)
		}
	}
	err = patch(fmt.Sprintf(`[{"op":"add","path":"/big","value":%q}]`, strings.Repeat("y", 4000)))
	if reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("a patch past the limit: %v, want INVALID_INPUT", err)
	}
	if got, err := s.Get(ctx, key); err != nil || got.Revision != 61 {
		t.Fatalf("after the refused patch: revision %d, %v; want 61", got.Revision, err)
	}
}
