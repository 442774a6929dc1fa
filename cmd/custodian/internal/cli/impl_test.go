package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/impl"
)

// implExec runs one custodian command line in-process against project dir
// with a fixed clock, as Main would, and returns its output and exit code.
func implExec(t testing.TB, dir string, now time.Time, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCLI(dir, stdin, now, args...)
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9._/,:=+-]+$`)

func shellLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if plainArg.MatchString(a) {
			out[i] = a
		} else {
			out[i] = fmt.Sprintf("%q", a)
		}
	}
	return strings.Join(out, " ")
}

// transcript runs steps in dir and writes, per step, the command, its exit
// code, stdout, stderr, and the document at key if the step changed it.
type transcript struct {
	t    *testing.T
	dir  string
	key  string
	now  time.Time
	buf  bytes.Buffer
	last []byte
}

func newTranscript(t *testing.T, dir, key string) *transcript {
	return &transcript{t: t, dir: dir, key: key, now: time.Date(2026, 2, 22, 10, 0, 0, 0, time.UTC)}
}

func (tr *transcript) file() []byte {
	b, err := os.ReadFile(filepath.Join(tr.dir, filepath.FromSlash(tr.key)))
	if err != nil {
		return nil
	}
	return b
}

func (tr *transcript) note(s string) { fmt.Fprintf(&tr.buf, "# %s\n", s) }

func (tr *transcript) run(stdin string, args ...string) (string, int) {
	tr.t.Helper()
	tr.last = tr.file()
	stdout, stderr, code := implExec(tr.t, tr.dir, tr.now, stdin, args...)
	tr.now = tr.now.Add(time.Minute)
	fmt.Fprintf(&tr.buf, "$ custodian %s\n", shellLine(args))
	if stdin != "" {
		fmt.Fprintf(&tr.buf, "[stdin]\n%s", withNewline(stdin))
	}
	fmt.Fprintf(&tr.buf, "[exit %d]\n", code)
	if stdout != "" {
		fmt.Fprintf(&tr.buf, "[stdout]\n%s", withNewline(stdout))
	}
	if stderr != "" {
		fmt.Fprintf(&tr.buf, "[stderr]\n%s", withNewline(stderr))
	}
	after := tr.file()
	switch {
	case after == nil && tr.last == nil:
		fmt.Fprintf(&tr.buf, "[%s absent]\n", tr.key)
	case bytes.Equal(after, tr.last):
		fmt.Fprintf(&tr.buf, "[%s unchanged]\n", tr.key)
	case after == nil:
		fmt.Fprintf(&tr.buf, "[%s removed]\n", tr.key)
	default:
		fmt.Fprintf(&tr.buf, "[%s]\n%s", tr.key, withNewline(string(after)))
	}
	tr.buf.WriteString("\n")
	return stdout, code
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n[no newline at end]\n"
}

// check compares the transcript with testdata/<name>.golden (or rewrites it
// under -update).
func (tr *transcript) check(name string) {
	tr.t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name)+".golden")
	got := tr.buf.Bytes()
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tr.t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tr.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tr.t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		tr.t.Errorf("%s differs from the transcript (go test -update rewrites it):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first differing lines of two texts.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\nwant: %s\n got: %s", i+1, wl, gl)
		}
	}
	return "(equal)"
}

func implInitArgs() []string {
	return []string{"impl", "--init", "--plan-path", "docs/plans/003-auth.md", "--plan-number", "003", "--plan-title", "Auth & sessions"}
}

func TestImplGoldenLifecycle(t *testing.T) {
	tr := newTranscript(t, t.TempDir(), impl.Key)
	tr.note("init, and init again without and with --force")
	tr.run("", implInitArgs()...)
	tr.run("", implInitArgs()...)
	tr.run("", "impl", "--init", "--plan-path", "docs/plans/003-auth.md", "--plan-number", "003", "--plan-title", "Auth", "--force")
	tr.note("add tasks: phases are created on first use, with their dependencies and contexts")
	tr.run("", "impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "Add the session store", "--bounded-contexts", "BC-1,BC-2")
	tr.run("", "impl", "--add-task", "--task-id", "1.2", "--phase", "1", "--description", `Quote "this" & $HOME <b>`, "--depends-on", "none")
	tr.run("", "impl", "--add-task", "--task-id", "2.1", "--phase", "2", "--description", "Login endpoint", "--depends-on", "1", "--bounded-contexts", "BC-3")
	tr.run("", "impl", "--add-task", "--task-id", "3.1", "--phase", "3", "--description", "Logout endpoint", "--depends-on", "1,2")
	tr.note("a duplicate task id is an error (the script added a second copy)")
	tr.run("", "impl", "--add-task", "--task-id", "1.1", "--phase", "2", "--description", "again")
	tr.run("", "impl", "--get-plan-path")
	tr.run("", "impl", "--get-task", "--task-id", "1.1")
	tr.note("the lifecycle: start, validate, fail, retry (retries +1), pass, merge")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "in_progress")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "validating", "--branch", "impl/003/1.1")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "failed", "--check-results", "lint: ok\ntest: 2 failed", "--error", `x" | .status = "merged`)
	tr.run("", "impl", "--get-task", "--task-id", "1.1")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "in_progress")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "passed", "--check-results", "all green")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "merged")
	tr.note("merged and abandoned are final")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "in_progress")
	tr.run("", "impl", "--update-status", "--task-id", "1.2", "--status", "abandoned", "--error", "superseded")
	tr.run("", "impl", "--update-status", "--task-id", "1.2", "--status", "pending")
	tr.note("listing and counting")
	tr.run("", "impl", "--list-tasks")
	tr.run("", "impl", "--list-tasks", "--phase", "1")
	tr.run("", "impl", "--list-tasks", "--status", "pending")
	tr.run("", "impl", "--list-tasks", "--phase", "2", "--status", "pending")
	tr.run("", "impl", "--list-tasks", "--phase", "9")
	tr.run("", "impl", "--phase-status", "--phase", "1")
	tr.run("", "impl", "--phase-status", "--phase", "9")
	tr.run("", "impl", "--summary")
	tr.note("resuming: phase 1 is done, so phase 2 runs; phase 3 waits for 1 and 2")
	tr.run("", "impl", "--continue")
	tr.run("", "impl", "--ready")
	tr.run("", "impl", "--update-status", "--task-id", "2.1", "--status", "in_progress")
	tr.run("", "impl", "--continue")
	tr.run("", "impl", "--update-status", "--task-id", "2.1", "--status", "merged")
	tr.run("", "impl", "--continue")
	tr.run("", "impl", "--update-status", "--task-id", "3.1", "--status", "merged")
	tr.run("", "impl", "--continue")
	tr.run("", "impl", "--ready")
	tr.check("impl/lifecycle")
}

func TestImplGoldenJSON(t *testing.T) {
	tr := newTranscript(t, t.TempDir(), impl.Key)
	tr.run("", append(implInitArgs(), "--json")...)
	tr.run("", "impl", "--json", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "d <1>", "--bounded-contexts", "BC-1")
	tr.run("", "impl", "--add-task", "--task-id", "2.1", "--phase", "2", "--description", "e", "--depends-on", "1")
	tr.run("", "--json", "impl", "--update-status", "--task-id", "1.1", "--status", "failed", "--error", "boom")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "in_progress", "--json")
	tr.run("", "impl", "--get-task", "--task-id", "1.1", "--json")
	tr.run("", "impl", "--get-plan-path", "--json")
	tr.run("", "impl", "--list-tasks", "--json")
	tr.run("", "impl", "--list-tasks", "--status", "merged", "--json")
	tr.run("", "impl", "--phase-status", "--phase", "1", "--json")
	tr.run("", "impl", "--summary", "--json")
	tr.run("", "impl", "--continue", "--json")
	tr.run("", "impl", "--ready", "--json")
	tr.run("", "impl", "--get-task", "--task-id", "nope", "--json")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "done", "--json")
	tr.check("impl/json")
}

func TestImplGoldenBadInput(t *testing.T) {
	tr := newTranscript(t, t.TempDir(), impl.Key)
	tr.run("", "impl", "--help")
	tr.note("command lines the script refuses")
	tr.run("", "impl")
	tr.run("", "impl", "--summary", "--verbose")
	tr.run("", "impl", "--get-task", "--task-id")
	tr.run("", "impl", "--init", "--plan-path", "p.md")
	tr.note("every operation but --init needs a manifest")
	for _, op := range [][]string{
		{"--get-plan-path"}, {"--get-task", "--task-id", "1.1"}, {"--add-task", "--task-id", "1.1", "--phase", "1", "--description", "d"},
		{"--update-status", "--task-id", "1.1", "--status", "passed"}, {"--list-tasks"}, {"--phase-status", "--phase", "1"},
		{"--summary"}, {"--continue"}, {"--ready"}, {"--stale"},
		// The script looks for the manifest before it checks arguments.
		{"--update-status", "--task-id", "1.1", "--status", "done"}, {"--add-task", "--task-id", "1.1"}, {"--get-task"},
	} {
		tr.run("", append([]string{"impl"}, op...)...)
	}
	tr.run("", implInitArgs()...)
	tr.run("", "impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "d")
	tr.note("bad values are refused and change nothing")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "done")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "")
	tr.run("", "impl", "--update-status", "--task-id", "9.9", "--status", "passed")
	tr.run("", "impl", "--get-task", "--task-id", "9.9")
	tr.run("", "impl", "--get-task")
	tr.run("", "impl", "--add-task", "--task-id", "1.2", "--phase", "one", "--description", "d")
	tr.run("", "impl", "--add-task", "--task-id", "1.2", "--phase", "1")
	tr.run("", "impl", "--add-task", "--task-id", "2.1", "--phase", "2", "--description", "d", "--depends-on", "1,x")
	tr.run("", "impl", "--list-tasks", "--status", "finished")
	tr.run("", "impl", "--list-tasks", "--phase", "1.5")
	tr.run("", "impl", "--phase-status")
	tr.check("impl/bad-input")
}

// TestImplGoldenDamagedManifest: a manifest that is not JSON, or is JSON of
// the wrong shape, is reported and never overwritten.
func TestImplGoldenDamagedManifest(t *testing.T) {
	for _, c := range []struct{ name, content string }{
		{"not-json", "{\"version\": \"1.0.0\", \"tasks\": [\n"},
		{"wrong-shape", `{"version": "1.0.0", "plan": {"path": "p.md", "number": 3, "title": "t"}, "phases": [], "tasks": []}` + "\n"},
		{"tasks-not-array", `{"version": "1.0.0", "plan": {}, "phases": [], "tasks": {"1.1": {}}}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, ".impl"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			tr := newTranscript(t, dir, impl.Key)
			tr.run("", "impl", "--get-task", "--task-id", "1.1")
			tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "passed")
			tr.run("", "impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "d")
			tr.run("", "impl", "--summary")
			tr.run("", implInitArgs()...)
			got, err := os.ReadFile(filepath.Join(dir, ".impl", "manifest.json"))
			if err != nil || string(got) != c.content {
				t.Fatalf("the damaged manifest was changed: %q, %v", got, err)
			}
			// --init --force is the way out: it replaces a manifest that
			// parses as JSON (the damaged one stays in the journal); one
			// that does not parse and has no journal is left to a human.
			tr.note("--init --force")
			tr.run("", append(implInitArgs(), "--force")...)
			tr.check("impl/damaged-" + c.name)
		})
	}
}

