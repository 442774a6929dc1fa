package cli

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
func TestLockDaemonDir(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDaemonDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, ".asdd", "state", "custodian.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("pid file holds %q (%v), want this process's pid", b, err)
	}
	_, err = lockDaemonDir(dir)
	if reason.CodeOf(err) != reason.Conflict || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v, want CONFLICT naming pid %d", err, os.Getpid())
	}
	unlock()
	if b, err := os.ReadFile(pidFile); err != nil || len(b) != 0 {
		t.Fatalf("pid file after unlock: %q, %v", b, err)
	}
	again, err := lockDaemonDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	again()
}

// `custodian serve` on an etcd store nobody answers (from --store or from
// the config's store:) fails within the dial timeout naming the endpoint,
// and leaves the directory free: the next attempt fails the same way, not
// on the pid lock. Nothing is left listening.
func TestServeEtcdUnreachable(t *testing.T) {
	e := newASDDEnv(t)
	url := "etcd://127.0.0.1:1/proj?dial-timeout=200ms"
	for _, args := range [][]string{
		{"--store", url, "serve", "--addr", "", "--monitor-every", "0"},
		{"--store", url, "serve", "--addr", "", "--monitor-every", "0"},
	} {
		out := e.want(1, args...)
		if !strings.Contains(out, "127.0.0.1:1") {
			t.Fatalf("error does not name the endpoint:\n%s", out)
		}
	}
	e.write(".asdd/config.yaml", "store: "+url+"\n")
	out := e.want(1, "serve", "--addr", "", "--monitor-every", "0")
	if !strings.Contains(out, "127.0.0.1:1") {
		t.Fatalf("store: from the config not used:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".asdd", "state", "custodian.sock")); !os.IsNotExist(err) {
		t.Fatalf("a socket was left behind: %v", err)
	}
}
