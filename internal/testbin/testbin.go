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
	path string
	err  error
)

// Path returns the path of a freshly built custodian binary, building it on
// first use. The binary lives in a temporary directory removed at exit by
// the OS's temp cleaning; tests must not modify it.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, e := os.MkdirTemp("", "custodian-testbin-")
		if e != nil {
			err = e
			return
		}
		path = filepath.Join(dir, "custodian")
		cmd := exec.Command("go", "build", "-o", path, "github.com/custodian-dev/custodian/cmd/custodian")
		cmd.Dir = moduleRoot()
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
