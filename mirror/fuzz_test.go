package mirror

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/store"
)

// Whatever a state file and a mirror hold (hand-written, torn, foreign),
// Read never says "ok" for bytes its entry does not name, and a Write
// leaves the store's bytes in place and the file that was there either
// identical to them or kept aside: nothing is lost.
//
//	go test -run XXX -fuzz FuzzStateFile -fuzztime 10s ./mirror
func FuzzStateFile(f *testing.F) {
	f.Add([]byte(`{"documents":{"manifest.json":{"key":".impl/manifest.json","rev":3,"file":"sha256:00"}}}`), []byte(`{}`))
	f.Add([]byte(`{"documents":null}`), []byte(``))
	f.Add([]byte(`{"documents":{"manifest.json":{"key":"../x","rev":1}}}`), []byte("{\"tasks\":[]}\n"))
	f.Add([]byte(`not json`), []byte(`{"a":1}`))
	f.Fuzz(func(t *testing.T, state, file []byte) {
		dir := t.TempDir()
		key := ".impl/manifest.json"
		if err := os.MkdirAll(filepath.Join(dir, ".impl"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, ".impl", ".mirror"), state, 0o644)
		os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), file, 0o644)
		s, err := Read(dir, key)
		if err != nil {
			t.Fatal(err)
		}
		if s.State == "ok" {
			st, err := ReadStateFile(state, key)
			if _, held := (&st).holds(store.HashBytes(file)); err != nil || !held {
				t.Fatalf("ok for bytes the state file does not name: %+v", s)
			}
		}
		m := open(t, dir, nil)
		d := doc(key, 7, "fuzz")
		o, err := m.Write(d)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(dir, ".impl", "manifest.json")); !bytes.Equal(got, d.Value) && o.Action != Current {
			t.Fatalf("mirror not written: %+v", o)
		}
		if o.Edit != nil && o.Edit.KeptAs != "" {
			if kept, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(o.Edit.KeptAs))); !bytes.Equal(kept, file) {
				t.Fatal("edited file not kept as it was")
			}
		} else if o.Action != Current && !bytes.Equal(file, d.Value) && len(file) > 0 {
			// The file was neither kept nor identical: only a state
			// entry naming it at an older revision allows that.
			if st, err := ReadStateFile(state, key); err != nil {
				t.Fatalf("file %q replaced without being kept (%+v)", file, o)
			} else if _, held := (&st).holds(store.HashBytes(file)); !held {
				t.Fatalf("file %q replaced without being kept (%+v)", file, o)
			}
		}
	})
}
