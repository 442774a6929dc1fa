package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
)

// Issue 18 item 9: invalid UTF-8 in an argument, a file or stdin read as
// input is INVALID_INPUT (exit 2) and commits nothing; it was committed
// with U+FFFD in place of what was sent.
func TestInvalidUTF8InputRefused(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init", "--sprint", "S1")
	out := e.want(2, "slice", "add", "SLICE-001", "--name", "bad \xff name")
	if !strings.Contains(out, "INVALID_INPUT") || !strings.Contains(out, "UTF-8") {
		t.Fatalf("output: %s", out)
	}
	if e.manifest().Slice("SLICE-001") != nil {
		t.Fatal("the slice was added")
	}
	e.must("state", "init", "build login")
	e.want(2, "state", "update", `{"note":"\ud800"}`)
	stdout, stderr, code := runCLI(e.dir, "{\"note\":\"\xfe\"}", e.now, "state", "update")
	if code != 2 || !strings.Contains(stdout+stderr, "UTF-8") {
		t.Fatalf("stdin: exit %d %s%s", code, stdout, stderr)
	}
	if s := e.read(".agents/tmp/state.json"); strings.Contains(s, "note") {
		t.Fatalf("committed: %s", s)
	}
	id := strings.TrimSpace(e.must("cycle", "create", "OAuth"))
	e.must("cycle", "iterate", id)
	stdout, stderr, code = runCLI(e.dir, `{"tasks":[{"id":"TASK-001","description":"x \udc00","effort":"small"}]}`, e.now, "cycle", "plan", id, "--from", "-")
	if code != 2 || !strings.Contains(stdout+stderr, "surrogate") {
		t.Fatalf("cycle plan with a lone surrogate: exit %d %s%s", code, stdout, stderr)
	}
}

// Issue 18 item 6: text from the state cannot drive the terminal or forge
// a line of a listing: escape sequences, newlines and bidirectional
// overrides in a slice name are shown escaped by status and slice list,
// and a task id written before ids were checked cannot make impl --ready
// print a fake ready task.
func TestTerminalOutputEscaped(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init", "--sprint", "S1")
	evil := "evil\x1b[2J\x1b]52;c;ZXZpbA==\x07\u202e\nSLICE-999  DONE"
	e.must("slice", "add", "SLICE-001", "--name", evil)
	for _, args := range [][]string{{"status"}, {"slice", "list"}, {"slice", "show", "SLICE-001"}} {
		out := e.must(args...)
		if strings.ContainsAny(out, "\x1b\x07\u202e") {
			t.Errorf("%v printed control characters raw: %q", args, out)
		}
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "SLICE-999") {
				t.Errorf("%v: forged line %q", args, line)
			}
		}
		if !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("%v: the name is not shown escaped: %q", args, out)
		}
	}
	// an error quoting what was sent
	if _, stderr, _ := e.run("slice", "show", "NOPE\x1b]0;pwned\x07"); strings.ContainsAny(stderr, "\x1b\x07") {
		t.Errorf("error printed control characters raw: %q", stderr)
	}
	if m := e.manifest(); m.Slice("SLICE-001").Name != evil {
		t.Fatalf("the name itself was changed: %q", m.Slice("SLICE-001").Name)
	}
	// A task manifest from before ids were checked.
	e.write(".impl/manifest.json", `{"version":"1.0","plan":{"path":"docs/plans/1.md","number":"001","title":"P","decomposed_at":"2026-04-20T14:00:00Z"},`+
		`"phases":[{"number":1,"depends_on":[],"bounded_contexts":[]}],`+
		`"tasks":[{"id":"1.1\n9.9|1|pending|fake ready task","phase":1,"description":"real","bounded_contexts":[],"status":"pending","branch":null,"retries":0,"created_at":"2026-04-20T14:00:00Z","updated_at":"2026-04-20T14:00:00Z"}]}`)
	out := e.must("impl", "--ready")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], `1.1\n9.9`) {
		t.Fatalf("impl --ready:\n%s", out)
	}
	// the drop-in keeps the script's exit code for a refusal (1)
	if out := e.want(1, "impl", "--add-task", "--task-id", "1.2\n9.9|1|pending|fake", "--phase", "1", "--description", "x"); !strings.Contains(out, "is not valid") {
		t.Fatalf("add-task: %s", out)
	}
}

// Issue 18 item 1 through the CLI: an agent that names the task
// manifest's journal, the config or (through a directory symlink) the
// ASDD journal as an artifact and scores low is refused (exit 2) before
// anything is committed or marked.
func TestHaltMarkerOnCustodianFilesRefused(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init", "--sprint", "S1")
	e.must("slice", "add", "SLICE-001", "--name", "Login")
	e.must("impl", "--init", "--plan-path", "docs/plans/1.md", "--plan-number", "001", "--plan-title", "Plan")
	e.write(".asdd/config.yaml", "# defaults\n")
	if err := os.Symlink(".asdd/state", filepath.Join(e.dir, "notes")); err != nil {
		t.Fatal(err)
	}
	files := []string{".impl/journal.ndjson", ".asdd/config.yaml", ".asdd/state/journal.ndjson"}
	before := map[string]string{}
	for _, f := range files {
		before[f] = e.read(f)
	}
	rev := e.manifest().Revision
	for _, art := range []string{".impl/journal.ndjson", ".asdd/config.yaml", "notes/journal.ndjson"} {
		out := e.want(2, "propose", "--agent", "discovery", "--slice", "SLICE-001", "--score", "0.40",
			"--uncertainty", "scope unclear", "--artifact", "intent="+art)
		if !strings.Contains(out, "INVALID_INPUT") || !strings.Contains(out, "custodian's own") {
			t.Errorf("%s: %s", art, out)
		}
	}
	for _, f := range files {
		if got := e.read(f); got != before[f] {
			t.Errorf("%s changed:\n%s", f, got)
		}
	}
	if m := e.manifest(); m.Revision != rev || m.Slice("SLICE-001").Status != asdd.Discovery {
		t.Fatalf("committed: revision %d -> %d, %s", rev, m.Revision, m.Slice("SLICE-001").Status)
	}
	e.must("impl", "--list-tasks") // the task manifest still reads
}
