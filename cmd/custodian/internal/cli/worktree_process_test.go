package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
)

// TestWorktreesShareOneState: three agents — two in linked git worktrees
// (made by a real `git worktree add`) and one in the main checkout, each
// working from a subdirectory — commit to the task manifest at once, as
// separate custodian processes. Every commit lands in the main checkout's
// one journal; no worktree or subdirectory gets state of its own.
func TestWorktreesShareOneState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	bin := testbin.Path(t)
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	run := func(dir string, name string, args ...string) string {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "CUSTODIAN_SERVER=", "CUSTODIAN_STORE=")
		out, err := c.CombinedOutput()
		if err != nil {
			t.Errorf("%s %v in %s: %v\n%s", name, args, dir, err, out)
		}
		return string(out)
	}
	os.MkdirAll(filepath.Join(repo, "src", "pkg"), 0o755)
	run(repo, "git", "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(repo, "src", "pkg", "a.go"), []byte("package pkg\n"), 0o644)
	run(repo, "git", "add", ".")
	run(repo, "git", "commit", "-qm", "init")
	wt1, wt2 := filepath.Join(base, "wt-agent1"), filepath.Join(base, "elsewhere", "wt-agent2")
	run(repo, "git", "worktree", "add", "-q", "-b", "agent1", wt1)
	run(repo, "git", "worktree", "add", "-q", "-b", "agent2", wt2)

	// The first command, from a worktree's subdirectory, creates the state
	// in the main checkout's top level.
	run(filepath.Join(wt1, "src", "pkg"), bin, "impl", "--init", "--plan-path", "docs/plan.md", "--plan-number", "001", "--plan-title", "Shared")
	run(filepath.Join(wt2, "src"), bin, "init", "--sprint", "S1")
	if _, err := os.Stat(filepath.Join(repo, ".impl", "manifest.json")); err != nil {
		t.Fatalf("the manifest is not in the main checkout: %v", err)
	}
	if _, err := os.Stat(filepath.Join(repo, ".asdd", "config.yaml")); err != nil {
		t.Fatalf(".asdd is not in the main checkout: %v", err)
	}

	const perAgent = 6
	agents := []struct{ name, dir string }{
		{"wt1", filepath.Join(wt1, "src", "pkg")}, // cwd in a worktree subdirectory
		{"wt2", wt2},                         // -C a worktree
		{"main", filepath.Join(repo, "src")}, // the main checkout
	}
	var wg sync.WaitGroup
	for ai, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; i <= perAgent; i++ {
				args := []string{"impl", "--add-task", "--task-id", fmt.Sprintf("%d.%d", ai+1, i), "--phase", fmt.Sprint(ai + 1), "--description", a.name}
				dir := a.dir
				if a.name == "wt2" {
					args = append([]string{"-C", a.dir}, args...)
					dir = base
				}
				run(dir, bin, args...)
			}
		}()
	}
	wg.Wait()

	for _, dir := range []string{wt1, wt2, filepath.Join(wt1, "src"), filepath.Join(wt1, "src", "pkg"), filepath.Join(repo, "src"), base} {
		for _, m := range []string{".impl", ".asdd"} {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				t.Errorf("%s/%s exists: state was created outside the main checkout", dir, m)
			}
		}
	}
	var m struct {
		Tasks []struct{ ID string } `json:"tasks"`
	}
	b, err := os.ReadFile(filepath.Join(repo, ".impl", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if n := len(m.Tasks); n != 3*perAgent {
		t.Errorf("%d tasks in the shared manifest, want %d", len(m.Tasks), 3*perAgent)
	}
	// One journal holds every commit: init + 18 tasks, read from a worktree.
	out := run(wt2, bin, "--json", "history", ".impl/manifest.json")
	var recs []struct {
		Revision uint64 `json:"revision"`
	}
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("history: %v\n%s", err, out)
	}
	if len(recs) != 1+3*perAgent {
		t.Errorf("%d commits in the journal, want %d", len(recs), 1+3*perAgent)
	}
	// Files of the checked-out tree stay in the worktree: Claude Code's
	// project settings are installed where Claude Code runs.
	run(filepath.Join(wt1, "src"), bin, "hook", "install", "--claude", "--binary", bin)
	if _, err := os.Stat(filepath.Join(wt1, ".claude", "settings.json")); err != nil {
		t.Errorf("hook install --claude in a worktree: %v", err)
	}
	if _, err := os.Stat(filepath.Join(repo, ".claude")); err == nil {
		t.Error("hook install --claude in a worktree wrote into the main checkout")
	}
	// The Claude Code hook in a worktree guards the main checkout's state
	// and the worktree's own copy of the paths alike.
	for _, target := range []string{filepath.Join(repo, ".impl", "manifest.json"), filepath.Join(wt1, ".impl", "manifest.json"), filepath.Join(wt1, ".agents", "tmp", "state.json")} {
		in := `{"hook_event_name":"PreToolUse","cwd":"` + filepath.Join(wt1, "src") + `","tool_name":"Write","tool_input":{"file_path":"` + target + `","content":"{}"}}`
		c := exec.Command(bin, "hook", "claude")
		c.Dir = filepath.Join(wt1, "src")
		c.Stdin = strings.NewReader(in)
		out, err := c.Output()
		if err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
			t.Errorf("hook in a worktree, Write %s: %s (%v)", target, out, err)
		}
	}
	// And the status read from any of them is the same.
	s1 := run(filepath.Join(wt1, "src"), bin, "impl", "--summary")
	s2 := run(repo, bin, "impl", "--summary")
	if s1 != s2 || !strings.Contains(s1, "total_tasks=18") {
		t.Errorf("summaries differ or are wrong:\n%s\n%s", s1, s2)
	}
}
