// Package samebytes checks that the MCP door and the CLI leave the same
// bytes in every file they write. It lives beside the CLI, the one place
// allowed to import the CLI's packages.
package samebytes_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/mcp"
	"github.com/custodian-dev/custodian/mcp/mcptest"
	"github.com/custodian-dev/custodian/store/file"
)

// now is the fixed clock of both doors.
var now = time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)

const actor = "mcp-test"

// runCLI runs custodian in-process in p's directory with the tests'
// clock, as a user would, and returns its exit code and output.
func runCLI(t *testing.T, p *project, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	a := &cli.App{In: strings.NewReader(""), Out: &out, Err: &out, Now: func() time.Time { return now }}
	code := cli.Run(a, append([]string{"-C", p.root}, args...))
	return code, out.String()
}

// TestSameBytesAsCLI: each writing tool leaves every file it touches
// (the documents, and the escalation notice and failure log of a halt)
// byte for byte as the CLI leaves them after the same steps.
func TestSameBytesAsCLI(t *testing.T) {
	t.Setenv("CUSTODIAN_ACTOR", actor)
	viaCLI, viaMCP := newProject(t), newProject(t)
	for _, p := range []*project{viaCLI, viaMCP} {
		p.st.Close() // the CLI opens the store itself
		for _, args := range [][]string{{"init", "--sprint", "S1"}, {"impl", "--init", "--plan-path", "plans/001.md", "--plan-number", "001", "--plan-title", "Auth"},
			{"state", "init", "build auth"}} {
			if code, out := runCLI(t, p, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, out)
			}
		}
		p.write("specs/SLICE-001/intent.md", "# intent\n")
		p.write("specs/SLICE-001/requirements.md", "# requirements\n")
	}
	// viaMCP's server goes through the same path as `custodian mcp`: a
	// store opened by the application layer of the project.
	mp := newProject(t)
	mp.root = viaMCP.root
	reopen(t, mp)
	cs := connect(t, mp.server(false), nil)

	steps := []struct {
		cli  []string
		tool string
		args map[string]any
		// code is the CLI's exit code (the tool is then an error)
		code int
	}{
		{[]string{"slice", "add", "SLICE-001", "--name", "auth"}, "slice_add", map[string]any{"slice": "SLICE-001", "name": "auth"}, 0},
		{[]string{"heartbeat", "--agent", "discovery", "--slice", "SLICE-001", "--wave", "1", "--done", "0", "--remaining", "2"}, "heartbeat", map[string]any{"agent": "discovery", "slice": "SLICE-001", "wave": 1, "done": 0, "remaining": 2}, 0},
		{[]string{"lock", "SLICE-001", "--holder", "discovery", "--ttl", "5m"}, "lock", map[string]any{"slice": "SLICE-001", "holder": "discovery", "ttl": "5m"}, 0},
		{[]string{"propose", "--agent", "discovery", "--slice", "SLICE-001", "--score", "0.97", "--artifact", "intent=specs/SLICE-001/intent.md"}, "propose",
			map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.97, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{}}, 0},
		{[]string{"unlock", "SLICE-001", "--holder", "discovery"}, "unlock", map[string]any{"slice": "SLICE-001", "holder": "discovery"}, 0},
		{[]string{"tasks", "add", "SLICE-001", "t1", "--wave", "1"}, "", nil, 0},
		{[]string{"tasks", "add", "SLICE-001", "t2", "--wave", "1"}, "", nil, 0},
		{[]string{"tasks", "claim", "SLICE-001", "t1", "--agent", "impl-1"}, "task_claim", map[string]any{"slice": "SLICE-001", "task": "t1", "agent": "impl-1"}, 0},
		{[]string{"tasks", "claim", "SLICE-001", "t1", "--agent", "impl-2"}, "task_claim", map[string]any{"slice": "SLICE-001", "task": "t1", "agent": "impl-2"}, 4},
		{[]string{"tasks", "done", "SLICE-001", "t1", "--agent", "impl-1"}, "task_done", map[string]any{"slice": "SLICE-001", "task": "t1", "agent": "impl-1"}, 0},
		{[]string{"propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "0.5", "--artifact", "requirements=specs/SLICE-001/requirements.md", "--uncertainty", "NFRs unknown"}, "propose",
			map[string]any{"agent": "spec", "slice": "SLICE-001", "score": 0.5, "artifacts": map[string]any{"requirements": "specs/SLICE-001/requirements.md"}, "uncertainty": []any{"NFRs unknown"}}, 3},
		{[]string{"impl", "--add-task", "--task-id", "1", "--phase", "1", "--description", "schema", "--depends-on", "none", "--bounded-contexts", "auth,users"}, "impl_add_task",
			map[string]any{"task_id": "1", "phase": 1, "description": "schema", "bounded_contexts": []any{"auth", "users"}}, 0},
		{[]string{"impl", "--add-task", "--task-id", "2", "--phase", "1", "--description", "api", "--depends-on", "1"}, "impl_add_task",
			map[string]any{"task_id": "2", "phase": 1, "description": "api", "depends_on": []any{1}}, 0},
		{[]string{"impl", "--update-status", "--task-id", "1", "--status", "in_progress", "--branch", "impl/1"}, "impl_update_status",
			map[string]any{"task_id": "1", "status": "in_progress", "branch": "impl/1"}, 0},
		{[]string{"state", "update", `{"notes":{"db":"postgres"},"phase":"design"}`}, "state_update", map[string]any{"patch": map[string]any{"notes": map[string]any{"db": "postgres"}, "phase": "design"}}, 0},
		{[]string{"cycle", "create", "auth cycle", "--id", "c1"}, "cycle_update", map[string]any{"cycle_id": "c1", "op": "create", "args": map[string]any{"task": "auth cycle"}}, 0},
		{[]string{"cycle", "iterate", "c1", "add 2FA"}, "cycle_update", map[string]any{"cycle_id": "c1", "op": "iterate", "args": map[string]any{"extension": "add 2FA"}, "if_revision": 1}, 0},
	}
	for _, st := range steps {
		code, out := runCLI(t, viaCLI, st.cli...)
		if code != st.code {
			t.Fatalf("CLI %v: exit %d, want %d: %s", st.cli, code, st.code, out)
		}
		if st.tool == "" {
			if code, out := runCLI(t, viaMCP, st.cli...); code != 0 {
				t.Fatalf("%v: exit %d: %s", st.cli, code, out)
			}
			continue
		}
		res := call(t, cs, st.tool, st.args)
		if res.IsError != (st.code != 0) {
			t.Fatalf("%s: isError %v, CLI exit %d: %s", st.tool, res.IsError, st.code, text(res))
		}
		if code := errorCode(res); st.code != 0 && (code == "" || !strings.Contains(out, string(code)+": ")) {
			t.Fatalf("%s: tool error %q, CLI said %q", st.tool, text(res), out)
		}
	}
	m, err := asdd.Decode(viaCLI.read(asdd.Key))
	if err != nil {
		t.Fatal(err)
	}
	es := m.Slice("SLICE-001").Escalations
	if len(es) != 1 {
		t.Fatalf("escalations %v", es)
	}
	files := []string{asdd.Key, impl.Key, agentstate.Key, cycle.Key("c1"), "docs/agent-failure-log.md", es[0].Path, "specs/SLICE-001/requirements.md"}
	// and the cycle's progress files
	progress := 0
	filepath.WalkDir(filepath.Join(viaCLI.root, ".workflow"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(path, "progress") {
			rel, _ := filepath.Rel(viaCLI.root, path)
			files = append(files, filepath.ToSlash(rel))
			progress++
		}
		return nil
	})
	if progress == 0 {
		t.Fatal("no cycle progress files")
	}
	for _, rel := range files {
		if a, b := viaCLI.read(rel), viaMCP.read(rel); !bytes.Equal(a, b) {
			t.Errorf("%s differs:\nCLI: %s\nMCP: %s", rel, a, b)
		}
	}
}

