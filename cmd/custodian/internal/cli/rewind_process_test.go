package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
)

// TestRewoundStateIsDetectedRefusedAndRepaired puts the state files back
// behind the custodian's back the ways an agent or a person can — real git
// commands, a backup copied over the project — and checks, with the real
// binary as separate processes, that the next command and `verify` notice
// it (CORRUPT_STATE, exit 5, naming what went back), that a commit is
// refused and changes no byte, and that a human's `repair` settles it.
func TestRewoundStateIsDetectedRefusedAndRepaired(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: the rewind tests run real git commands")
	}
	bin := testbin.Path(t)
	const key = ".asdd/state/manifest.json"

	for _, tc := range []struct {
		name string
		// rewind sets the project up in repo (state committed to git or
		// not, as the case needs), makes commits after the point it
		// rewinds to, and puts the files back; it returns what the
		// refusal must name (e.g. "from revision 5 to 3").
		rewind func(t *testing.T, p *rewindProject) string
		gone   bool // the state is deleted, not rewound
	}{
		{name: "git stash -u", rewind: func(t *testing.T, p *rewindProject) string {
			from := p.gitCommitState()
			p.custodian("slice", "add", "SLICE-002", "--name", "Two")
			to := p.revision()
			p.git("stash", "-u")
			return fmt.Sprintf("from revision %d to %d", to, from)
		}},
		{name: "git reset --hard HEAD~1", rewind: func(t *testing.T, p *rewindProject) string {
			from := p.gitCommitState()
			p.custodian("slice", "add", "SLICE-002", "--name", "Two")
			to := p.gitCommitState()
			p.git("reset", "-q", "--hard", "HEAD~1")
			return fmt.Sprintf("from revision %d to %d", to, from)
		}},
		{name: "git checkout OLD -- .asdd", rewind: func(t *testing.T, p *rewindProject) string {
			from := p.gitCommitState()
			p.custodian("slice", "add", "SLICE-002", "--name", "Two")
			to := p.gitCommitState()
			p.git("checkout", "HEAD~1", "--", ".asdd")
			return fmt.Sprintf("from revision %d to %d", to, from)
		}},
		{name: "git checkout OLD (detached)", rewind: func(t *testing.T, p *rewindProject) string {
			from := p.gitCommitState()
			p.custodian("slice", "add", "SLICE-002", "--name", "Two")
			to := p.gitCommitState()
			p.git("checkout", "-q", "HEAD~1")
			return fmt.Sprintf("from revision %d to %d", to, from)
		}},
		{name: "git clean -fdx", gone: true, rewind: func(t *testing.T, p *rewindProject) string {
			// The state was never added to git: clean deletes it.
			p.custodian("slice", "add", "SLICE-002", "--name", "Two")
			p.git("clean", "-q", "-fdx")
			return "the snapshot and its journal are gone"
		}},
		{name: "a backup copied back", rewind: func(t *testing.T, p *rewindProject) string {
			from := p.revision()
			backup := filepath.Join(t.TempDir(), "asdd")
			p.run("cp", "-a", filepath.Join(p.dir, ".asdd"), backup)
			p.custodian("slice", "add", "SLICE-002", "--name", "Two")
			p.custodian("heartbeat", "--agent", "spec", "--status", "ACTIVE")
			to := p.revision()
			if err := os.RemoveAll(filepath.Join(p.dir, ".asdd")); err != nil {
				t.Fatal(err)
			}
			p.run("cp", "-a", backup, filepath.Join(p.dir, ".asdd"))
			return fmt.Sprintf("from revision %d to %d", to, from)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newRewindProject(t, bin)
			p.git("init", "-q", "-b", "main")
			p.write("README.md", "project\n")
			p.git("add", "README.md")
			p.git("commit", "-qm", "start")
			p.custodian("init", "--sprint", "S1")
			p.custodian("slice", "add", "SLICE-001", "--name", "One")

			names := tc.rewind(t, p)

			// Detected by verify, naming what went back.
			out, code := p.try("verify")
			if code != 5 || !strings.Contains(out, "rewound") || !strings.Contains(out, names) {
				t.Fatalf("verify after the rewind: exit %d, want 5 naming %q:\n%s", code, names, out)
			}
			// Refused by the next command, changing nothing.
			before := p.snapshotFiles()
			out, code = p.try("slice", "add", "SLICE-009", "--name", "After")
			if code != 5 || !strings.Contains(out, "rewound") {
				t.Fatalf("a commit after the rewind: exit %d, want 5 (rewound):\n%s", code, out)
			}
			if after := p.snapshotFiles(); after != before {
				t.Fatalf("the refused commit changed the files:\nbefore %s\nafter  %s", before, after)
			}
			// A human settles it.
			p.custodian("repair", key, "--keep", "journal", "--reason", "accept the rewound state")
			if tc.gone {
				p.custodian("init", "--sprint", "S2")
			}
			p.custodian("slice", "add", "SLICE-009", "--name", "After")
			if out, code := p.try("verify"); code != 0 {
				t.Fatalf("verify after the repair: exit %d:\n%s", code, out)
			}
		})
	}
}

