package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	cyclecmd "github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cycle"

	"github.com/custodian-dev/custodian/app"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
)

// countingReader yields 0, 1, 2, … so that cycle ids are predictable.
type countingReader struct{ n byte }

func (r *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.n
		r.n++
	}
	return len(p), nil
}

// cycleEnv is a project directory with a clock that moves one minute per
// command.
type cycleEnv struct {
	t   *testing.T
	dir string
	now time.Time
}

func newCycleEnv(t *testing.T) *cycleEnv {
	t.Helper()
	old := app.CycleRandom
	app.CycleRandom = &countingReader{}
	t.Cleanup(func() { app.CycleRandom = old })
	return &cycleEnv{t: t, dir: t.TempDir(), now: time.Date(2026, 1, 22, 2, 0, 0, 0, time.UTC)}
}

// run runs one command line in-process, as Main does, and returns stdout,
// stderr and the exit code.
func (e *cycleEnv) run(stdin string, args ...string) (string, string, int) {
	e.t.Helper()
	now := e.now
	e.now = e.now.Add(time.Minute)
	return runCLI(e.dir, stdin, now, args...)
}

// must runs a command that has to succeed and returns its stdout.
func (e *cycleEnv) must(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run("", args...)
	if code != 0 {
		e.t.Fatalf("custodian %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// create makes a cycle running its first iteration and returns its id.
func (e *cycleEnv) create() string {
	e.t.Helper()
	id := strings.TrimSpace(e.must("cycle", "create", "Implement OAuth authentication", "--description", "Add OAuth2 login support with Google and GitHub providers"))
	e.must("cycle", "iterate", id)
	return id
}

// tree returns every file under the project (lock files aside: taking a
// lock to read leaves an empty lock file, which is not state).
func (e *cycleEnv) tree() map[string]string {
	e.t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Name() == ".lock" || (strings.HasPrefix(d.Name(), ".") && strings.HasSuffix(d.Name(), ".lock")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *cycleEnv) state(id string) cycle.State {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(cycle.Key(id))))
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := cycle.Decode(b)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func cycleGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	checkGolden(t, filepath.Join("testdata", "cycle", name), string(got))
}

// TestCycleTranscript runs every cycle command through the seed's OAuth
// story and compares the whole transcript (command, exit code, stdout,
// stderr) with testdata/cycle/transcript.golden, then the final document
// and progress files with their own golden files.
func TestCycleTranscript(t *testing.T) {
	e := newCycleEnv(t)
	var tr bytes.Buffer
	step := func(stdin string, args ...string) string {
		t.Helper()
		out, errOut, code := e.run(stdin, args...)
		fmt.Fprintf(&tr, "$ custodian %s\n", strings.Join(quoteArgs(args), " "))
		if stdin != "" {
			fmt.Fprintf(&tr, "[stdin] %s\n", strings.TrimRight(stdin, "\n"))
		}
		fmt.Fprintf(&tr, "[exit %d]\n%s", code, out)
		if errOut != "" {
			fmt.Fprintf(&tr, "[stderr]\n%s", errOut)
		}
		tr.WriteString("\n")
		return strings.TrimSpace(out)
	}
	step("", "cycle", "list")
	id := step("", "cycle", "create", "Implement OAuth authentication", "--description", "Add OAuth2 login support with Google and GitHub providers")
	step("", "cycle", "signal", id)
	step("", "--json", "cycle", "feedback", id, "Use PKCE everywhere", "--to", "ra", "--type", "clarification")
	step("", "cycle", "iterate", id)
	step("", "cycle", "signal", id)
	step("", "cycle", "agent", id, "ra", "running")
	step("", "cycle", "requirements", id, "--spec", "Users sign in with Google or GitHub.", "--edge-case", "OAuth timeout handling", "--edge-case", "PKCE validation")
	step("", "cycle", "agent", id, "ra", "completed", "--files-modified", "3", "--output", "docs/requirements.md")
	step("", "cycle", "agent", id, "ep", "running")
	step("", "cycle", "exploration", id, "--summary", "Express app with passport", "--integration-point", "src/auth", "--risk", "token refresh")
	step(`{"tasks":[{"id":"TASK-001","description":"Setup OAuth application credentials","effort":"small","files":["src/config/oauth.ts"]},{"id":"TASK-002","description":"Google provider","effort":"medium","depends_on":["TASK-001"]}],"total_estimated_effort":"2d","critical_path":["TASK-001","TASK-002"]}`,
		"cycle", "plan", id, "--from", "-")
	step("", "cycle", "agent", id, "ep", "completed", "--files-modified", "2")
	step("", "cycle", "agent", id, "cd", "running", "-m", "starting on TASK-001")
	step("", "cycle", "task", id, "TASK-002", "in_progress")
	step("", "cycle", "task", id, "TASK-001", "in_progress", "--assign", "cd")
	step("", "cycle", "change", id, "--file", "src/config/oauth.ts", "--action", "create", "-m", "OAuth config")
	step("", "cycle", "task", id, "TASK-001", "completed")
	step("", "cycle", "change", id, "--file", "src/auth/google.ts", "--action", "create", "-m", "Google provider")
	step("", "cycle", "agent", id, "cd", "completed", "--files-modified", "2")
	step("", "cycle", "agent", id, "vas", "running")
	step("", "cycle", "test-results", id, "--pass-rate", "85", "--coverage", "78", "--total", "20", "--failed", "test: OAuth timeout retry")
	step("", "cycle", "feedback", id, "OAuth timeout retry fails", "--from", "vas", "--to", "cd", "--type", "bug_report")
	step("", "cycle", "agent", id, "vas", "completed")
	step("", "cycle", "decide", id, "--description", "Token store", "--option", "redis", "--option", "postgres")
	step("", "cycle", "decide", id, "DEC-001", "--choose", "postgres", "--by", "ep")
	step("", "cycle", "block", id, "--description", "No sandbox credentials for GitHub", "--by", "cd")
	step("", "cycle", "block", id, "BLK-001", "--workaround", "mock provider")
	step("", "cycle", "pause", id, "--reason", "waiting for the user")
	step("", "cycle", "signal", id)
	step("", "--json", "cycle", "signal", id)
	step("", "cycle", "change", id, "--file", "src/x.ts", "--action", "create")
	step("", "cycle", "resume", id)
	step("", "cycle", "iterate", id, "Also add multi-factor authentication")
	step("", "cycle", "decide", id, "DEC-001", "--implemented")
	step("", "cycle", "block", id, "BLK-001", "--resolve", "credentials arrived")
	step("", "cycle", "agent", id, "ra", "running")
	step("Users sign in with Google or GitHub,\nthen confirm with a second factor.\n", "cycle", "requirements", id, "--spec-file", "-", "--edge-case", "lost second factor")
	step("", "cycle", "agent", id, "ra", "completed")
	step("", "cycle", "agent", id, "vas", "running")
	step(`{"pass_rate":95,"coverage":81.5,"failed_tests":[],"total_tests":24}`, "cycle", "test-results", id, "--from", "-")
	step("", "cycle", "agent", id, "vas", "failed", "--error", "MFA enrolment flow untested")
	step("", "cycle", "show", id)
	step("", "cycle", "list")
	step("", "--json", "cycle", "list")
	step("", "cycle", "complete", id)
	step("", "cycle", "signal", id)
	step("", "cycle", "sync", id)
	other := step("", "cycle", "create", "Throwaway", "--max-iterations", "1")
	step("", "cycle", "stop", other, "--reason", "superseded")
	step("", "cycle", "signal", other)
	step("", "--json", "cycle", "pause", other)
	cycleGolden(t, "transcript.golden", tr.Bytes())

	doc, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(cycle.Key(id))))
	if err != nil {
		t.Fatal(err)
	}
	cycleGolden(t, "state.json.golden", doc)
	var files bytes.Buffer
	tree := e.tree()
	names := make([]string, 0, len(tree))
	for p := range tree {
		if strings.HasPrefix(p, cycle.ProgressDir(id)+"/") {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		fmt.Fprintf(&files, "=== %s\n%s", p, tree[p])
	}
	cycleGolden(t, "progress.golden", files.Bytes())
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \"'{}$") {
			b, _ := json.Marshal(a)
			out[i] = string(b)
		} else {
			out[i] = a
		}
	}
	return out
}

