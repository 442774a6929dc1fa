package file

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// rawModel is a proposer's model that is its bytes (store.Change.Model).
type rawModel []byte

func (m rawModel) MarshalJSON() ([]byte, error) { return m, nil }

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
		_, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
			raw, err := cur.Bytes()
			if err != nil {
				return store.Change{}, err
			}
			next, err := store.ApplyPatch(raw, []byte(p))
			return store.Change{Patch: json.RawMessage(p), Model: rawModel(next), Actor: "t", Reason: "bump"}, err
		})
		return err
	}
	// Each patch raises the bound by six times its length (≈ 330 bytes):
	// without the made bytes, the bound passed 4,096 within a dozen commits.
	for i := range 60 {
		if err := patch(fmt.Sprintf(`[{"op":"replace","path":"/n","value":%d}]`, i+1)); err != nil {
			t.Fatal(err)
		}
		v := d.held.latest.Load()
		if v.val.model == nil || v.val.raw != nil {
			t.Fatalf("commit %d: not kept as its model", i+1)
		}
		if v.val.made.Load() {
			t.Fatalf("commit %d made the whole value's bytes (%d) to check its size", i+1, len(v.val.out))
		}
		// The snapshot writer makes them.
		if err := d.held.flushSnapshot(true); err != nil {
			t.Fatalf("snapshot after commit %d: %v", i+1, err)
		}
		if got, err := s.Get(ctx, key); err != nil || !strings.HasSuffix(string(got.Value), fmt.Sprintf(`"n":%d}`, i+1)) {
			t.Fatalf("read after commit %d: %s %v", i+1, got.Value, err)
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

// On a large value in Hold mode, commits by patch from several writers, a
// commit by value (diffed from the held tree), readers making the bytes
// and the snapshot writer all run at once (with -race), and the value
// reached, read and reopened, is the one the patches make on the bytes.
func TestHoldConcurrentPatchesOnLargeValue(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	const key = "manifest.json"
	const slices = 900
	var b strings.Builder
	b.WriteString(`{"version":0,"slices":[`)
	for i := range slices {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"S%03d","status":"DISCOVERY","title":"slice number %d","chain":[],"z":{"b":1,"a":[2]}}`, i, i)
	}
	b.WriteString(`]}`)
	want := []byte(b.String())
	s0, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s0.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: want, Actor: "t", Reason: "create"}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	if err := s0.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, Options{Hold: true, SnapshotInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Get(ctx, key); err != nil {
		t.Fatal(err)
	}
	const writers, commits = 6, 25
	var patches [writers][]string
	for w := range writers {
		for i := range commits {
			patches[w] = append(patches[w], fmt.Sprintf(`[{"op":"replace","path":"/slices/%d/status","value":"S%d"},{"op":"add","path":"/slices/%d/chain/-","value":{"agent":"w%d","n":%d}},{"op":"add","path":"/slices/%d/z/c","value":%d}]`, w*97, i, w*97, w, i, w*97+1, i))
		}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range patches[w] {
				if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
					return store.Change{Patch: json.RawMessage(p), Actor: "w", Reason: "patch"}, nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				doc, err := s.Get(ctx, key)
				if err != nil || !json.Valid(doc.Value) {
					t.Errorf("read at revision %d: %v", doc.Revision, err)
					return
				}
			}
		}()
	}
	// A commit by value meanwhile: diffed from the held tree.
	if _, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		var m map[string]any
		if err := json.Unmarshal(cur.Value, &m); err != nil {
			return store.Change{}, err
		}
		m["note"] = "by value"
		v, err := json.Marshal(m)
		return store.Change{Value: v, Actor: "v", Reason: "value"}, err
	}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	// The model: the patches applied to the bytes, writer by writer (they
	// touch slices of their own), and the value commit's member.
	for w := range writers {
		for _, p := range patches[w] {
			if want, err = jsonval.ApplyPatch(want, []byte(p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if want, err = jsonval.ApplyPatch(want, []byte(`[{"op":"add","path":"/note","value":"by value"}]`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if ws, gs := sumOf(t, want), sumOf(t, got.Value); ws != gs || got.Revision != writers*commits+2 {
		t.Fatalf("revision %d: %s, want %d: %s", got.Revision, gs, writers*commits+2, ws)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
	again, err := s2.Get(ctx, key)
	if err != nil || again.Revision != got.Revision || sumOf(t, again.Value) != sumOf(t, want) {
		t.Fatalf("reopened at %d (%v), want %d and the same value", again.Revision, err, got.Revision)
	}
}

func sumOf(t *testing.T, b []byte) string {
	t.Helper()
	s, err := store.SumOf(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
