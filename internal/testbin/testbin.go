package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// stateDirPrefix names the state directory Main makes for a package's tests.
const stateDirPrefix = "custodian-test-state-"

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
	// binaries they start, keep theirs in one of their own. A test binary
	// started by a test (a crash test's child, often killed) inherits its
	// parent's, which the parent removes.
	if !strings.HasPrefix(filepath.Base(os.Getenv("XDG_STATE_HOME")), stateDirPrefix) {
		if state, err := os.MkdirTemp("", stateDirPrefix); err == nil {
			os.Setenv("XDG_STATE_HOME", state)
			defer os.RemoveAll(state)
		}
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

// Path returns the path of a custodian binary built from the current
// sources (Build) on first use, in a temporary directory that Main or
// Remove deletes when the package's tests end; tests must not modify it.
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
		err = Build("github.com/custodian-dev/custodian/cmd/custodian", path)
	})
	if err != nil {
		t.Fatalf("build custodian: %v", err)
	}
	return path
}

// Build builds the main package pkg (an import path or a directory) into
// the file dst, static and without cgo (the README's build). It builds with
// `go run -exec cp`: the go command caches what go run links, so the test
// packages of one `go test ./...` that need the same binary link it once,
// and a later run with unchanged sources links nothing; cp copies the
// binary out of the cache.
func Build(pkg, dst string) error {
	cmd := exec.Command("go", "run", "-exec", "cp", pkg, dst)
	cmd.Dir = moduleRoot()
	if !filepath.IsAbs(pkg) && (pkg == "." || strings.HasPrefix(pkg, "./") || strings.HasPrefix(pkg, "../")) {
		cmd.Dir = "" // a directory relative to the test's own
	}
	// The documented build (README): static, no cgo.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return &buildError{out: string(out), err: err}
	}
	return nil
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
