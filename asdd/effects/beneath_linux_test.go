//go:build linux

package effects

import (
	"os"
	"path/filepath"
	"testing"
)

// A path with no symlink on it is opened in one openat2; a symlink
// anywhere on the path, a missing file or a directory leave the path to
// locate; both ways give the same artifact.
func TestOpenBeneath(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("specs/a/intent.md", "intent")
	if err := os.Symlink("a", filepath.Join(dir, "specs", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("intent.md", filepath.Join(dir, "specs", "a", "alias.md")); err != nil {
		t.Fatal(err)
	}
	p, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for name, fast := range map[string]bool{
		"specs/a/intent.md": true, "specs/link/intent.md": false, "specs/a/alias.md": false,
		"specs/a/missing.md": false, "specs/a": false,
	} {
		if _, ok, _ := p.readBeneath(name); ok != fast && !noOpenat2.Load() {
			t.Errorf("readBeneath(%s) = %v, want %v", name, ok, fast)
		}
	}
	want := artifactOf("intent", "specs/a/intent.md", "DRAFT", []byte("intent"))
	for _, name := range []string{"specs/a/intent.md", "specs/link/intent.md", "specs/a/alias.md"} {
		got, err := p.Artifact("intent", name, "DRAFT")
		if err != nil || got.SHA256 != want.SHA256 || got.MarkedSHA256 != want.MarkedSHA256 {
			t.Errorf("Artifact(%s) = %+v, %v; want the hashes of %+v", name, got, err, want)
		}
		if h, err := p.Hash(name); err != nil || h != want.SHA256 {
			t.Errorf("Hash(%s) = %s, %v", name, h, err)
		}
	}
}