// reopen gives p a store and application layer over its root again.
func reopen(t *testing.T, p *project) {
	t.Helper()
	np := newProjectAt(t, p.root)
	p.st, p.svc = np.st, np.svc
}

// project is a project directory with its file store and application
// layer, as `custodian mcp` runs without a daemon.
type project struct {
	t    *testing.T
	root string
	st   *file.Store
	svc  *app.Local
}

func newProject(t *testing.T) *project {
	t.Helper()
	return newProjectAt(t, t.TempDir())
}

func newProjectAt(t *testing.T, root string) *project {
	t.Helper()
	st, err := file.Open(root, file.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := app.NewLocal(app.Options{Store: st, Root: root, Now: func() time.Time { return now }})
	return &project{t: t, root: root, st: st, svc: svc}
}

func (p *project) write(rel, content string) {
	p.t.Helper()
	path := filepath.Join(p.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) read(rel string) []byte {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(rel)))
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// server returns an MCP server over the project's application layer.
func (p *project) server(admin bool) *mcp.Server {
	p.t.Helper()
	s := mcp.New(mcp.Options{
		Service: func(context.Context) (app.Service, error) { return p.svc, nil },
		Admin:   admin,
		Actor:   actor,
		Now:     func() time.Time { return now },
	})
	p.t.Cleanup(func() { s.Close() })
	return s
}

// The MCP door's test helpers (package mcptest).
var (
	connect   = mcptest.Connect
	call      = mcptest.Call
	text      = mcptest.Text
	errorCode = mcptest.ErrorCode
)