// originalManifest is a manifest exactly as task-manifest.sh writes it with
// jq, including a checkpoint (ADR-021) the script's later versions add.
const originalManifest = `{
  "version": "1.0.0",
  "plan": {
    "path": "docs/plans/007-billing.md",
    "number": "007",
    "title": "Billing",
    "decomposed_at": "2026-02-20T08:00:00Z"
  },
  "phases": [
    {
      "number": 1,
      "depends_on": [],
      "bounded_contexts": [
        "BC-7"
      ]
    }
  ],
  "tasks": [
    {
      "id": "1.1",
      "phase": 1,
      "description": "Invoice model",
      "bounded_contexts": [
        "BC-7"
      ],
      "status": "failed",
      "branch": "impl/007/1.1",
      "check_results": "test: 1 failed",
      "error": "TestInvoiceTotal",
      "retries": 0,
      "created_at": "2026-02-20T08:00:00Z",
      "updated_at": "2026-02-20T09:00:00Z"
    },
    {
      "id": "1.2",
      "phase": 1,
      "description": "Invoice PDF",
      "bounded_contexts": [
        "BC-7"
      ],
      "status": "pending",
      "branch": null,
      "check_results": null,
      "error": null,
      "retries": 0,
      "created_at": "2026-02-20T08:00:00Z",
      "updated_at": "2026-02-20T08:00:00Z",
      "acceptance_criteria": []
    }
  ],
  "checkpoint": {
    "agent_id": "orchestrator",
    "phase": 1
  }
}
`

