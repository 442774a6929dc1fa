package claude

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runHook is the whole door, as Claude Code runs it, for a Bash command in
// dir.
func runHook(t *testing.T, dir, cmd string) string {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": dir,
		"tool_input": map[string]any{"command": cmd}})
	var out, errb bytes.Buffer
	if code := Run("", bytes.NewReader(raw), &out, &errb); code != 0 {
		t.Fatalf("%q: exit %d (%s)", cmd, code, errb.String())
	}
	if out.Len() == 0 {
		return ""
	}
	var o Output
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	return o.HookSpecificOutput.PermissionDecision
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestGitMoveDependsOnWhatGitTracks: the door asks git whether it tracks
// a state document: a checkout of another branch passes in a project that
// keeps its state out of git, and is denied in one that commits it.
func TestGitMoveDependsOnWhatGitTracks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".impl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "README.md")
	git(t, dir, "commit", "-qm", "one")
	for _, cmd := range []string{"git checkout main", "git switch other", "git pull"} {
		if got := runHook(t, dir, cmd); got != "" {
			t.Errorf("%q, state untracked: %q, want allowed", cmd, got)
		}
	}
	if got := runHook(t, dir, "git stash -u"); got != "deny" {
		t.Errorf("git stash -u, state untracked: %q, want deny", got)
	}
	git(t, dir, "add", ".impl/manifest.json")
	git(t, dir, "commit", "-qm", "two")
	for _, cmd := range []string{"git checkout HEAD~1", "git switch other", "git pull"} {
		if got := runHook(t, dir, cmd); got != "deny" {
			t.Errorf("%q, state tracked: %q, want deny", cmd, got)
		}
	}
}

// TestGitApplyReadsThePatchFromDisk: the door reads the patch a git apply
// names: one that changes a managed file is denied, one that does not
// passes, a FIFO (that could pin the hook) is not read and is denied.
func TestGitApplyReadsThePatchFromDisk(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".asdd", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("state.patch", "--- a/.asdd/state/manifest.json\n+++ b/.asdd/state/manifest.json\n@@ -1 +1 @@\n-{}\n+{\"x\":1}\n")
	write("src.patch", "--- a/src/main.go\n+++ b/src/main.go\n@@ -1 +1 @@\n-a\n+b\n")
	if err := exec.Command("mkfifo", filepath.Join(dir, "fifo.patch")).Run(); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for cmd, want := range map[string]string{
		"git apply state.patch": "deny", "git apply src.patch": "", "git apply fifo.patch": "deny",
		"git apply " + strings.Repeat("x", 10) + ".patch": "",
	} {
		if got := runHook(t, dir, cmd); got != want {
			t.Errorf("%q: %q, want %q", cmd, got, want)
		}
	}
}
