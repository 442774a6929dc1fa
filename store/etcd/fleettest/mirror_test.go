package fleettest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
)

// hookIdiom is how principled's TaskCompleted and SubagentStop hooks read
// a task's status.
const hookIdiom = `.tasks[] | select(.id=="1.1") | .status`

// jqPath is the jq binary, as the plugins' hooks run it: the test is
// skipped without it, and fails without it when $CI is set (.ci/install
// installs it).
func jqPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("jq")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("jq not installed (.ci/install installs it): %v", err)
		}
		t.Skipf("jq not installed (apt-get install jq; .ci/install does it): %v", err)
	}
	return p
}

// jq runs the hooks' idiom on .impl/manifest.json in dir, as a hook does
// (in the project directory, on the relative path).
func jq(t *testing.T, bin, dir string) string {
	t.Helper()
	cmd := exec.Command(bin, "-r", hookIdiom, ".impl/manifest.json")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "jq failed: " + err.Error() + ": " + string(out)
	}
	return strings.TrimSpace(string(out))
}

// custodian runs the CLI in dir with args and the environment of a user
// with no store or daemon configured; it returns the combined output and
// the exit code.
//
// A leading --store URL or --server URL is passed as $CUSTODIAN_STORE or
// $CUSTODIAN_SERVER: the drop-in commands (impl) parse their own arguments,
// as the scripts they replace did.
func custodian(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	env := append(os.Environ(), "CUSTODIAN_STORE=", "CUSTODIAN_TOKEN=", "CUSTODIAN_SERVER=", "CUSTODIAN_ACTOR=fleet-test")
	for len(args) >= 2 && (args[0] == "--store" || args[0] == "--server") {
		env = append(env, "CUSTODIAN_"+strings.ToUpper(strings.TrimPrefix(args[0], "--"))+"="+args[1])
		if args[0] == "--server" {
			// A daemon started with no --token takes changes over TCP
			// only with its admin token (serveCmd's).
			env = append(env, "CUSTODIAN_ADMIN_TOKEN=fleet-admin")
		}
		args = args[2:]
	}
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("custodian %v: %v", args, err)
	return "", 0
}

func mustRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, code := custodian(t, dir, args...)
	if code != 0 {
		t.Fatalf("custodian %s: exit %d:\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// eventually polls ok for up to 10 s.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mirrorRev(dir, key string) uint64 {
	s, err := mirror.Read(dir, key)
	if err != nil || s.State != "ok" {
		return 0
	}
	return s.Rev
}

// Two daemons on one etcd, in two project directories standing for two
// machines. A commit through the first appears in the second's mirror,
// where principled's hook idiom reads it with jq; a mirror edited or
// deleted by hand is restored at once; the second daemon SIGKILLed, the
// state changed while it is down and its mirrors damaged, then restarted,
// rebuilds its mirrors.
func TestMirrorsOnTwoMachines(t *testing.T) {
	jqBin := jqPath(t)
	srv := etcdtest.Shared(t)
	prefix := etcdtest.Prefix(t)
	a := startDaemon(t, srv, prefix)
	b := startDaemon(t, srv, prefix)
	viaA := func(args ...string) string {
		return mustRun(t, a.dir, append([]string{"--server", a.addr}, args...)...)
	}
	viaA("impl", "--init", "--plan-path", "plan.md", "--plan-number", "1", "--plan-title", "Fleet")
	viaA("impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "first task")
	viaA("impl", "--add-task", "--task-id", "1.2", "--phase", "1", "--description", "second task")
	eventually(t, "B's mirror has task 1.1 pending", func() bool { return jq(t, jqBin, b.dir) == "pending" })
	viaA("impl", "--update-status", "--task-id", "1.1", "--status", "in_progress")
	eventually(t, "B's mirror has task 1.1 in_progress", func() bool { return jq(t, jqBin, b.dir) == "in_progress" })
	if got := jq(t, jqBin, a.dir); got != "in_progress" {
		t.Fatalf("on A (the daemon that committed): %q", got)
	}
	// The mirror is the store's value byte for byte, at its revision.
	got := mustRun(t, b.dir, "--server", b.addr, "--json", "get", ".impl/manifest.json")
	if !strings.Contains(got, `"revision": 4`) || mirrorRev(b.dir, ".impl/manifest.json") != 4 {
		t.Fatalf("B's mirror at revision %d; the store says:\n%s", mirrorRev(b.dir, ".impl/manifest.json"), got)
	}

	// A hand edit on B is kept aside and undone; so is a deletion.
	mp := filepath.Join(b.dir, ".impl", "manifest.json")
	if err := os.WriteFile(mp, []byte(`{"tasks":[{"id":"1.1","status":"merged"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the hand edit undone", func() bool { return jq(t, jqBin, b.dir) == "in_progress" })
	kept, _ := filepath.Glob(mp + ".direct-edit-*")
	if len(kept) != 1 {
		t.Fatalf("edited mirror kept as %v", kept)
	}
	if k, _ := os.ReadFile(kept[0]); !strings.Contains(string(k), "merged") {
		t.Fatalf("kept file holds %q", k)
	}
	// The report follows the restore.
	eventually(t, "the edit reported in the daemon's log", func() bool { return strings.Contains(b.log.String(), "edited by hand") })
	notices, _ := filepath.Glob(filepath.Join(b.dir, ".asdd", "escalations", "direct-edit-*.md"))
	if len(notices) != 1 {
		t.Fatalf("edit not reported: notices %v, log:\n%s", notices, b.log.String())
	}
	if err := os.Remove(mp); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted mirror written again", func() bool { return jq(t, jqBin, b.dir) == "in_progress" })

	// SIGKILL B; commit through A while B is down; damage B's mirrors.
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-b.done
	viaA("impl", "--update-status", "--task-id", "1.1", "--status", "passed")
	viaA("impl", "--update-status", "--task-id", "1.2", "--status", "in_progress")
	if got := jq(t, jqBin, b.dir); got != "in_progress" {
		t.Fatalf("B's mirror changed while B was down: %q", got)
	}
	if err := os.Remove(mp); err != nil {
		t.Fatal(err)
	}
	// A temporary file a killed writer left behind.
	stale := mp + ".tmp-999999999-1-1"
	if err := os.WriteFile(stale, []byte(`{"torn":`), 0o644); err != nil {
		t.Fatal(err)
	}
	b2 := startDaemonIn(t, srv, prefix, b.dir)
	eventually(t, "B's mirrors rebuilt after a restart", func() bool { return jq(t, jqBin, b2.dir) == "passed" })
	if mirrorRev(b2.dir, ".impl/manifest.json") != 6 {
		t.Fatalf("rebuilt mirror at revision %d, want 6", mirrorRev(b2.dir, ".impl/manifest.json"))
	}
	if _, err := os.Stat(stale); err == nil {
		t.Fatal("a dead writer's temporary file left beside the mirror")
	}
	a.stop(t)
	b2.stop(t)
}

// Without a daemon, a command on etcd refreshes the mirrors of what it
// reads or commits; custodian mirror --once writes them all; custodian
// status shows how far each mirror is behind. An unreachable cluster:
// commands fail within the dial timeout naming the endpoint, and the
// mirrors stay as they were, byte for byte, with their revision.
func TestMirrorsWithoutADaemon(t *testing.T) {
	jqBin := jqPath(t)
	srv := etcdtest.Shared(t)
	prefix := etcdtest.Prefix(t)
	url := storeURL(srv, prefix)
	a, b := t.TempDir(), t.TempDir()
	run := func(dir string, args ...string) string {
		return mustRun(t, dir, append([]string{"--store", url}, args...)...)
	}
	run(a, "init", "--sprint", "S1")
	run(a, "impl", "--init", "--plan-path", "plan.md", "--plan-number", "1", "--plan-title", "Fleet")
	run(a, "impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "first task")
	if got := jq(t, jqBin, a); got != "pending" {
		t.Fatalf("the committing command's own mirror: %q", got)
	}
	// B reads the task: that document's mirror is written; the ASDD
	// manifest, not read, is not.
	run(b, "impl", "--get-task", "--task-id", "1.1")
	if got := jq(t, jqBin, b); got != "pending" {
		t.Fatalf("a read's mirror: %q", got)
	}
	if _, err := os.Stat(filepath.Join(b, ".asdd", "state", "manifest.json")); err == nil {
		t.Fatal("a document the command did not read was mirrored")
	}
	out := run(b, "mirror", "--once")
	for _, want := range []string{".asdd/state/manifest.json", ".impl/manifest.json", "written", "current"} {
		if !strings.Contains(out, want) {
			t.Fatalf("mirror --once output lacks %q:\n%s", want, out)
		}
	}
	if mirrorRev(b, ".asdd/state/manifest.json") == 0 {
		t.Fatal("mirror --once did not write the ASDD manifest")
	}
	run(a, "impl", "--update-status", "--task-id", "1.1", "--status", "in_progress")
	status := run(b, "status")
	if !strings.Contains(status, "Mirrors (") || !strings.Contains(status, ".impl/manifest.json r2 of r3 (1 behind)") {
		t.Fatalf("status does not show the mirror lag:\n%s", status)
	}

	// The cluster unreachable: fail fast, naming the endpoint; nothing on
	// disk touched.
	before := snapshotDir(t, b)
	dead := "etcd://127.0.0.1:1" + prefix + "?dial-timeout=300ms"
	for _, args := range [][]string{
		{"impl", "--get-task", "--task-id", "1.1"},
		{"impl", "--update-status", "--task-id", "1.1", "--status", "passed"},
		{"mirror", "--once"},
		{"status"},
	} {
		start := time.Now()
		out, code := custodian(t, b, append([]string{"--store", dead}, args...)...)
		took := time.Since(start)
		if code == 0 || !strings.Contains(out, "127.0.0.1:1") {
			t.Fatalf("%v on an unreachable cluster: exit %d:\n%s", args, code, out)
		}
		if took > 5*time.Second {
			t.Fatalf("%v took %v with a 300ms dial timeout", args, took)
		}
	}
	if after := snapshotDir(t, b); !equalSnapshots(before, after) {
		t.Fatalf("files changed while the cluster was unreachable:\nbefore %v\nafter  %v", keysOf(before), keysOf(after))
	}
	if got := jq(t, jqBin, b); got != "pending" || mirrorRev(b, ".impl/manifest.json") != 2 {
		t.Fatalf("stale mirror not kept with its revision: %q r%d", got, mirrorRev(b, ".impl/manifest.json"))
	}
}

// snapshotDir reads every regular file under dir.
func snapshotDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[strings.TrimPrefix(p, dir)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func equalSnapshots(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

func keysOf(m map[string][]byte) []string {
	var ks []string
	for k, v := range m {
		ks = append(ks, fmt.Sprintf("%s (%d bytes)", k, len(v)))
	}
	return ks
}
