package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/mcp"
	"github.com/custodian-dev/custodian/mcp/mcptest"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/wire"
)

// now is the fixed clock of the tests (the CLI's in the byte comparisons).
var now = time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)

const actor = "mcp-test"

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

// do runs an ASDD operation through the application layer (the fixture).
func (p *project) do(op asdd.Op) {
	p.t.Helper()
	if _, err := p.svc.ASDD(context.Background(), op); err != nil {
		p.t.Fatalf("%T: %v", op, err)
	}
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

// seed makes the fixture every tool test starts from: an ASDD manifest
// with slice SLICE-001 (tasks t1, t2 in wave 1, t3 in wave 2) and its
// discovery artifact on disk, a task manifest with task 1, the
// state-manager's state and a dev cycle c1.
func (p *project) seed() {
	p.t.Helper()
	ctx := context.Background()
	p.do(asdd.Init{Sprint: "S1"})
	p.do(asdd.AddSlice{ID: "SLICE-001", Name: "auth", Type: asdd.TypeFeature, GovernanceMode: "MANUAL", By: actor})
	for _, tk := range []asdd.AddTask{{Slice: "SLICE-001", ID: "t1", Wave: 1}, {Slice: "SLICE-001", ID: "t2", Wave: 1}, {Slice: "SLICE-001", ID: "t3", Wave: 2}} {
		p.do(tk)
	}
	p.write("specs/SLICE-001/intent.md", "# intent\n")
	if _, err := p.svc.Impl(ctx, wire.ImplRequest{Op: "init", PlanPath: "plans/001.md", PlanNumber: "001", PlanTitle: "Auth"}); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.svc.Impl(ctx, wire.ImplRequest{Op: "add-task", TaskID: "1", Phase: "1", Description: "schema", DependsOn: "none"}); err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.svc.UpdateState(ctx, wire.StateRequest{Op: "init", Task: "build auth"}); err != nil {
		p.t.Fatal(err)
	}
	args, _ := json.Marshal(wire.CycleCreate{Task: "auth cycle"})
	if _, err := p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: "c1", Op: "create", Args: args}); err != nil {
		p.t.Fatal(err)
	}
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

// structured decodes a result's structured content.
func structured(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return m
}

// docBytes returns a document's value as stored.
func docBytes(t *testing.T, st store.Store, key string) []byte {
	t.Helper()
	doc, err := st.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return doc.Value
}

// runCLI runs the custodian binary in p's directory, as another process
// writing to the project would, and returns its exit code and output.
func runCLI(t *testing.T, p *project, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), append([]string{"-C", p.root}, args...)...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	case err != nil:
		t.Fatal(err)
	}
	return 0, string(out)
}

// The MCP door's test helpers (package mcptest).
var (
	connect   = mcptest.Connect
	call      = mcptest.Call
	text      = mcptest.Text
	errorCode = mcptest.ErrorCode
)