// TestRewindUndoneByRestoringTheFiles: `git stash pop` after `git stash`
// puts the committed state back, and the custodian goes on with no repair.
func TestRewindUndoneByRestoringTheFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed: the rewind tests run real git commands")
	}
	p := newRewindProject(t, testbin.Path(t))
	p.git("init", "-q", "-b", "main")
	p.custodian("init", "--sprint", "S1")
	p.gitCommitState()
	p.custodian("slice", "add", "SLICE-001", "--name", "One")
	p.git("stash", "-q", "-u")
	if _, code := p.try("status"); code != 5 {
		t.Fatalf("status after git stash: exit %d, want 5", code)
	}
	p.git("stash", "pop", "-q")
	p.custodian("slice", "add", "SLICE-002", "--name", "Two")
	if out, code := p.try("verify"); code != 0 {
		t.Fatalf("verify: exit %d:\n%s", code, out)
	}
}

// TestWitnessSharedByWorktrees: the witness lives in the git common
// directory, so a commit made from a linked worktree is witnessed for the
// main checkout too (one state per repository), and no witness file is
// left in the work tree.
func TestWitnessSharedByWorktrees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is needed")
	}
	p := newRewindProject(t, testbin.Path(t))
	p.git("init", "-q", "-b", "main")
	p.write("README.md", "x\n")
	p.git("add", "README.md")
	p.git("commit", "-qm", "start")
	p.custodian("init", "--sprint", "S1")
	p.gitCommitState()
	wt := filepath.Join(t.TempDir(), "wt")
	p.git("worktree", "add", "-q", "-b", "agent", wt)
	c := exec.Command(p.bin, "slice", "add", "SLICE-001", "--name", "From a worktree")
	c.Dir, c.Env = wt, p.env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("slice add in the worktree: %v\n%s", err, out)
	}
	w, err := os.ReadFile(filepath.Join(p.dir, ".git", "custodian", ".asdd%2Fstate%2Fmanifest.json.head"))
	if err != nil {
		entries, _ := os.ReadDir(filepath.Join(p.dir, ".git", "custodian"))
		t.Fatalf("no witness in the git common dir (%v): %v", entries, err)
	}
	if rev := p.revision(); !bytes.Contains(w, fmt.Appendf(nil, `"rev":%d,`, rev)) {
		t.Fatalf("the witness does not name revision %d: %s", rev, w)
	}
	p.git("stash", "-q", "-u")
	if _, code := p.try("verify"); code != 5 {
		t.Fatalf("verify after the main checkout's state was stashed: exit %d, want 5", code)
	}
}

type rewindProject struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

func newRewindProject(t *testing.T, bin string) *rewindProject {
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CUSTODIAN_WITNESS_DIR=") { // the default place is under test
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_GLOBAL=/dev/null", "CUSTODIAN_SERVER=", "CUSTODIAN_STORE=", "CUSTODIAN_ACTOR=tl")
	return &rewindProject{t: t, bin: bin, dir: dir, env: env}
}

func (p *rewindProject) write(name, text string) {
	if err := os.WriteFile(filepath.Join(p.dir, name), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *rewindProject) run(name string, args ...string) string {
	p.t.Helper()
	c := exec.Command(name, args...)
	c.Dir, c.Env = p.dir, p.env
	out, err := c.CombinedOutput()
	if err != nil {
		p.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *rewindProject) git(args ...string) string { p.t.Helper(); return p.run("git", args...) }

func (p *rewindProject) custodian(args ...string) string {
	p.t.Helper()
	return p.run(p.bin, args...)
}

// try runs the custodian and returns its output and exit code.
func (p *rewindProject) try(args ...string) (string, int) {
	p.t.Helper()
	c := exec.Command(p.bin, args...)
	c.Dir, c.Env = p.dir, p.env
	out, err := c.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		p.t.Fatalf("custodian %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// revision is the revision of the journal's last record.
func (p *rewindProject) revision() uint64 {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, ".asdd", "state", "journal.ndjson"))
	if err != nil {
		p.t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	var rev uint64
	if _, err := fmt.Sscanf(string(lines[len(lines)-1]), `{"rev":%d`, &rev); err != nil {
		p.t.Fatalf("the journal's last record: %v: %s", err, lines[len(lines)-1])
	}
	return rev
}

// gitCommitState commits the project's files to git and returns the
// manifest's revision so committed.
func (p *rewindProject) gitCommitState() uint64 {
	p.t.Helper()
	p.git("add", "-A")
	p.git("commit", "-qm", "state", "--allow-empty")
	return p.revision()
}

// snapshotFiles is the state directory's files and their contents, less
// the machine-local lock files.
func (p *rewindProject) snapshotFiles() string {
	p.t.Helper()
	var b strings.Builder
	dir := filepath.Join(p.dir, ".asdd", "state")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") || e.IsDir() {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %s\n", e.Name(), data)
	}
	return b.String()
}
