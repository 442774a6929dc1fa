package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/reason"
)

// TestPreCommitHook installs the hook in a real git repository whose ASDD
// project lives in a subdirectory, and commits through git: a clean project
// commits, a drifted artifact stops the commit.
func TestPreCommitHook(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and git")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	bin := testbin.Path(t)
	repo := t.TempDir()
	app := filepath.Join(repo, "app")
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	run := func(dir string, name string, args ...string) (string, int) {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return string(out), code
	}
	must := func(dir string, name string, args ...string) string {
		t.Helper()
		out, code := run(dir, name, args...)
		if code != 0 {
			t.Fatalf("%s %v: exit %d\n%s", name, args, code, out)
		}
		return out
	}
	must(repo, "git", "init", "-q")
	if err := os.MkdirAll(filepath.Join(app, ".asdd/specs/SLICE-001"), 0o755); err != nil {
		t.Fatal(err)
	}
	intent := filepath.Join(app, ".asdd/specs/SLICE-001/intent.md")
	if err := os.WriteFile(intent, []byte("# Auth — intent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(app, bin, "init")
	must(app, bin, "slice", "add", "SLICE-001", "--name", "Auth")
	must(app, bin, "propose", "--agent", "discovery", "--slice", "SLICE-001", "--score", "0.96", "--artifact", "intent=.asdd/specs/SLICE-001/intent.md")

	// Outside a git repository the hook cannot be installed.
	if out, code := run(t.TempDir(), bin, "hook", "install"); code != reason.ExitRejected || !strings.Contains(out, "not in a git repository") {
		t.Fatalf("hook outside git: exit %d: %s", code, out)
	}
	out := must(app, bin, "hook", "install")
	if !strings.Contains(out, filepath.Join(".git", "hooks", "pre-commit")) {
		t.Fatalf("hook install: %s", out)
	}
	must(app, bin, "hook", "install") // ours: replaced quietly

	must(repo, "git", "add", "-A")
	must(repo, "git", "commit", "-q", "-m", "clean state")

	if err := os.WriteFile(intent, []byte("# Auth — intent, edited by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(repo, "git", "add", "-A")
	out, code := run(repo, "git", "commit", "-q", "-m", "drifted")
	if code == 0 || !strings.Contains(out, "STATE_DRIFT") || !strings.Contains(out, "halted SLICE-001") {
		t.Fatalf("a drifted commit went through (exit %d):\n%s", code, out)
	}
	if log := must(repo, "git", "log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Fatalf("git log:\n%s", log)
	}

	// A hook custodian did not write is left alone unless --force.
	hook := filepath.Join(repo, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, code := run(app, bin, "hook", "install"); code != reason.ExitConflict || !strings.Contains(out, "not written by custodian") {
		t.Fatalf("foreign hook: exit %d: %s", code, out)
	}
	must(app, bin, "hook", "install", "--force")
	if b, _ := os.ReadFile(hook); !strings.Contains(string(b), hookMarker) {
		t.Fatalf("--force did not install:\n%s", b)
	}
}
