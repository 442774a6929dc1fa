package cli

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
)

// The commands that parse their own arguments (impl, apply) take the
// inherited global flags like every other command, before or after the
// command's name: `custodian --server URL impl …` sends the operation to
// the daemon at URL (here serving another project, so where the manifest
// lands shows who served it).
func TestImplAndApplyTakeTheInheritedServerFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	served := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	served.want(0, "init")
	out := &syncbuf.Buffer{}
	cmd := exec.Command(served.bin, "-C", served.dir, "serve", "--socket", "", "--addr", addr, "--token", "agents-token", "--monitor-every", "0", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	c, err := client.New("http://"+addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Health(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not answering: %v\n%s", err, out.String())
		}
	}
	url := "http://" + addr
	elsewhere := &proc{t: t, bin: served.bin, dir: t.TempDir(), env: []string{"CUSTODIAN_SERVER=", "CUSTODIAN_TOKEN=agents-token", "CUSTODIAN_ADMIN_TOKEN="}}
	elsewhere.want(0, "--server", url, "impl", "--init", "--plan-path", "plan.md", "--plan-number", "1", "--plan-title", "T")
	elsewhere.want(0, "impl", "--server="+url, "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "--server")
	if got := elsewhere.want(0, "--server", url, "--json", "impl", "--get-task", "--task-id", "1.1"); !strings.Contains(got, `"--server"`) {
		t.Errorf("the task's description (a value that looks like a flag) was lost:\n%s", got)
	}
	elsewhere.want(0, "--server", url, "state", "init", "auth")
	elsewhere.want(0, "--server", url, "apply", "--key", ".agents/tmp/state.json", "--jq", `.currentPhase = "1.1"`)
	elsewhere.want(0, "apply", "--server", url, "--key", ".agents/tmp/state.json", "--jq", `.currentPhase = "1.2"`)
	for _, f := range []string{".impl/manifest.json", ".agents/tmp/state.json"} {
		if _, err := os.Stat(filepath.Join(served.dir, f)); err != nil {
			t.Errorf("the daemon's project has no %s: %v", f, err)
		}
		if _, err := os.Stat(filepath.Join(elsewhere.dir, f)); err == nil {
			t.Errorf("%s was written in the caller's directory, not through the daemon", f)
		}
	}
}
