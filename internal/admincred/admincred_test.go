package admincred

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestEnsureCreatesOneOwnerOnlyCredentialPerProject(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := t.TempDir()
	if _, err := Read(root); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("before any: %v", err)
	}
	var wg sync.WaitGroup
	tokens := make([]string, 8)
	created := make([]bool, 8)
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if tokens[i], created[i], err = Ensure(root); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n := 0
	for i, tok := range tokens {
		if tok != tokens[0] || tok == "" {
			t.Fatalf("concurrent Ensure disagree: %q", tokens)
		}
		if created[i] {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d creators, want 1", n)
	}
	p, _ := Path(root)
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credential file: %v %v", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(p)); di.Mode().Perm() != 0o700 {
		t.Fatalf("credential dir mode %v", di.Mode())
	}
	if got, err := Read(root); err != nil || got != tokens[0] {
		t.Fatalf("Read = %q %v", got, err)
	}
	if other, _, _ := Ensure(t.TempDir()); other == tokens[0] {
		t.Fatal("two projects share a credential")
	}
}
