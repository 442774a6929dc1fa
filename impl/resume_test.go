package impl

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func ids(ts []Task) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.ID)
	}
	return out
}

func TestContinueAndReady(t *testing.T) {
	type upd struct {
		id string
		s  Status
	}
	cases := []struct {
		name      string
		updates   []upd
		retries   map[string]int
		phase     int // 0: none
		state     ResumeState
		tasks     []string
		waitingOn []int
		ready     []string
	}{
		{name: "fresh plan starts at phase 1", phase: 1, state: ResumeReady, tasks: []string{"1.1", "1.2"}, ready: []string{"1.1", "1.2", "3.1"}},
		{name: "in flight phase waits", updates: []upd{{"1.1", InProgress}, {"1.2", Validating}}, phase: 1, state: ResumeWaiting, tasks: []string{}, ready: []string{"3.1"}},
		{name: "failed task is retried", updates: []upd{{"1.1", Merged}, {"1.2", Failed}}, phase: 1, state: ResumeReady, tasks: []string{"1.2"}, ready: []string{"1.2", "3.1"}},
		{name: "retries exhausted waits", updates: []upd{{"1.1", Merged}, {"1.2", Failed}}, retries: map[string]int{"1.2": 2}, phase: 1, state: ResumeWaiting, tasks: []string{}, ready: []string{"3.1"}},
		{name: "phase 1 done moves to 2", updates: []upd{{"1.1", Merged}, {"1.2", Abandoned}}, phase: 2, state: ResumeReady, tasks: []string{"2.1"}, ready: []string{"2.1", "3.1"}},
		{name: "passed is not done", updates: []upd{{"1.1", Merged}, {"1.2", Passed}}, phase: 1, state: ResumeWaiting, tasks: []string{}, ready: []string{"3.1"}},
		{name: "complete", updates: []upd{{"1.1", Merged}, {"1.2", Merged}, {"2.1", Merged}, {"3.1", Abandoned}}, state: ResumeComplete, tasks: []string{}, ready: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustNew(t)
			add(t, m, "1.1", 1)
			add(t, m, "1.2", 1)
			add(t, m, "2.1", 2, 1)
			add(t, m, "3.1", 3) // independent phase
			for _, u := range c.updates {
				set(t, m, u.id, u.s)
			}
			for id, r := range c.retries {
				task, _ := m.Task(id)
				task.Retries = r
			}
			r := m.Continue()
			gotPhase := 0
			if r.Phase != nil {
				gotPhase = *r.Phase
			}
			if gotPhase != c.phase || r.State != c.state || !slices.Equal(ids(r.Tasks), c.tasks) || !slices.Equal(r.WaitingOn, c.waitingOn) {
				t.Errorf("Continue = phase %d %s %v waiting %v; want phase %d %s %v waiting %v", gotPhase, r.State, ids(r.Tasks), r.WaitingOn, c.phase, c.state, c.tasks, c.waitingOn)
			}
			if got := ids(m.Ready()); !slices.Equal(got, c.ready) {
				t.Errorf("Ready = %v, want %v", got, c.ready)
			}
		})
	}
}

