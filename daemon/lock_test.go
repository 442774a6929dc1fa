package daemon

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// The per-directory lock of a daemon on etcd: one holder, which the second
// is told about by pid; released (and the pid file emptied) by unlock.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, ".asdd", "state", "custodian.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("pid file holds %q (%v), want this process's pid", b, err)
	}
	_, err = LockDir(dir)
	if reason.CodeOf(err) != reason.Conflict || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v, want CONFLICT naming pid %d", err, os.Getpid())
	}
	unlock()
	if b, err := os.ReadFile(pidFile); err != nil || len(b) != 0 {
		t.Fatalf("pid file after unlock: %q, %v", b, err)
	}
	again, err := LockDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	again()
}
