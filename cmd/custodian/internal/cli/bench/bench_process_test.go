package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// TestBenchDaemonRunsToTheEnd runs `custodian bench daemon` with tiny sizes
// as a process, the way a user runs it, and wants every row measured: each
// row is a kind of operation the daemon or the CLI must accept (a document
// write the API refuses fails the whole command, as the raw-write row once
// did when the document API came to serve only the custodian's documents).
func TestBenchDaemonRunsToTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts daemons and a few dozen custodian processes")
	}
	exe := testbin.Path(t)
	dir := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(exe, append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "CUSTODIAN_SERVER=")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("custodian %q: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}
	run("init")
	out := run("bench", "daemon", "--json", "--duration", "20ms", "--slices", "12", "--big", "24",
		"--tasks", "200", "--cli-ops", "2", "--clients", "1,3", "--proposal-slices", "300")
	var rep DaemonBenchReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("bench daemon --json: %v\n%s", err, out)
	}
	rows := []bench.Result{rep.Baseline, rep.CLI, rep.Process, rep.Reads, rep.Small, rep.Big, rep.MemoryRun, rep.CLISmall, rep.CLIBig, rep.Impl}
	for _, group := range [][]bench.Result{rep.Daemon, rep.Writes, rep.HTTP, rep.Proposals} {
		if len(group) != 2 {
			t.Errorf("bench daemon --clients 1,3: %d rows of a kind, want 2: %+v", len(group), group)
		}
		rows = append(rows, group...)
	}
	for _, r := range rows {
		if r.Name == "" || r.Ops == 0 || r.PerSecond <= 0 || r.P50 <= 0 {
			t.Errorf("bench daemon: row not measured: %+v", r)
		}
	}
	if rep.CLICostRatio <= 0 || rep.CostRatio <= 0 {
		t.Errorf("bench daemon: cost ratios %v (CLI) and %v (daemon), want both measured", rep.CLICostRatio, rep.CostRatio)
	}
	if rep.Memory.Tasks != 200 || rep.Memory.DocBytes == 0 {
		t.Errorf("bench daemon: memory measured on %+v, want 200 tasks", rep.Memory)
	}
	left, err := filepath.Glob(filepath.Join(dir, ".custodian-bench-*"))
	if err != nil || len(left) > 0 {
		t.Errorf("bench daemon left its scratch files: %v %v", left, err)
	}
	// The project bench ran in holds only what init made: no document of
	// a scratch project leaked into it.
	for _, marker := range []string{".impl", ".agents", ".workflow"} {
		if _, err := os.Stat(filepath.Join(dir, marker)); !os.IsNotExist(err) {
			t.Errorf("bench daemon wrote %s into the project it ran in (%v)", marker, err)
		}
	}
}
