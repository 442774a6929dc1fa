package cli

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/hook"
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
	// The hook runs the custodian on PATH.
	env := append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
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
	before := treeOf(t, app)
	out, code := run(repo, "git", "commit", "-q", "-m", "drifted")
	if code == 0 || !strings.Contains(out, "STATE_DRIFT") || strings.Contains(out, "halted") {
		t.Fatalf("a drifted commit went through, or halted the slice (exit %d):\n%s", code, out)
	}
	// The hook only reports: no halt, no escalation, no failure-log row, no
	// cache written, the staged manifest as it was.
	if after := treeOf(t, app); after != before {
		t.Errorf("the refused commit changed files:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if diff := must(repo, "git", "diff", "--name-only"); diff != "" {
		t.Errorf("files modified after the staging: %s", diff)
	}
	if st := must(app, bin, "slice", "show", "SLICE-001"); strings.Contains(st, "BLOCKED") {
		t.Errorf("the hook halted the slice:\n%s", st)
	}

	// Without custodian on PATH the hook refuses with a clear message.
	noBin := append(append([]string(nil), env...), "PATH=/usr/bin:/bin")
	c := exec.Command("git", "commit", "-q", "-m", "drifted")
	c.Dir, c.Env = repo, noBin
	if b, err := c.CombinedOutput(); err == nil || !strings.Contains(string(b), "custodian is not on PATH") {
		t.Errorf("commit without custodian on PATH: %v\n%s", err, b)
	}
	if log := must(repo, "git", "log", "--oneline"); strings.Count(log, "\n") != 1 {
		t.Fatalf("git log:\n%s", log)
	}

	// A hook custodian did not write is left alone unless --force.
	hookFile := filepath.Join(repo, ".git", "hooks", "pre-commit")
	if err := os.WriteFile(hookFile, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, code := run(app, bin, "hook", "install"); code != reason.ExitConflict || !strings.Contains(out, "not written by custodian") {
		t.Fatalf("foreign hook: exit %d: %s", code, out)
	}
	must(app, bin, "hook", "install", "--force")
	if b, _ := os.ReadFile(hookFile); !strings.Contains(string(b), hook.HookMarker) || strings.Contains(string(b), bin) {
		t.Fatalf("--force did not install, or the hook names the binary's path:\n%s", b)
	}
	// --binary names one explicitly.
	must(app, bin, "hook", "install", "--binary", bin)
	if b, _ := os.ReadFile(hookFile); !strings.Contains(string(b), "bin='"+bin+"'") {
		t.Fatalf("--binary is not in the hook:\n%s", b)
	}
}

// treeOf lists every file under dir with a hash of its content.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %x\n", rel, sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
