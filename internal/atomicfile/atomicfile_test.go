package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Staged content is invisible until Commit; Abort leaves the file as it
// was; neither leaves a temporary file behind.
func TestStageCommitAbort(t *testing.T) {
	dir := t.TempDir()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := Write(r, "d/a.json", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp, err := Stage(r, "d/a.json", []byte("new"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "d", "a.json")); string(b) != "old" {
		t.Fatalf("staged content visible before Commit: %q", b)
	}
	tmp.Abort()
	if b, _ := os.ReadFile(filepath.Join(dir, "d", "a.json")); string(b) != "old" {
		t.Fatalf("after Abort: %q", b)
	}
	tmp, err = Stage(r, "d/a.json", []byte("new"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmp.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(r, "d"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "d", "a.json")); string(b) != "new" {
		t.Fatalf("after Commit: %q", b)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "d"))
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
	if _, err := Stage(r, "missing/a.json", []byte("x"), 0o644); err == nil {
		t.Fatal("Stage into a missing directory succeeded")
	}
	if a, b := TempName("x"), TempName("x"); a == b || !strings.HasPrefix(a, "x.tmp-") {
		t.Fatalf("temp names %q %q", a, b)
	}
}
