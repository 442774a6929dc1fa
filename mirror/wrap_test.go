package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// A store wrapped for mirrors (here the file store of another directory,
// standing for the cluster) brings the mirror of each document it reads or
// commits up to that version, and only those; Refresh writes them all.
func TestWrapAndRefresh(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	fs, err := file.Open(src, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := open(t, dst, nil)
	s := Wrap(fs, m)
	defer s.Close()
	ctx := context.Background()
	set := func(v string) store.UpdateFunc {
		return func(store.Document) (store.Change, error) {
			return store.Change{Value: json.RawMessage(v), Actor: "test"}, nil
		}
	}
	res, err := s.Update(ctx, ".impl/manifest.json", set(`{"tasks":[]}`), store.Create())
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := Read(dst, ".impl/manifest.json"); st.State != "ok" || st.Rev != res.Revision {
		t.Fatalf("after a commit: %+v", st)
	}
	if !bytes.Equal(read(t, dst, ".impl/manifest.json"), read(t, src, ".impl/manifest.json")) {
		t.Fatal("mirror differs from the store's snapshot")
	}
	// Committed behind the wrapper's back: not mirrored until read.
	if _, err := fs.Update(ctx, ".agents/tmp/state.json", set(`{"a":1}`), store.Create()); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.Update(ctx, ".impl/manifest.json", set(`{"tasks":[1]}`)); err != nil {
		t.Fatal(err)
	}
	if st, _ := Read(dst, ".agents/tmp/state.json"); st.State != "missing" {
		t.Fatalf("a document nobody read was mirrored: %+v", st)
	}
	if _, err := s.Get(ctx, ".impl/manifest.json"); err != nil {
		t.Fatal(err)
	}
	if st, _ := Read(dst, ".impl/manifest.json"); st.Rev != 2 {
		t.Fatalf("after a read: %+v", st)
	}
	// A rejected update changes no mirror.
	before := read(t, dst, ".impl/manifest.json")
	if _, err := s.Update(ctx, ".impl/manifest.json", func(store.Document) (store.Change, error) {
		return store.Change{}, errors.New("rejected")
	}); err == nil {
		t.Fatal("rejection lost")
	}
	if !bytes.Equal(before, read(t, dst, ".impl/manifest.json")) {
		t.Fatal("a rejected update changed the mirror")
	}
	outs, err := m.Refresh(ctx, fs)
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0].Key != ".agents/tmp/state.json" || outs[0].Action != Written || outs[1].Action != Current {
		t.Fatalf("refresh: %+v", outs)
	}
	if st, _ := Read(dst, ".agents/tmp/state.json"); st.State != "ok" || st.Rev != 1 {
		t.Fatalf("after refresh: %+v", st)
	}
	if s.Unwrap() != store.Store(fs) || s.Mirror() != m {
		t.Fatal("Unwrap/Mirror")
	}
}
