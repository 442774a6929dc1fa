package pidfile_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/pidfile"
	"github.com/custodian-dev/custodian/reason"
)

// One daemon a directory: the pid file names the holder and where it
// listens, a second Take is CONFLICT naming the first's pid, and a
// released file is free and empty.
func TestOneDaemonNamesItself(t *testing.T) {
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, _, held := pidfile.Holder(root, pidfile.Default); held {
		t.Fatal("held before anyone took it")
	}
	l, err := pidfile.Take(root, pidfile.Default)
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	if err := l.Announce("/p/.asdd/state/custodian.sock", "http://127.0.0.1:7777\nx"); err != nil {
		t.Fatal(err)
	}
	pid, addrs, held := pidfile.Holder(root, pidfile.Default)
	if !held || pid != me || !slices.Equal(addrs, []string{"/p/.asdd/state/custodian.sock", "http://127.0.0.1:7777 x"}) {
		t.Fatalf("Holder: %q %q %v", pid, addrs, held)
	}
	if _, err := pidfile.Take(root, pidfile.Default); reason.CodeOf(err) != reason.Conflict || !strings.Contains(err.Error(), "pid "+me) {
		t.Fatalf("second Take: %v, want CONFLICT naming pid %s", err, me)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if b, err := root.ReadFile(pidfile.Default); err != nil || len(b) != 0 {
		t.Fatalf("after Release: %q %v", b, err)
	}
	if _, _, held := pidfile.Holder(root, pidfile.Default); held {
		t.Fatal("held after Release")
	}
}