func TestContinueBlockedByCycle(t *testing.T) {
	m := mustNew(t)
	add(t, m, "1.1", 1, 2)
	add(t, m, "2.1", 2, 1)
	r := m.Continue()
	if r.State != ResumeBlocked || r.Phase == nil || *r.Phase != 1 || !slices.Equal(r.WaitingOn, []int{2}) {
		t.Fatalf("got %+v", r)
	}
	want := []string{"phase=1", "status=blocked", "waiting_on=2"}
	if d := cmp.Diff(want, ResumeLines(r)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got := m.Ready(); len(got) != 0 {
		t.Errorf("Ready = %v", ids(got))
	}
}

type probeMap map[string]GitState

func (p probeMap) BranchState(b string) (GitState, error) {
	if s, ok := p[b]; ok {
		return s, nil
	}
	return BranchMissing, nil
}

func TestIsStale(t *testing.T) {
	for _, s := range Statuses {
		for _, g := range []GitState{BranchPresent, BranchMissing, BranchMerged} {
			want := (g == BranchMissing && s != Merged && s != Abandoned) || (g == BranchMerged && s != Merged)
			if got := IsStale(s, g); got != want {
				t.Errorf("IsStale(%s, %s) = %v", s, g, got)
			}
		}
	}
}

func TestStaleWithProbe(t *testing.T) {
	m := mustNew(t)
	for _, id := range []string{"1.1", "1.2", "1.3", "1.4"} {
		add(t, m, id, 1)
	}
	up := func(id string, s Status, branch string) {
		if _, err := m.UpdateStatus(StatusUpdate{ID: id, Status: s, Branch: branch}, t0); err != nil {
			t.Fatal(err)
		}
	}
	up("1.1", InProgress, "impl/003/1.1") // branch deleted behind our back
	up("1.2", Passed, "impl/003/1.2")     // merged by hand, manifest not told
	up("1.3", Merged, "impl/003/1.3")     // merged and cleaned up: fine
	up("1.4", Validating, "impl/003/1.4") // present: fine
	got, err := m.Stale(probeMap{"impl/003/1.2": BranchMerged, "impl/003/1.4": BranchPresent})
	if err != nil {
		t.Fatal(err)
	}
	want := []StaleTask{
		{ID: "1.1", Status: InProgress, Branch: "impl/003/1.1", Git: BranchMissing},
		{ID: "1.2", Status: Passed, Branch: "impl/003/1.2", Git: BranchMerged},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if StaleLine(got[0]) != "1.1|in_progress|impl/003/1.1|missing" {
		t.Errorf("line %q", StaleLine(got[0]))
	}
}

// gitRepo makes a repository with main, a merged branch, an unmerged one.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	write("a")
	run("add", "a")
	run("commit", "-q", "-m", "a")
	run("checkout", "-q", "-b", "impl/003/1.1")
	write("b")
	run("add", "b")
	run("commit", "-q", "-m", "b")
	run("checkout", "-q", "main")
	run("merge", "-q", "--no-ff", "-m", "merge 1.1", "impl/003/1.1")
	run("checkout", "-q", "-b", "impl/003/1.2")
	write("c")
	run("add", "c")
	run("commit", "-q", "-m", "c")
	run("checkout", "-q", "main")
	return dir
}

func TestGitBranchState(t *testing.T) {
	dir := gitRepo(t)
	cases := []struct {
		branch, base string
		want         GitState
	}{
		{"impl/003/1.1", "", BranchMerged},
		{"impl/003/1.2", "", BranchPresent},
		{"impl/003/1.2", "impl/003/1.2", BranchMerged},
		{"impl/003/9.9", "", BranchMissing},
		{"--output=/tmp/x", "", BranchMissing},
	}
	for _, c := range cases {
		got, err := (&Git{Dir: dir, Base: c.base}).BranchState(c.branch)
		if err != nil || got != c.want {
			t.Errorf("BranchState(%q, base %q) = %q, %v; want %q", c.branch, c.base, got, err, c.want)
		}
	}
	if _, err := (&Git{Dir: dir, Base: "nope"}).BranchState("impl/003/1.1"); err == nil {
		t.Error("unknown base accepted")
	}
	if _, err := (&Git{Dir: t.TempDir()}).BranchState("x"); err == nil {
		t.Error("a directory outside any repository accepted")
	}
}

func TestStaleAgainstRealGit(t *testing.T) {
	dir := gitRepo(t)
	m := mustNew(t)
	add(t, m, "1.1", 1)
	add(t, m, "1.2", 1)
	add(t, m, "1.3", 1)
	for id, s := range map[string]Status{"1.1": Passed, "1.2": InProgress, "1.3": Validating} {
		if _, err := m.UpdateStatus(StatusUpdate{ID: id, Status: s, Branch: "impl/003/" + id}, t0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := m.Stale(&Git{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []StaleTask{
		{ID: "1.1", Status: Passed, Branch: "impl/003/1.1", Git: BranchMerged},
		{ID: "1.3", Status: Validating, Branch: "impl/003/1.3", Git: BranchMissing},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestResumeProperties: on random plans, --continue's tasks are all in
// --ready, every ready task is runnable with its dependency phases done,
// and --continue reports complete exactly when every task is final.
func TestResumeProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := mustNew(rt)
		phases := rapid.IntRange(1, 4).Draw(rt, "phases")
		for p := 1; p <= phases; p++ {
			var deps []int
			for d := 1; d <= phases; d++ {
				if d != p && rapid.Bool().Draw(rt, "dep") {
					deps = append(deps, d)
				}
			}
			for i := range rapid.IntRange(0, 3).Draw(rt, "tasks") {
				id := fmt.Sprintf("%d.%d", p, i)
				add(rt, m, id, p, deps...)
				task, _ := m.Task(id)
				task.Status = rapid.SampledFrom(Statuses).Draw(rt, "status")
				task.Retries = rapid.IntRange(0, 3).Draw(rt, "retries")
			}
		}
		ready := m.Ready()
		readyIDs := map[string]bool{}
		for _, task := range ready {
			readyIDs[task.ID] = true
			if !Runnable(task) || len(m.pendingDeps(task.Phase)) > 0 {
				rt.Fatalf("ready task %s is not runnable now", task.ID)
			}
		}
		r := m.Continue()
		for _, task := range r.Tasks {
			if !readyIDs[task.ID] {
				rt.Fatalf("--continue task %s is not ready", task.ID)
			}
			if r.Phase == nil || task.Phase != *r.Phase {
				rt.Fatalf("--continue task %s is outside phase %v", task.ID, r.Phase)
			}
		}
		allFinal := true
		for _, task := range m.Tasks {
			allFinal = allFinal && task.Status.Terminal()
		}
		if (r.State == ResumeComplete) != allFinal {
			rt.Fatalf("state %s with all final = %v", r.State, allFinal)
		}
		if r.State == ResumeReady && len(r.Tasks) == 0 || r.State != ResumeReady && len(r.Tasks) > 0 {
			rt.Fatalf("state %s with %d tasks", r.State, len(r.Tasks))
		}
	})
}
