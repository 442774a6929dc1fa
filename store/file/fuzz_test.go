package file_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// FuzzLoad feeds arbitrary snapshot and journal bytes to the loader: it must
// either load something that verifies or refuse with a reason, never panic,
// and never lose the damaged bytes.
func FuzzLoad(f *testing.F) {
	dir, _ := commitN(f, 3)
	snap := must(os.ReadFile(path(dir, "manifest.json")))
	jour := must(os.ReadFile(path(dir, "journal.ndjson")))
	f.Add(snap, jour)
	f.Add([]byte(`{"a":1}`), []byte{})
	f.Add(snap[:len(snap)/2], jour[:len(jour)-7])
	f.Fuzz(func(t *testing.T, snap, jour []byte) {
		dir := t.TempDir()
		os.MkdirAll(path(dir, ""), 0o755)
		os.WriteFile(path(dir, "manifest.json"), snap, 0o644)
		if len(jour) > 0 {
			os.WriteFile(path(dir, "journal.ndjson"), jour, 0o644)
		}
		loadOrRefuse(t, dir)
	})
}

// loadOrRefuse opens dir and reads the manifest: it either loads a value
// that parses or refuses with a reason code. The store is returned open
// (closed at the end of the test) when it loaded, nil when it refused.
func loadOrRefuse(t *testing.T, dir string) *file.Store {
	t.Helper()
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	doc, err := s.Get(ctx, key)
	if err != nil {
		if reason.CodeOf(err) == "" {
			t.Fatalf("refusal without a reason: %v", err)
		}
		return nil
	}
	if _, err := store.SumOf(doc.Value); err != nil {
		t.Fatalf("loaded an invalid value: %v", err)
	}
	return s
}

// FuzzLoadSegments feeds arbitrary bytes as a sealed segment (revisions 1
// to 3), the live journal after it and the snapshot: open either loads a
// value that parses or refuses with a reason; Verify and History either
// pass or name a reason; nothing panics.
func FuzzLoadSegments(f *testing.F) {
	dir := f.TempDir()
	s, err := file.Open(dir, file.Options{SegmentBytes: -1})
	if err != nil {
		f.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		if _, err := s.Update(ctx, key, setN(i), store.Create()); err != nil {
			f.Fatal(err)
		}
	}
	s.Close()
	snap := must(os.ReadFile(path(dir, "manifest.json")))
	lines := bytes.SplitAfter(must(os.ReadFile(path(dir, "journal.ndjson"))), []byte("\n"))
	seg, live := bytes.Join(lines[:3], nil), bytes.Join(lines[3:], nil)
	f.Add(seg, live, snap)
	f.Add(seg, []byte{}, snap)
	f.Add(seg[:len(seg)-1], live, snap)
	f.Add(seg, live[:len(live)/2], snap[:10])
	f.Add(lines[0], live, snap)
	f.Fuzz(func(t *testing.T, seg, live, snap []byte) {
		dir := t.TempDir()
		os.MkdirAll(path(dir, ""), 0o755)
		os.WriteFile(path(dir, "journal.000000000001-000000000003.ndjson"), seg, 0o644)
		if len(live) > 0 {
			os.WriteFile(path(dir, "journal.ndjson"), live, 0o644)
		}
		if len(snap) > 0 {
			os.WriteFile(path(dir, "manifest.json"), snap, 0o644)
		}
		s := loadOrRefuse(t, dir)
		if s == nil {
			return
		}
		if err := s.Verify(ctx, key); err != nil && reason.CodeOf(err) == "" {
			t.Fatalf("verify failed without a reason: %v", err)
		}
		if _, err := s.History(ctx, key, 0, 0); err != nil && reason.CodeOf(err) == "" {
			t.Fatalf("history failed without a reason: %v", err)
		}
	})
}
