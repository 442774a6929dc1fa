package cli

// What a new user meets in the first minutes and every day after: a
// command run in the wrong directory, a port taken, a key mistyped, a
// path given from a subdirectory.

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testbin"
)

var firstUseNow = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// serve in a directory that is no project refuses with the init hint, as
// every other command does, and creates nothing there.
func TestServeOutsideAProjectRefusesAndCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI(dir, "", firstUseNow, "serve", "--addr", "", "--monitor-every", "0")
	if code != 3 || !strings.Contains(stderr, "NOT_FOUND") || !strings.Contains(stderr, "custodian init") {
		t.Fatalf("serve outside a project: exit %d, %q; want exit 3 with the init hint", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("serve created %v", entries)
	}
}

// serve on a TCP address another process holds says which address, that
// --addr picks another, and, when a custodian daemon answers its health
// check there, says so.
func TestServeOnATakenAddressSaysWhoHoldsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken := l.Addr().String()
	dir := t.TempDir()
	if _, stderr, code := runCLI(dir, "", firstUseNow, "init"); code != 0 {
		t.Fatal(stderr)
	}
	_, stderr, code := runCLI(dir, "", firstUseNow, "serve", "--addr", taken, "--socket", "", "--monitor-every", "0")
	l.Close()
	for _, want := range []string{"CONFLICT", taken, "--addr", "another process listens there"} {
		if code != 4 || !strings.Contains(stderr, want) {
			t.Fatalf("serve on a taken port: exit %d, %q; want exit 4 naming %q", code, stderr, want)
		}
	}

	other := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	other.want(0, "init")
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	d := startServe(t, other.dir, "--addr", addr)
	defer func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		d.wait(t)
	}()
	_, stderr, code = runCLI(dir, "", firstUseNow, "serve", "--addr", addr, "--socket", "", "--monitor-every", "0")
	if code != 4 || !strings.Contains(stderr, "a custodian daemon") || !strings.Contains(stderr, addr) || !strings.Contains(stderr, "--addr") {
		t.Fatalf("serve where a daemon listens: exit %d, %q; want exit 4 saying a custodian daemon answers at %s", code, stderr, addr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".asdd", "state", "custodian.sock")); !os.IsNotExist(err) {
		t.Fatalf("a socket was left behind: %v", err)
	}
}

// check and verify in a directory that is no project fail with NOT_FOUND
// (exit 3) and the init hint, instead of passing having checked nothing: a
// CI job pointed at the wrong directory goes red. They write nothing there.
func TestCheckAndVerifyOutsideAProjectFail(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"check"}, {"check", "--full"}, {"check", "--read-only"}, {"verify"}, {"--json", "verify"}} {
		stdout, stderr, code := runCLI(dir, "", firstUseNow, args...)
		if code != 3 || !strings.Contains(stdout+stderr, "NOT_FOUND") || !strings.Contains(stdout+stderr, "no custodian project at or above "+dir) || !strings.Contains(stdout+stderr, "custodian init") {
			t.Errorf("custodian %s outside a project: exit %d\n%s%s\nwant exit 3, NOT_FOUND naming %s and the init hint", strings.Join(args, " "), code, stdout, stderr, dir)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("check or verify created %v", entries)
	}
	// In a project without documents verify has nothing to say, and says so.
	if stdout, stderr, code := runCLI(dir, "", firstUseNow, "init"); code != 0 {
		t.Fatal(stdout, stderr)
	}
	if stdout, stderr, code := runCLI(dir, "", firstUseNow, "verify"); code != 0 || !strings.Contains(stdout, "ok") {
		t.Fatalf("verify in a project: exit %d\n%s%s", code, stdout, stderr)
	}
}
