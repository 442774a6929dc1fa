package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cyclecmd "github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cycle"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/cycle/progress"
	"github.com/custodian-dev/custodian/internal/testbin"
)

// cycleBin runs the built custodian binary in dir as a separate process
// and returns stdout, stderr and the exit code.
func cycleBin(t *testing.T, bin, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("run custodian %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// TestCycleProcesses drives a cycle with the built binary, one OS process
// per command, the way agents do: 20 processes append to the change log at
// once (nothing lost, one commit each, progress files matching the final
// state), then the control signals are observed across processes.
func TestCycleProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := testbin.Path(t)
	dir := t.TempDir()
	must := func(args ...string) string {
		t.Helper()
		out, errOut, code := cycleBin(t, bin, dir, nil, args...)
		if code != 0 {
			t.Fatalf("custodian %v: exit %d: %s", args, code, errOut)
		}
		return strings.TrimSpace(out)
	}
	id := must("cycle", "create", "Implement OAuth authentication")
	if cycle.CheckID(id) != nil || !strings.HasPrefix(id, "cycle-v1-") {
		t.Fatalf("create printed %q", id)
	}
	must("cycle", "iterate", id)
	must("cycle", "agent", id, "cd", "running")

	const n = 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f := fmt.Sprintf("src/file%02d.ts", i)
			out, errOut, code := cycleBin(t, bin, dir, []string{fmt.Sprintf("CUSTODIAN_ACTOR=cd-worker-%d", i)},
				"cycle", "change", id, "--file", f, "--action", "create", "-m", "worker")
			if code != 0 || !strings.Contains(out, "cd created "+f) || errOut != "" {
				errs[i] = fmt.Sprintf("worker %d: exit %d %q %q", i, code, out, errOut)
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

	var st cycle.State
	if err := json.Unmarshal([]byte(must("--json", "cycle", "show", id)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Changes == nil || len(st.Changes.Changes) != n || st.Changes.TotalFiles != n {
		t.Fatalf("change log after %d concurrent appends: %+v", n, st.Changes)
	}
	var hist []json.RawMessage
	if err := json.Unmarshal([]byte(must("--json", "history", cycle.Key(id))), &hist); err != nil {
		t.Fatal(err)
	}
	if len(hist) != 3+n {
		t.Errorf("%d commits, want %d", len(hist), 3+n)
	}
	must("verify", cycle.Key(id))

	// Whatever order the processes synced in, the progress files say what
	// the final state says.
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	files, err := progress.Read(root, id)
	if err != nil {
		t.Fatal(err)
	}
	want, err := progress.Render(st)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want[progress.ChangesFile]), string(files[progress.ChangesFile])); diff != "" {
		t.Errorf("changes.log is stale (-want +got):\n%s", diff)
	}
	if rev := strings.TrimSpace(cycleReadFile(t, filepath.Join(dir, cycle.ProgressDir(id), ".revision"))); rev != fmt.Sprint(3+n) {
		t.Errorf(".revision %s, want %d", rev, 3+n)
	}

	// Control signals, each observed by a separate process.
	signal := func(wantCode int, wantAction string) {
		t.Helper()
		out, errOut, code := cycleBin(t, bin, dir, nil, "--json", "cycle", "signal", id)
		var sig cycle.Signal
		if err := json.Unmarshal([]byte(out), &sig); err != nil {
			t.Fatalf("signal: %v: %q %q", err, out, errOut)
		}
		if code != wantCode || sig.Action != wantAction {
			t.Errorf("signal: exit %d %s, want %d %s", code, sig.Action, wantCode, wantAction)
		}
	}
	signal(cyclecmd.SignalExitContinue, cycle.ActionContinue)
	must("cycle", "pause", id, "--reason", "review")
	signal(cyclecmd.SignalExitPause, cycle.ActionPause)
	before := cycleReadFile(t, filepath.Join(dir, cycle.Key(id)))
	if _, errOut, code := cycleBin(t, bin, dir, nil, "cycle", "change", id, "--file", "late.ts", "--action", "create"); code != 3 || !strings.Contains(errOut, "paused") {
		t.Errorf("change while paused: exit %d %s", code, errOut)
	}
	if after := cycleReadFile(t, filepath.Join(dir, cycle.Key(id))); after != before {
		t.Error("a rejected change altered the cycle")
	}
	// An agent waits for the resume in its own process.
	waiter := exec.Command(bin, "cycle", "signal", id, "--wait", "--timeout", "60s")
	waiter.Dir = dir
	var waitOut bytes.Buffer
	waiter.Stdout = &waitOut
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	must("cycle", "resume", id)
	if err := waiter.Wait(); err != nil || waitOut.String() != "continue\n" {
		t.Errorf("signal --wait across processes: %v %q", err, waitOut.String())
	}
	signal(cyclecmd.SignalExitContinue, cycle.ActionContinue)
	must("cycle", "stop", id, "--reason", "demo over")
	signal(cyclecmd.SignalExitStop, cycle.ActionStop)
	if _, errOut, code := cycleBin(t, bin, dir, nil, "cycle", "signal", "cycle-v1-20990101T000000-none00"); code != 3 || !strings.Contains(errOut, "NOT_FOUND") {
		t.Errorf("signal of unknown cycle: exit %d %s", code, errOut)
	}
}

func cycleReadFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
