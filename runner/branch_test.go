package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
)

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// atImplementation is a slice whose implementation agent runs next.
func atImplementation(t *testing.T, cfg *asdd.Config) *memState {
	st := newMemState(t, cfg, "S")
	for _, a := range []string{"discovery", "spec", "validation", "domain", "design", "task_planning", "refactor"} {
		p := asdd.Proposal{Agent: a, Slice: "S", Score: 0.97}
		if name := phaseArtifact[a]; name != "" {
			art, _ := st.Artifact(name, "specs/"+name+".md", "")
			p.Artifacts = []asdd.Artifact{art}
		}
		st.must(t, p)
	}
	return st
}

// Seed 004: implementation below 0.75 → "commit to feature branch; require
// human code review". The runner commits the agent's work to a branch
// named in the block record, leaving the work tree, the index and the
// checked-out branch as they were.
func TestImplementationBelowMinimumCommitsFeatureBranch(t *testing.T) {
	cfg := testConfig(0)
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(root, "README.md"), []byte("project\n"), 0o644)
	git(t, root, "add", "README.md")
	git(t, root, "commit", "-qm", "initial")
	head := git(t, root, "rev-parse", "HEAD")
	// The agent's work in the work tree.
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "settlement.go"), []byte("package src\n"), 0o644)

	st := atImplementation(t, cfg)
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun {
		return fakeRun{out: result(env["CUSTODIAN_AGENT"], 0.71)}
	}}
	var events []Event
	r, err := New(Options{Root: root, Config: cfg, State: st, Starter: fs, Poll: 5 * time.Millisecond, Env: []string{"PATH=" + os.Getenv("PATH")},
		Progress: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background(), []string{"S"})
	if err != nil {
		t.Fatal(err)
	}
	s := st.slice("S")
	branch := "asdd/S/implementation-attempt-1"
	if s.Status != asdd.Blocked || s.FeatureBranch != branch || !strings.Contains(s.ReviewRequired, "human code review of branch "+branch) || sum.Slices[0].Outcome != OutcomeHalted {
		t.Fatalf("slice %s branch %q review %q; events %+v", s.Status, s.FeatureBranch, s.ReviewRequired, events)
	}
	if e := s.OpenEscalation(); e == nil || e.FeatureBranch != branch {
		t.Fatalf("escalation %+v", e)
	}
	if got := git(t, root, "show", branch+":src/settlement.go"); got != "package src" {
		t.Fatalf("branch content %q", got)
	}
	if parent := git(t, root, "rev-parse", branch+"^"); parent != head {
		t.Fatalf("branch parent %s, want HEAD %s", parent, head)
	}
	if cur := git(t, root, "rev-parse", "--abbrev-ref", "HEAD"); cur != "main" || git(t, root, "rev-parse", "HEAD") != head {
		t.Fatalf("checked-out branch moved: %s", cur)
	}
	if st := git(t, root, "status", "--porcelain", "--", "src"); st != "?? src/" {
		t.Fatalf("work tree or index changed: %q", st)
	}
	if files := git(t, root, "ls-tree", "-r", "--name-only", branch); files != "README.md\nsrc/settlement.go" {
		t.Fatalf("branch holds %q", files)
	}
	// The same name is never moved.
	if _, err := CommitToBranch(context.Background(), root, branch, "again"); err == nil {
		t.Fatal("an existing branch was overwritten")
	}
}

// Outside a git repository the halt stands and the runner says why no
// branch was made.
func TestImplementationBelowMinimumWithoutGit(t *testing.T) {
	cfg := testConfig(0)
	st := atImplementation(t, cfg)
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun { return fakeRun{out: result(env["CUSTODIAN_AGENT"], 0.71)} }}
	var events []Event
	r := newTestRunner(t, cfg, st, fs, Options{Progress: func(e Event) { events = append(events, e) }})
	if _, err := r.Run(context.Background(), []string{"S"}); err != nil {
		t.Fatal(err)
	}
	s := st.slice("S")
	if s.Status != asdd.Blocked || s.FeatureBranch != "" || !strings.Contains(s.ReviewRequired, "human code review") {
		t.Fatalf("slice %s %q %q", s.Status, s.FeatureBranch, s.ReviewRequired)
	}
	found := false
	for _, e := range events {
		found = found || strings.Contains(e.Detail, "not a git repository")
	}
	if !found {
		t.Fatalf("events %+v", events)
	}
}
