package file_test

import (
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
	dir, _ := commitN(&testing.T{}, 3)
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
		s, err := file.Open(dir, file.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		doc, err := s.Get(ctx, key)
		if err != nil {
			if reason.CodeOf(err) == "" {
				t.Fatalf("refusal without a reason: %v", err)
			}
			return
		}
		if _, err := store.SumOf(doc.Value); err != nil {
			t.Fatalf("loaded an invalid value: %v", err)
		}
	})
}
