package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// asddEnv is a project directory and a clock that moves a minute per command.
type asddEnv struct {
	t   *testing.T
	dir string
	now time.Time
	log bytes.Buffer // the transcript
}

func newASDDEnv(t *testing.T) *asddEnv {
	return &asddEnv{t: t, dir: t.TempDir(), now: time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)}
}

func (e *asddEnv) run(args ...string) (string, string, int) {
	e.t.Helper()
	now := e.now
	e.now = e.now.Add(time.Minute)
	stdout, stderr, code := runCLI(e.dir, "", now, args...)
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = a
		if strings.ContainsAny(a, " \"'") || a == "" {
			quoted[i] = strconv.Quote(a)
		}
	}
	fmtKey := "$ custodian " + strings.Join(quoted, " ") + "\n"
	e.log.WriteString(fmtKey)
	e.log.WriteString(stdout)
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if l != "" {
			e.log.WriteString("stderr: " + l)
		}
	}
	if code != 0 {
		e.log.WriteString("exit " + itoa(code) + "\n")
	}
	e.log.WriteString("\n")
	return stdout, stderr, code
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func (e *asddEnv) must(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run(args...)
	if code != 0 {
		e.t.Fatalf("custodian %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

func (e *asddEnv) want(code int, args ...string) string {
	e.t.Helper()
	out, errOut, got := e.run(args...)
	if got != code {
		e.t.Fatalf("custodian %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, code, out, errOut)
	}
	return out + errOut
}

func (e *asddEnv) write(path, content string) {
	e.t.Helper()
	p := filepath.Join(e.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *asddEnv) read(path string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(path)))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

func (e *asddEnv) manifest() *asdd.Manifest {
	e.t.Helper()
	m, err := asdd.Decode([]byte(e.read(asdd.Key)))
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	checkGolden(t, filepath.Join("testdata", "asdd", name), got)
}

// A small pipeline in-process: the transcript, the board as text and JSON,
// the failure log and an escalation notice are compared with golden files.
func TestASDDGolden(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init", "--sprint", "2026-Q2-S3", "--goal", "Secure login")
	e.must("slice", "add", "SLICE-001", "--name", "User Authentication Flow")
	e.must("slice", "add", "SLICE-002", "--name", "Settlement Reports")
	e.must("slice", "add", "RETRO-AUTH-001", "--type", "retro_spec", "--name", "Legacy auth behaviour")
	e.write(".asdd/specs/auth/intent.md", "# Intent\nUsers log in.\n")
	e.write(".asdd/specs/auth/requirements.md", "# Requirements\nREQ-001 …\n")
	e.write(".asdd/specs/auth/design.md", "# Design\n")
	e.write(".asdd/traces/SLICE-001-design.md", "trace\n")
	e.must("propose", "--agent", "discovery", "--slice", "SLICE-001", "--score", "0.91", "--artifact", "intent=.asdd/specs/auth/intent.md", "--uncertainty", "token type not in the domain model",
		"--assumption", "We use PostgreSQL", "--assumption", "Sessions are JWT")
	e.must("assumption", "correct", "SLICE-001", "2", "--role", "PO", "--text", "Sessions are server-side")
	e.want(3, "propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "0.88", "--artifact", "requirements=.asdd/specs/auth/requirements.md")
	e.must("propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "0.86", "--artifact", "requirements=.asdd/specs/auth/requirements.md", "--uncertainty", "NFR latency target not specified")
	e.want(3, "propose", "--agent", "validation", "--slice", "SLICE-001", "--score", "0.93", "--uncertainty", "Settlement has two definitions")
	e.write(".asdd/specs/settle/intent.md", "# Settlement\n")
	e.must("lock", "SLICE-002", "--holder", "discovery", "--ttl", "30m")
	e.want(4, "propose", "--agent", "spec", "--slice", "SLICE-002", "--score", "0.97")
	e.must("propose", "--agent", "discovery", "--slice", "SLICE-002", "--score", "0.97", "--artifact", "intent=.asdd/specs/settle/intent.md")
	e.must("tasks", "add", "SLICE-002", "T1", "--wave", "1", "--title", "migrations", "--req", "REQ-001")
	e.must("tasks", "add", "SLICE-002", "T2", "--wave", "2", "--depends-on", "T1", "--title", "repositories")
	e.must("heartbeat", "--agent", "implementation", "--slice", "SLICE-002", "--wave", "1", "--done", "0", "--remaining", "2")
	e.write("web/login.html", "<h1>Log in</h1>\n")
	e.must("quick", "Fix typo in login header", "--artifact", "fix=web/login.html")
	e.want(2, "propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "high")
	e.want(2, "propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "0.9", "--artifact", "requirements=../outside.md")
	e.want(5, "propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "0.9", "--artifact", "requirements=.asdd/specs/auth/missing.md")
	e.want(3, "resolve", "SLICE-001", "--role", "PO", "--rationale", "not mine")
	e.must("escalations")
	e.must("tasks", "ready", "SLICE-002")
	e.now = e.now.Add(20 * time.Minute) // the implementation agent goes quiet
	golden(t, "transcript.txt", e.log.String())
	golden(t, "status.txt", e.must("status"))
	golden(t, "status.json", e.must("status", "--json"))
	golden(t, "slice-show.txt", e.must("slice", "show", "SLICE-001"))
	golden(t, "failure-log.md", e.read(asdd.FailureLogPath))
	m := e.manifest()
	golden(t, "escalation.md", e.read(m.Slice("SLICE-001").OpenEscalation().Path))
	if bad := asdd.Invariants(m, asdd.DefaultConfig()); len(bad) > 0 {
		t.Fatalf("invariants: %v", bad)
	}
}

// --json: a rejection is one {"error":…} object; a committed halt is one
// result object carrying the verdict; exit codes follow DESIGN.md §6.
func TestASDDJSONResults(t *testing.T) {
	e := newASDDEnv(t)
	out := e.want(3, "--json", "status")
	var rej struct{ Error reason.Error }
	if err := json.Unmarshal([]byte(out), &rej); err != nil || rej.Error.Code != reason.NotFound {
		t.Fatalf("no-manifest error: %v %s", err, out)
	}
	e.must("init")
	e.must("slice", "add", "S")
	e.write("i.md", "x")
	out = e.want(3, "--json", "propose", "--agent", "discovery", "--slice", "S", "--score", "0.5", "--artifact", "intent=i.md", "--uncertainty", "u")
	var res cmdutil.CommitResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if res.Verdict == nil || res.Verdict.Code != reason.BelowThreshold || res.Slice == nil || res.Slice.Status != asdd.Blocked || res.Revision != 3 {
		t.Fatalf("halt result %+v", res)
	}
	if got := e.read("i.md"); got != "DRAFT — AWAITING CLARIFICATION\n\nx" {
		t.Fatalf("discovery artifact marked %q", got)
	}
	out = e.want(3, "--json", "propose", "--agent", "discovery", "--slice", "S", "--score", "0.97")
	if err := json.Unmarshal([]byte(out), &rej); err != nil || rej.Error.Code != reason.Halted {
		t.Fatalf("halted slice: %s", out)
	}
	e.want(2, "propose", "--agent", "discovery", "--slice", "S")
	e.want(2, "resolve", "S", "--role", "TL")
	e.write(asdd.ConfigPath, "ccs:\n  floor: 7\n")
	out = e.want(2, "status")
	if !strings.Contains(out, "ccs.floor") {
		t.Fatalf("bad config error does not name the key: %s", out)
	}
}

// Effects lost between a commit and their application (a crash) are
// re-derived by the next command that touches the slice.
func TestASDDEffectsRepaired(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	e.write("i.md", "x")
	e.want(3, "propose", "--agent", "discovery", "--slice", "S", "--score", "0.5", "--artifact", "intent=i.md", "--uncertainty", "u")
	m := e.manifest()
	notice := m.Slice("S").OpenEscalation().Path
	want := e.read(notice)
	for _, p := range []string{notice, asdd.FailureLogPath} {
		if err := os.Remove(filepath.Join(e.dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}
	e.must("lock", "S", "--holder", "discovery")
	if got := e.read(notice); got != want {
		t.Fatalf("notice not restored:\n%s", got)
	}
	if log := e.read(asdd.FailureLogPath); !strings.Contains(log, "<!-- "+m.Slice("S").EscalationID+" -->") {
		t.Fatalf("log row not restored:\n%s", log)
	}
}

func TestASDDInitAndSchema(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	if got := e.read(asdd.ConfigPath); got != string(asdd.DefaultConfigYAML) {
		t.Fatal("init did not write the default config")
	}
	rev := e.manifest().Revision
	if out := e.must("init"); !strings.Contains(out, "already initialized") || e.manifest().Revision != rev {
		t.Fatalf("second init changed something: %s", out)
	}
	e.must("init", "--sprint", "S2")
	if m := e.manifest(); m.ProjectContext.CurrentSprint != "S2" || m.Revision != rev+1 {
		t.Fatalf("init --sprint: %+v", m.ProjectContext)
	}
	out := e.must("schema", "asdd")
	var schema map[string]any
	if err := json.Unmarshal([]byte(out), &schema); err != nil || schema["$schema"] == nil {
		t.Fatalf("schema output: %v", err)
	}
	if out != string(asdd.Schema) {
		t.Fatal("schema output is not the embedded schema")
	}
	e.want(2, "schema", "impl-nope")
}
