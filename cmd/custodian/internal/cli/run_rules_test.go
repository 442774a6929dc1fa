package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
)

// The pipeline's rules through `custodian run`: the runner, real agent processes.

// 1. run --quick with QA scoring 0.30 (its minimum is 0.85): the quick fix
// halts, is escalated and logged, and run exits 3.
func TestRunQuickFixGatedByQA(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	t.Parallel()
	p := newRunProject(t, nil, "SCORE_qa=0.30")
	out := p.runner(3, "run", "--quick", "Fix typo in login header")
	m := p.manifest()
	s := m.Slice("QUICK-001")
	if s == nil || s.Status != asdd.Blocked || s.HaltedAgent != "qa" || s.FailureMode != asdd.ModeBelowMinimum {
		t.Fatalf("quick slice %+v\n%s", s, out)
	}
	log, err := os.ReadFile(p.dir + "/" + asdd.FailureLogPath)
	if err != nil || !strings.Contains(string(log), "| qa | QUICK_FIX |") {
		t.Fatalf("failure log: %v\n%s", err, log)
	}
}

// 3 and 7. The runner runs Refactor before the implementation agent
// reports; an implementation below 0.75 in a git repository is committed
// to a feature branch named in the block record.
func TestRunImplementationFeatureBranch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	t.Parallel()
	p := newRunProject(t, nil, "SCORE_implementation=0.71")
	git := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", p.dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "project")
	p.want(0, "slice", "add", "S1", "--name", "Settlement")
	p.write("src/settlement.go", "package src // the implementation agent's work\n")
	out := p.runner(3, "run", "S1")
	s := p.manifest().Slice("S1")
	branch := "asdd/S1/implementation-attempt-1"
	if s.Status != asdd.Blocked || s.HaltedAgent != "implementation" || s.FeatureBranch != branch || !strings.Contains(s.ReviewRequired, "human code review of branch "+branch) {
		t.Fatalf("slice %s %q %q %q\n%s", s.Status, s.HaltedAgent, s.FeatureBranch, s.ReviewRequired, out)
	}
	if got := git("show", branch+":src/settlement.go"); !strings.Contains(got, "the implementation agent's work") {
		t.Fatalf("branch content %q", got)
	}
	if cur := git("rev-parse", "--abbrev-ref", "HEAD"); cur != "main" {
		t.Fatalf("checked-out branch %s", cur)
	}
	es := p.entries()
	refactor, report := -1, -1
	for i, e := range es {
		if e.what == "start" && e.agent == "refactor" {
			refactor = i
		}
		if e.what == "start" && e.agent == "implementation" && e.task == "-" {
			report = i
		}
	}
	if refactor < 0 || report < refactor {
		t.Fatalf("refactor at %d, implementation at %d", refactor, report)
	}
	if show := p.want(0, "slice", "show", "S1"); !strings.Contains(show, "feature branch: "+branch) {
		t.Fatalf("slice show:\n%s", show)
	}
}
