package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/internal/testbin"
)

// TestStateConcurrentProcesses: one custodian process per phase records its
// output at the same time; every output and every files entry survives.
func TestStateConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testbin.Path(t)
	dir := t.TempDir()
	if _, stderr, code := implExec(t, dir, time.Now(), "", "state", "init", "Parallel phases"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]string, len(agentstate.Phases))
	for i, phase := range agentstate.Phases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "state", "record-output", phase, "-", "--actor", "agent-"+phase)
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader("output of phase " + phase + "\n")
			<-start
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Sprintf("%s: %v: %s", phase, err, out)
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dir, ".agents", "tmp", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := agentstate.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range agentstate.Phases {
		want := ".agents/tmp/phases/" + phase + "-output.md"
		if v, err := agentstate.Lookup(st, "files."+phase); err != nil || v != want {
			t.Errorf("files[%s] = %v, %v", phase, v, err)
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(want)))
		if err != nil || string(b) != "output of phase "+phase+"\n" {
			t.Errorf("output of %s = %q, %v", phase, b, err)
		}
	}
	if n := len(implHistoryOf(t, dir, agentstate.Key)); n != 1+len(agentstate.Phases) {
		t.Errorf("%d commits, want %d", n, 1+len(agentstate.Phases))
	}
}