// TestCycleBadInput runs each command with bad input against a running
// cycle and checks the exit code, that the error says what is wrong, and
// that no file of the project changed.
func TestCycleBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string // "ID" is replaced by the cycle's id
		code  int
		say   string
		setup [][]string // run first, after create and iterate
	}{
		{"show unknown cycle", "", []string{"cycle", "show", "cycle-v1-20200101T000000-nope00"}, reason.ExitRejected, "no cycle cycle-v1-20200101T000000-nope00", nil},
		{"iterate unknown cycle", "", []string{"cycle", "iterate", "cycle-v1-20200101T000000-nope00"}, reason.ExitRejected, "NOT_FOUND", nil},
		{"signal unknown cycle", "", []string{"cycle", "signal", "nope"}, reason.ExitRejected, "no cycle nope", nil},
		{"rebuild unknown cycle", "", []string{"cycle", "rebuild", "nope"}, reason.ExitRejected, "no progress files", nil},
		{"id with path", "", []string{"cycle", "show", "../../etc/passwd"}, reason.ExitUsage, "not a cycle id", nil},
		{"change with path id", "", []string{"cycle", "change", "a/b", "--file", "x", "--action", "create"}, reason.ExitUsage, "not a cycle id", nil},
		{"create with empty task", "", []string{"cycle", "create", " "}, reason.ExitUsage, "needs a task", nil},
		{"create with zero iterations", "", []string{"cycle", "create", "x", "--max-iterations", "0"}, reason.ExitUsage, "at least 1", nil},
		{"create with existing id", "", []string{"cycle", "create", "x", "--id", "ID"}, reason.ExitConflict, "already exists", nil},
		{"create without task", "", []string{"cycle", "create"}, reason.ExitUsage, "takes 1 argument", nil},
		{"unknown agent", "", []string{"cycle", "agent", "ID", "qa", "running"}, reason.ExitUsage, `"qa" is not an agent`, nil},
		{"bad agent status", "", []string{"cycle", "agent", "ID", "ra", "done"}, reason.ExitUsage, "not an agent status", nil},
		{"agent completes without running", "", []string{"cycle", "agent", "ID", "ra", "completed"}, reason.ExitRejected, "cannot go from idle to completed", nil},
		{"failed without error", "", []string{"cycle", "agent", "ID", "ra", "failed"}, reason.ExitRejected, "cannot go from idle to failed", nil},
		{"bad files-modified", "", []string{"cycle", "agent", "ID", "ra", "running", "--files-modified", "many"}, reason.ExitUsage, "invalid argument", nil},
		{"change without file", "", []string{"cycle", "change", "ID", "--action", "create"}, reason.ExitUsage, "needs --file", nil},
		{"change bad action", "", []string{"cycle", "change", "ID", "--file", "a.go", "--action", "rename"}, reason.ExitUsage, "allowed values are create, modify, delete", nil},
		{"change outside project", "", []string{"cycle", "change", "ID", "--file", "../secret", "--action", "modify"}, reason.ExitUsage, "leaves the project", nil},
		{"change absolute path", "", []string{"cycle", "change", "ID", "--file", "/etc/passwd", "--action", "modify"}, reason.ExitUsage, "absolute", nil},
		{"pass rate out of range", "", []string{"cycle", "test-results", "ID", "--pass-rate", "120", "--total", "3"}, reason.ExitUsage, "outside 0-100", nil},
		{"test results without flags", "", []string{"cycle", "test-results", "ID"}, reason.ExitUsage, "--pass-rate", nil},
		{"test results malformed JSON", `{"pass_rate": 85,`, []string{"cycle", "test-results", "ID", "--from", "-"}, reason.ExitUsage, "malformed JSON", nil},
		{"test results unknown field", `{"pass_rate":1,"coverage":1,"total_tests":1,"colour":"red"}`, []string{"cycle", "test-results", "ID", "--from", "-"}, reason.ExitUsage, "colour", nil},
		{"test results missing field", `{"pass_rate":1}`, []string{"cycle", "test-results", "ID", "--from", "-"}, reason.ExitUsage, "need pass_rate, coverage and total_tests", nil},
		{"test results missing file", "", []string{"cycle", "test-results", "ID", "--from", "/nonexistent/results.json"}, reason.ExitUsage, "cannot read", nil},
		{"plan malformed JSON", `{"tasks": [`, []string{"cycle", "plan", "ID", "--from", "-"}, reason.ExitUsage, "malformed JSON", nil},
		{"plan oversized", `{"tasks":[],"total_estimated_effort":"` + strings.Repeat("x", cyclecmd.MaxInputBytes) + `"}`, []string{"cycle", "plan", "ID", "--from", "-"}, reason.ExitUsage, "over the limit", nil},
		{"plan two values", `{} {}`, []string{"cycle", "plan", "ID", "--from", "-"}, reason.ExitUsage, "more than one value", nil},
		{"plan dependency cycle", `{"tasks":[{"id":"A","effort":"small","depends_on":["B"]},{"id":"B","effort":"small","depends_on":["A"]}]}`, []string{"cycle", "plan", "ID", "--from", "-"}, reason.ExitUsage, "cycle", nil},
		{"plan unknown dependency", `{"tasks":[{"id":"A","effort":"small","depends_on":["Z"]}]}`, []string{"cycle", "plan", "ID", "--from", "-"}, reason.ExitUsage, "not in the plan", nil},
		{"task without plan", "", []string{"cycle", "task", "ID", "T1", "completed"}, reason.ExitRejected, "no plan", nil},
		{"requirements without spec", "", []string{"cycle", "requirements", "ID"}, reason.ExitUsage, "specification", nil},
		{"feedback bad type", "", []string{"cycle", "feedback", "ID", "x", "--to", "ra", "--type", "praise"}, reason.ExitUsage, "allowed values are requirement_update, bug_report, issue_fix, clarification", nil},
		{"feedback without target", "", []string{"cycle", "feedback", "ID", "x", "--type", "bug_report"}, reason.ExitUsage, "needs --to", nil},
		{"decide without options", "", []string{"cycle", "decide", "ID", "--description", "db"}, reason.ExitUsage, "at least one option", nil},
		{"decide unknown decision", "", []string{"cycle", "decide", "ID", "DEC-404", "--choose", "x", "--by", "ep"}, reason.ExitRejected, "no decision DEC-404", nil},
		{"decide both", "", []string{"cycle", "decide", "ID", "DEC-001", "--choose", "x", "--implemented"}, reason.ExitUsage, "not both", nil},
		{"block unknown blocker", "", []string{"cycle", "block", "ID", "BLK-404", "--resolve", "x"}, reason.ExitRejected, "no blocker BLK-404", nil},
		{"block without reporter", "", []string{"cycle", "block", "ID", "--description", "x"}, reason.ExitUsage, "who reported", nil},
		{"resume a running cycle", "", []string{"cycle", "resume", "ID"}, reason.ExitRejected, "only a paused cycle", nil},
		{"stop without reason", "", []string{"cycle", "stop", "ID"}, reason.ExitUsage, "needs --reason", nil},
		{"rebuild a valid cycle", "", []string{"cycle", "rebuild", "ID"}, reason.ExitRejected, "exists and is valid", nil},
		{"unknown flag", "", []string{"cycle", "signal", "ID", "--bogus"}, reason.ExitUsage, "unknown flag", nil},
		{"too many iterations", "", []string{"cycle", "iterate", "ID", "a", "b"}, reason.ExitUsage, "takes 1 to 2 arguments", nil},
		{"pause a paused cycle", "", []string{"cycle", "pause", "ID"}, reason.ExitRejected, "only a running cycle can be paused", [][]string{{"cycle", "pause", "ID"}}},
		{"iterate a paused cycle", "", []string{"cycle", "iterate", "ID", "more"}, reason.ExitRejected, "resume it before", [][]string{{"cycle", "pause", "ID"}}},
		{"stop a completed cycle", "", []string{"cycle", "stop", "ID", "--reason", "x"}, reason.ExitRejected, "nothing to stop", [][]string{{"cycle", "complete", "ID"}}},
		{"resume a stopped cycle", "", []string{"cycle", "resume", "ID"}, reason.ExitRejected, "a stopped cycle cannot change", [][]string{{"cycle", "stop", "ID", "--reason", "abandoned"}}},
		{"agent on a completed cycle", "", []string{"cycle", "agent", "ID", "cd", "running"}, reason.ExitRejected, "is completed", [][]string{{"cycle", "complete", "ID"}}},
		{"iterate past the limit", "", []string{"cycle", "iterate", "ID", "third"}, reason.ExitRejected, "no more may start", [][]string{{"cycle", "iterate", "ID", "second"}, {"cycle", "iterate", "ID", "x"}, {"cycle", "iterate", "ID", "y"}, {"cycle", "iterate", "ID", "z"}}},
		{"iterate while an agent runs", "", []string{"cycle", "iterate", "ID", "more"}, reason.ExitRejected, "still running", [][]string{{"cycle", "agent", "ID", "cd", "running"}}},
		{"complete twice", "", []string{"cycle", "complete", "ID"}, reason.ExitRejected, "only a running cycle can complete", [][]string{{"cycle", "complete", "ID"}}},
		{"choose an option that is not offered", "", []string{"cycle", "decide", "ID", "DEC-001", "--choose", "mysql", "--by", "ep"}, reason.ExitUsage, "not an option", [][]string{{"cycle", "decide", "ID", "--description", "db", "--option", "pg"}}},
		{"resolve a resolved blocker", "", []string{"cycle", "block", "ID", "BLK-001", "--resolve", "again"}, reason.ExitRejected, "already resolved", [][]string{{"cycle", "block", "ID", "--description", "x", "--by", "cd"}, {"cycle", "block", "ID", "BLK-001", "--resolve", "done"}}},
		{"task before its dependency", "", []string{"cycle", "task", "ID", "B", "completed"}, reason.ExitRejected, "depends on A", [][]string{{"cycle", "plan", "ID", "--from", "plan.json"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCycleEnv(t)
			id := e.create()
			subst := func(in []string) []string {
				out := make([]string, len(in))
				for i, a := range in {
					out[i] = strings.ReplaceAll(a, "ID", id)
				}
				return out
			}
			plan := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(plan, []byte(`{"tasks":[{"id":"A","effort":"small"},{"id":"B","effort":"small","depends_on":["A"]}]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.setup {
				s = subst(s)
				for i := range s {
					if s[i] == "plan.json" {
						s[i] = plan
					}
				}
				e.must(s...)
			}
			args := subst(tc.args)
			before := e.tree()
			out, errOut, code := e.run(tc.stdin, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			if !strings.Contains(errOut, tc.say) {
				t.Errorf("stderr %q does not say %q", errOut, tc.say)
			}
			if out != "" {
				t.Errorf("stdout on error: %q", out)
			}
			if diff := cmp.Diff(before, e.tree()); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestCycleJSONErrors: with --json an error is an {"error":{code,message}}
// object on stdout.
func TestCycleJSONErrors(t *testing.T) {
	e := newCycleEnv(t)
	out, _, code := e.run("", "--json", "cycle", "show", "nope")
	var got struct {
		Error reason.Error `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if code != reason.ExitRejected || got.Error.Code != reason.NotFound || !strings.Contains(got.Error.Message, "no cycle nope") {
		t.Errorf("exit %d, %+v", code, got.Error)
	}
}

// TestCycleCorruptDocument: a cycle document that is JSON but not a valid
// cycle, or not JSON at all, is reported as such and never written over by
// an ordinary command.
func TestCycleCorruptDocument(t *testing.T) {
	for _, tc := range []struct {
		name, content, say string
		code               int
	}{
		{"bad status", `{"cycle_id":"ID","title":"t","status":"sleeping"}`, "is not a valid cycle", reason.ExitIntegrity},
		{"wrong types", `{"cycle_id":"ID","iterations":{}}`, "CORRUPT_STATE", reason.ExitIntegrity},
		{"not JSON", `{"cycle_id":`, "CORRUPT_STATE", reason.ExitIntegrity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newCycleEnv(t)
			id := "hand-made"
			p := filepath.Join(e.dir, filepath.FromSlash(cycle.Key(id)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(tc.content, "ID", id)), 0o644); err != nil {
				t.Fatal(err)
			}
			before := e.tree()
			for _, args := range [][]string{
				{"cycle", "show", id},
				{"cycle", "signal", id},
				{"cycle", "iterate", id},
				{"cycle", "pause", id},
			} {
				_, errOut, code := e.run("", args...)
				if code != tc.code || !strings.Contains(errOut, tc.say) {
					t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
				}
			}
			if diff := cmp.Diff(before, e.tree()); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
			out := e.must("cycle", "list")
			if !strings.Contains(out, id) || !strings.Contains(out, "error") {
				t.Errorf("list does not show the damaged cycle:\n%s", out)
			}
		})
	}
}

// TestCycleAdoptsSeedFile: a cycle file written by the seed's own tooling
// (no journal) is read and changed through the custodian, its unknown
// fields kept.
func TestCycleAdoptsSeedFile(t *testing.T) {
	e := newCycleEnv(t)
	id := "cycle-v1-20260122T100000-abc123"
	seed := `{
  "cycle_id": "cycle-v1-20260122T100000-abc123",
  "title": "Implement OAuth authentication",
  "description": "Add OAuth2 login support with Google and GitHub providers",
  "task_history": ["Implement OAuth authentication"],
  "status": "created",
  "created_at": "2026-01-22T10:00:00+08:00",
  "updated_at": "2026-01-22T10:00:00+08:00",
  "max_iterations": 5,
  "current_iteration": 0,
  "agents": {
    "ra": { "status": "idle", "output_files": [], "iterations_completed": 0 },
    "ep": { "status": "idle", "output_files": [], "iterations_completed": 0 },
    "cd": { "status": "idle", "output_files": [], "iterations_completed": 0 },
    "vas": { "status": "idle", "output_files": [], "iterations_completed": 0 }
  },
  "current_phase": "init",
  "completed_phases": [],
  "phase_errors": [],
  "iterations": [],
  "coordination": { "feedback_log": [], "pending_decisions": [], "blockers": [] },
  "plugin_note": "kept"
}`
	p := filepath.Join(e.dir, filepath.FromSlash(cycle.Key(id)))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := e.must("cycle", "list"); !strings.Contains(out, id) {
		t.Fatalf("list:\n%s", out)
	}
	e.must("cycle", "iterate", id)
	s := e.state(id)
	if s.Status != cycle.StatusRunning || s.CreatedAt != "2026-01-22T10:00:00+08:00" || string(s.Extra["plugin_note"]) != `"kept"` {
		t.Errorf("adopted cycle: %s %s %s", s.Status, s.CreatedAt, s.Extra["plugin_note"])
	}
	if !strings.HasSuffix(s.UpdatedAt, "Z") {
		t.Errorf("updated_at %s is not UTC", s.UpdatedAt)
	}
}

// TestCycleRebuild: with the document and its journal gone, rebuild brings
// the cycle back from its progress files, paused with a review blocker; a
// document that does not parse (no journal) is moved aside first.
func TestCycleRebuild(t *testing.T) {
	e := newCycleEnv(t)
	id := e.create()
	e.must("cycle", "requirements", id, "--spec", "spec", "--edge-case", "edge")
	e.must("cycle", "change", id, "--file", "a.go", "--action", "create")
	e.must("cycle", "test-results", id, "--pass-rate", "90", "--coverage", "80", "--total", "10")
	e.must("cycle", "iterate", id, "more")
	e.must("cycle", "change", id, "--file", "b.go", "--action", "modify")
	want := e.state(id)

	docPath := filepath.Join(e.dir, filepath.FromSlash(cycle.Key(id)))
	journal := filepath.Join(e.dir, filepath.FromSlash(cycle.Dir), id+".journal.ndjson")
	for _, p := range []string{docPath, journal} {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	// Committed here and gone whole: the witness remembers it (exit 5).
	if _, errOut, code := e.run("", "cycle", "show", id); code != reason.ExitIntegrity || !strings.Contains(errOut, "gone") {
		t.Fatalf("show after loss: %d %s", code, errOut)
	}
	out := e.must("cycle", "rebuild", id)
	if !strings.Contains(out, "status paused") || !strings.Contains(out, cycle.RebuildBlockerID) {
		t.Errorf("rebuild said %q", out)
	}
	got := e.state(id)
	for name, pair := range map[string][2]any{
		"requirements": {want.Requirements, got.Requirements},
		"changes":      {want.Changes, got.Changes},
		"test_results": {want.TestResults, got.TestResults},
		"iterations":   {want.Iterations, got.Iterations},
		"description":  {want.Description, got.Description},
	} {
		if diff := cmp.Diff(pair[0], pair[1]); diff != "" {
			t.Errorf("%s (-before +rebuilt):\n%s", name, diff)
		}
	}
	if _, _, code := e.run("", "cycle", "signal", id); code != cyclecmd.SignalExitPause {
		t.Errorf("signal after rebuild: exit %d, want %d", code, cyclecmd.SignalExitPause)
	}
	if _, errOut, code := e.run("", "cycle", "rebuild", id); code != reason.ExitRejected || !strings.Contains(errOut, "exists and is valid") {
		t.Errorf("second rebuild: %d %s", code, errOut)
	}

	// A damaged document without a journal is moved aside, then rebuilt.
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(docPath, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := e.run("", "cycle", "rebuild", id)
	if code != 0 || !strings.Contains(errOut, "moved the damaged") {
		t.Fatalf("rebuild of damaged doc: exit %d %s", code, errOut)
	}
	aside, _ := filepath.Glob(docPath + ".corrupt-*")
	if len(aside) != 1 {
		t.Fatalf("damaged document not kept aside: %v", aside)
	}
	if b, _ := os.ReadFile(aside[0]); string(b) != "{not json" {
		t.Errorf("kept-aside copy is %q", b)
	}
	if s := e.state(id); s.Status != cycle.StatusPaused {
		t.Errorf("status %s", s.Status)
	}

	// A malformed progress file: a clear error, nothing changed.
	if err := os.Remove(docPath); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(e.dir, filepath.FromSlash(cycle.ProgressDir(id)), "cd", "changes.log")
	if err := os.WriteFile(bad, []byte("{\"file\":\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := e.tree()
	_, errOut, code = e.run("", "cycle", "rebuild", id)
	if code != reason.ExitUsage || !strings.Contains(errOut, "cd/changes.log") {
		t.Errorf("malformed progress file: exit %d %s", code, errOut)
	}
	if diff := cmp.Diff(before, e.tree()); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

// TestCycleSignalCodes: every status maps to its exit code and action.
func TestCycleSignalCodes(t *testing.T) {
	e := newCycleEnv(t)
	id := strings.TrimSpace(e.must("cycle", "create", "task"))
	check := func(code int, action string) {
		t.Helper()
		out, _, got := e.run("", "--json", "cycle", "signal", id)
		var sig cycle.Signal
		if err := json.Unmarshal([]byte(out), &sig); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got != code || sig.Action != action || sig.Continue != (code == 0) {
			t.Errorf("exit %d %+v, want %d %s", got, sig, code, action)
		}
	}
	check(cyclecmd.SignalExitUnknown, cycle.ActionUnknown)
	e.must("cycle", "iterate", id)
	check(cyclecmd.SignalExitContinue, cycle.ActionContinue)
	e.must("cycle", "pause", id)
	check(cyclecmd.SignalExitPause, cycle.ActionPause)
	e.must("cycle", "resume", id)
	check(cyclecmd.SignalExitContinue, cycle.ActionContinue)
	e.must("cycle", "complete", id)
	check(cyclecmd.SignalExitUnknown, cycle.ActionUnknown)
	e.must("cycle", "iterate", id, "more")
	e.must("cycle", "stop", id, "--reason", "budget")
	check(cyclecmd.SignalExitStop, cycle.ActionStop)
	if s := e.state(id); s.FailureReason != "budget" {
		t.Errorf("failure_reason %q", s.FailureReason)
	}
}

// TestCycleJournal: each command is one commit whose actor is the agent
// and whose reason is the event's summary.
func TestCycleJournal(t *testing.T) {
	e := newCycleEnv(t)
	id := e.create()
	e.must("cycle", "agent", id, "cd", "running")
	e.must("cycle", "change", id, "--file", "a.go", "--action", "create")
	out := e.must("--json", "history", cycle.Key(id))
	var recs []struct {
		Rev    uint64 `json:"rev"`
		Actor  string `json:"actor"`
		Reason string `json:"reason"`
		Events []struct {
			Type string `json:"type"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(recs) != 4 {
		t.Fatalf("%d commits, want 4: %s", len(recs), out)
	}
	last := recs[3]
	if last.Actor != "cd" || last.Reason != "cd created a.go (iteration 1)" || len(last.Events) != 1 || last.Events[0].Type != "cycle.change" {
		t.Errorf("last commit %+v", last)
	}
	e.must("verify", cycle.Key(id))
}

// TestCycleSignalWait: signal --wait on a paused cycle returns when another
// client resumes or stops it, and reports pause when the timeout passes.
func TestCycleSignalWait(t *testing.T) {
	e := newCycleEnv(t)
	id := e.create()
	e.must("cycle", "pause", id)

	out, _, code := e.run("", "cycle", "signal", id, "--wait", "--timeout", "300ms")
	if code != cyclecmd.SignalExitPause || out != "pause\n" {
		t.Errorf("timeout: exit %d %q", code, out)
	}

	type result struct {
		out  string
		code int
	}
	for _, tc := range []struct {
		args   []string
		code   int
		action string
	}{
		{[]string{"cycle", "resume", id}, cyclecmd.SignalExitContinue, "continue"},
		{[]string{"cycle", "stop", id, "--reason", "cancelled"}, cyclecmd.SignalExitStop, "stop"},
	} {
		done := make(chan result, 1)
		waiter := &cycleEnv{t: t, dir: e.dir, now: e.now}
		go func() {
			out, _, code := waiter.run("", "cycle", "signal", id, "--wait", "--timeout", "20s")
			done <- result{out, code}
		}()
		time.Sleep(300 * time.Millisecond)
		e.must(tc.args...)
		select {
		case r := <-done:
			if r.code != tc.code || r.out != tc.action+"\n" {
				t.Errorf("after %v: exit %d %q, want %d %s", tc.args, r.code, r.out, tc.code, tc.action)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("signal --wait did not return after %v", tc.args)
		}
		if tc.action == "continue" {
			e.must("cycle", "pause", id)
		}
	}
}
