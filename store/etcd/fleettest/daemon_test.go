package fleettest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
)

const daemonCount = 3

// proc is one `custodian serve --store etcd://…` process, run from its own
// project directory as if on its own machine.
type proc struct {
	cmd  *exec.Cmd
	dir  string
	addr string // http://host:port
	log  *syncbuf.Buffer
	done chan struct{} // closed when the process exited
	err  error         // its exit status, once done
}

var servingAddr = regexp.MustCompile(`msg="custodian daemon serving".*\btcp=(\S+)`)

// storeURL is the etcd:// store URL of prefix on the test server.
func storeURL(srv *etcdtest.Server, prefix string) string {
	return "etcd://" + srv.URL() + prefix
}

// fleetToken is the agents' token of the fleet's daemons (TCP needs one).
const fleetToken = "fleet-agents"

// serveCmd is `custodian serve` on the etcd store in dir, on an ephemeral
// loopback port and no socket.
func serveCmd(t testing.TB, dir, url string) *exec.Cmd {
	cmd := exec.Command(testbin.Path(t), "serve", "--store", url, "--addr", "127.0.0.1:0", "--socket", "",
		"--monitor-every", "0", "--admin-token", "fleet-admin", "--token", fleetToken)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CUSTODIAN_STORE=", "CUSTODIAN_TOKEN=", "CUSTODIAN_SERVER=")
	return cmd
}

// startDaemon starts `custodian serve --store etcd://…` in a fresh project
// directory and waits until it listens.
func startDaemon(t testing.TB, srv *etcdtest.Server, prefix string) *proc {
	t.Helper()
	return startDaemonIn(t, srv, prefix, t.TempDir())
}

// startDaemonIn is startDaemon in the project directory dir (a daemon
// restarted where one ran before).
func startDaemonIn(t testing.TB, srv *etcdtest.Server, prefix, dir string) *proc {
	t.Helper()
	p := &proc{dir: dir, log: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd = serveCmd(t, p.dir, storeURL(srv, prefix))
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = p.log.Write([]byte(line + "\n"))
			if m := servingAddr.FindStringSubmatch(line); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("daemon in %s logged:\n%s", p.dir, p.log.String())
		}
	})
	select {
	case a := <-addr:
		p.addr = "http://" + a
	case <-p.done:
		t.Fatalf("custodian serve exited before listening (%v):\n%s", p.err, p.log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("custodian serve did not listen within 30s:\n%s", p.log.String())
	}
	return p
}

// stop sends SIGTERM and checks the daemon stops cleanly: exit status 0,
// the pid file emptied.
func (p *proc) stop(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("daemon did not stop within 30s of SIGTERM:\n%s", p.log.String())
	}
	if p.err != nil {
		t.Fatalf("daemon exited with %v after SIGTERM:\n%s", p.err, p.log.String())
	}
	if !strings.Contains(p.log.String(), "custodian daemon stopped cleanly") {
		t.Fatalf("no clean stop logged:\n%s", p.log.String())
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, ".asdd", "state", "custodian.pid")); err != nil || len(b) != 0 {
		t.Fatalf("pid file after a clean stop: %q, %v", b, err)
	}
}

// A second daemon in a directory whose daemon runs is refused (exit 4,
// CONFLICT, naming the pid), even on etcd; a daemon in another directory on
// the same prefix starts (the fleet tests run three).
func TestSecondDaemonInOneDirectoryRefused(t *testing.T) {
	srv := etcdtest.Shared(t)
	prefix := etcdtest.Prefix(t)
	first := startDaemon(t, srv, prefix)
	cmd := serveCmd(t, first.dir, storeURL(srv, prefix))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 4 {
		t.Fatalf("second daemon in one directory: %v, want exit 4:\n%s", err, out)
	}
	pid := strings.TrimSpace(strings.Split(string(mustRead(t, filepath.Join(first.dir, ".asdd", "state", "custodian.pid"))), "\n")[0])
	if !strings.Contains(string(out), "CONFLICT") || !strings.Contains(string(out), "pid "+pid) {
		t.Fatalf("refusal does not say CONFLICT and name pid %s:\n%s", pid, out)
	}
	first.stop(t)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
