package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	once sync.Once
	dir  string
	path string
	err  error
)

// Main runs a package's tests and then removes the binary Path built, if
// any: a package that uses Path calls it from TestMain,
//
//	func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
func Main(m *testing.M) int {
	defer Remove()
	// A project outside git keeps its witnesses (store/file's witness.go)
	// in the user's state directory: the tests' projects, and the
	// binaries they start, keep theirs in one of their own.
	if state, err := os.MkdirTemp("", "custodian-test-state-"); err == nil {
		os.Setenv("XDG_STATE_HOME", state)
		defer os.RemoveAll(state)
	}
	return m.Run()
}

// Remove deletes the binary Path built and its directory, if any; for a
// TestMain that runs its tests through another wrapper (etcdtest.Main).
func Remove() {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// Path returns the path of a freshly built custodian binary, building it on
// first use, in a temporary directory that Main or Remove deletes when the
// package's tests end; tests must not modify it.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		d, e := os.MkdirTemp("", "custodian-testbin-")
		if e != nil {
			err = e
			return
		}
		dir = d
		path = filepath.Join(dir, "custodian")
		cmd := exec.Command("go", "build", "-o", path, "github.com/custodian-dev/custodian/cmd/custodian")
		cmd.Dir = moduleRoot()
		// The documented build (README): static, no cgo.
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, e := cmd.CombinedOutput()
		if e != nil {
			err = &buildError{out: string(out), err: e}
		}
	})
	if err != nil {
		t.Fatalf("build custodian: %v", err)
	}
	return path
}

type buildError struct {
	out string
	err error
}

func (b *buildError) Error() string { return b.err.Error() + "\n" + b.out }

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