// TestImplGoldenOriginalFile: a manifest the script wrote is read and
// updated in place; fields the custodian does not know survive.
func TestImplGoldenOriginalFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".impl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), []byte(originalManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTranscript(t, dir, impl.Key)
	tr.run("", "impl", "--summary")
	tr.run("", "impl", "--get-task", "--task-id", "1.2")
	tr.run("", "impl", "--continue")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "in_progress")
	tr.run("", "impl", "--get-task", "--task-id", "1.1")
	tr.check("impl/original-file")
	// The snapshot stays a plain task-manifest.sh manifest: same keys, no
	// additions, and decodes to what the custodian committed.
	var m map[string]json.RawMessage
	if err := json.Unmarshal(tr.file(), &m); err != nil {
		t.Fatal(err)
	}
	for k := range m {
		if !strings.Contains("version plan phases tasks checkpoint", k) {
			t.Errorf("unexpected top-level key %q in the snapshot", k)
		}
	}
}

func TestImplGoldenStale(t *testing.T) {
	dir := implGitRepo(t)
	tr := newTranscript(t, dir, impl.Key)
	tr.run("", implInitArgs()...)
	for _, id := range []string{"1.1", "1.2", "1.3", "1.4"} {
		tr.run("", "impl", "--add-task", "--task-id", id, "--phase", "1", "--description", "task "+id)
	}
	tr.note("1.1's branch was merged by hand; 1.2's is in progress; 1.3's branch is gone; 1.4 is merged and cleaned up")
	tr.run("", "impl", "--update-status", "--task-id", "1.1", "--status", "passed", "--branch", "impl/003/1.1")
	tr.run("", "impl", "--update-status", "--task-id", "1.2", "--status", "in_progress", "--branch", "impl/003/1.2")
	tr.run("", "impl", "--update-status", "--task-id", "1.3", "--status", "validating", "--branch", "impl/003/1.3")
	tr.run("", "impl", "--update-status", "--task-id", "1.4", "--status", "merged", "--branch", "impl/003/1.4")
	tr.run("", "impl", "--stale")
	tr.run("", "impl", "--stale", "--json")
	tr.note("against another base, 1.2 is merged too")
	tr.run("", "impl", "--stale", "--base", "impl/003/1.2")
	tr.run("", "impl", "--stale", "--base", "no-such-branch")
	tr.check("impl/stale")
}

// implGitRepo makes a git repository: main, with impl/003/1.1 merged into
// it and impl/003/1.2 not.
func implGitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	commit := func(name string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", name)
		git("commit", "-q", "-m", name)
	}
	git("init", "-q", "-b", "main")
	commit("README")
	git("checkout", "-q", "-b", "impl/003/1.1")
	commit("session.go")
	git("checkout", "-q", "main")
	git("merge", "-q", "--no-ff", "-m", "merge 1.1", "impl/003/1.1")
	git("checkout", "-q", "-b", "impl/003/1.2")
	commit("login.go")
	git("checkout", "-q", "main")
	return dir
}
