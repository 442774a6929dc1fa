package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/store"
)

// The documents under testdata/foreign are written as the seeds' own tools
// write them, with no journal: seed 000's example manifest (and the same
// with the seed's example of a blocked slice), the principled plugin's
// .impl/manifest.json as task-manifest.sh writes it, the state-manager's
// state.json right after its init, and seed 003's new cycle.

// foreignOp is one write operation of a document's kind, as the CLI and
// (for an agent's operation) an MCP tool ask it.
type foreignOp struct {
	name    string
	fixture string // testdata/foreign file, when not the kind's
	cli     []string
	tool    string // the MCP tool; "" for a human's decision (not an agent's tool)
	args    map[string]any
	halts   bool // the commit halts a slice: exit 3, an MCP tool error
	// shape changes the document before it is written, as its seed
	// allows (a slice marked NEEDS_HUMAN_REVIEW for a review).
	shape func(map[string]any)
}

type foreignKind struct {
	name, key, fixture string
	ops                []foreignOp
	// unknown adds members the custodian does not know, at the top and
	// inside, and returns where they are (JSON pointers) and their value.
	unknown func(map[string]any) map[string]any
}

const foreignCycle = "cycle-v1-20260122T100000-abc123"

func foreignKinds() []foreignKind {
	// A cycle in its first iteration, as seed 003's "Iteration 1" shows.
	running := func(m map[string]any) {
		m["status"], m["current_iteration"], m["current_phase"] = "running", 1, "ra"
		m["iterations"] = []any{map[string]any{"number": 1, "started_at": "2026-01-22T10:00:00+08:00", "agent_results": map[string]any{}}}
	}
	marked := func(m map[string]any) {
		m["project_context"].(map[string]any)["needs_human_review"] = []any{"current_sprint"}
	}
	return []foreignKind{{
		name: "asdd", key: ".asdd/state/manifest.json", fixture: "asdd-manifest.json",
		unknown: func(m map[string]any) map[string]any {
			m["revision"] = 0
			m["x_plugin"] = map[string]any{"kept": true}
			m["project_context"].(map[string]any)["x_team"] = "payments"
			m["slices"].([]any)[0].(map[string]any)["x_owner"] = "alice"
			m["agent_heartbeats"].(map[string]any)["discovery_agent"].(map[string]any)["x_host"] = "ci-3"
			return map[string]any{"/x_plugin": map[string]any{"kept": true}, "/project_context/x_team": "payments",
				"/slices/0/x_owner": "alice", "/agent_heartbeats/discovery_agent/x_host": "ci-3"}
		},
		ops: []foreignOp{
			{name: "init", cli: []string{"init"}},
			{name: "heartbeat", cli: []string{"heartbeat", "--agent", "spec"}, tool: "heartbeat", args: map[string]any{"agent": "spec"}},
			{name: "lock", cli: []string{"lock", "SLICE-001", "--holder", "alice"}, tool: "lock", args: map[string]any{"slice": "SLICE-001", "holder": "alice"}},
			{name: "slice add", cli: []string{"slice", "add", "SLICE-002", "--name", "Billing"}, tool: "slice_add", args: map[string]any{"slice": "SLICE-002", "name": "Billing"}},
			{name: "propose", halts: true, // the seed's chain times 0.96 is below the CCS floor
				cli:  []string{"propose", "--agent", "implementation", "--slice", "SLICE-001", "--score", "0.96", "--artifact", "code=src/auth.go", "--uncertainty", "load untested"},
				tool: "propose", args: map[string]any{"agent": "implementation", "slice": "SLICE-001", "score": 0.96, "artifacts": map[string]any{"code": "src/auth.go"}, "uncertainty": []any{"load untested"}}},
			{name: "quick", cli: []string{"quick", "Fix typo in login header"}},
			{name: "task add", cli: []string{"tasks", "add", "SLICE-001", "T-1", "--wave", "1", "--title", "login form"}},
			{name: "resolve", fixture: "asdd-blocked-manifest.json", cli: []string{"resolve", "SLICE-005", "--role", "TL", "--rationale", "attributes clarified"}},
			{name: "approve", fixture: "asdd-blocked-manifest.json", cli: []string{"approve", "SLICE-005", "--role", "TL", "--rationale", "accepted as is"}},
			{name: "review", shape: marked, cli: []string{"review", "--project", "--role", "TL"}},
		},
	}, {
		name: "impl", key: ".impl/manifest.json", fixture: "impl-manifest.json",
		unknown: func(m map[string]any) map[string]any {
			m["x_plugin"] = "kept"
			m["tasks"].([]any)[0].(map[string]any)["x_owner"] = "bob"
			return map[string]any{"/x_plugin": "kept", "/tasks/0/x_owner": "bob", "/checkpoint/agent_id": "orchestrator"}
		},
		ops: []foreignOp{
			{name: "add-task", cli: []string{"impl", "--add-task", "--task-id", "1.3", "--phase", "1", "--description", "Invoice email"},
				tool: "impl_add_task", args: map[string]any{"task_id": "1.3", "phase": 1, "description": "Invoice email"}},
			{name: "update-status", cli: []string{"impl", "--update-status", "--task-id", "1.2", "--status", "in_progress"},
				tool: "impl_update_status", args: map[string]any{"task_id": "1.2", "status": "in_progress"}},
		},
	}, {
		name: "state", key: ".agents/tmp/state.json", fixture: "state.json",
		unknown: func(m map[string]any) map[string]any {
			m["x_plugin"] = "kept"
			m["stages"].(map[string]any)["EXPLORE"].(map[string]any)["x_note"] = "two agents"
			return map[string]any{"/x_plugin": "kept", "/stages/EXPLORE/x_note": "two agents"}
		},
		ops: []foreignOp{
			{name: "update", cli: []string{"state", "update", `{"currentStage":"PLAN"}`}, tool: "state_update", args: map[string]any{"patch": map[string]any{"currentStage": "PLAN"}}},
			{name: "record-failure", cli: []string{"state", "record-failure", "--phase", "1.1", "--error", "agent timeout"}},
			{name: "compact", cli: []string{"state", "compact", "--summary", "context compacted"}},
			{name: "record-output", cli: []string{"state", "record-output", "1.1", "$DIR/notes.md"}},
		},
	}, {
		name: "cycle", key: ".workflow/.cycle/" + foreignCycle + ".json", fixture: foreignCycle + ".json",
		// The cycle's own rules keep unknown members at the top only.
		unknown: func(m map[string]any) map[string]any {
			m["x_plugin"] = map[string]any{"kept": true}
			return map[string]any{"/x_plugin": map[string]any{"kept": true}}
		},
		ops: []foreignOp{
			{name: "iterate", cli: []string{"cycle", "iterate", foreignCycle}, tool: "cycle_update", args: map[string]any{"cycle_id": foreignCycle, "op": "iterate"}},
			{name: "agent", shape: running, cli: []string{"cycle", "agent", foreignCycle, "ra", "running"}},
			{name: "feedback", cli: []string{"cycle", "feedback", foreignCycle, "OAuth retry test fails", "--from", "vas", "--to", "cd", "--type", "bug_report"}},
			{name: "change", shape: running, cli: []string{"cycle", "change", foreignCycle, "--file", "src/config/oauth.ts", "--action", "create", "--agent", "cd"}},
			{name: "block", cli: []string{"cycle", "block", foreignCycle, "--description", "No sandbox credentials", "--by", "cd"}},
			{name: "decide", cli: []string{"cycle", "decide", foreignCycle, "--description", "Token store", "--option", "redis", "--option", "postgres"}},
			{name: "requirements", shape: running, cli: []string{"cycle", "requirements", foreignCycle, "--spec", "OAuth2 with Google and GitHub"}},
			{name: "stop", cli: []string{"cycle", "stop", foreignCycle, "--reason", "superseded"}},
		},
	}}
}

// TestForeignDocumentIsAdoptedByItsFirstCommit: a document another tool
// wrote (no journal), as its seed shows it and with members the custodian
// does not know, is adopted by the first commit of every write operation
// of its kind, through the CLI, the daemon and MCP: one journal record
// that says it adopted the document and keeps it as found, the unknown
// members kept, the revision member the journal's, and verify passes.
func TestForeignDocumentIsAdoptedByItsFirstCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testbin.Path(t)
	for _, k := range foreignKinds() {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			for _, op := range k.ops {
				for _, door := range []string{"cli", "daemon", "mcp"} {
					if door == "mcp" && op.tool == "" {
						continue // a human's decision is no agent's tool
					}
					for _, withUnknown := range []bool{false, true} {
						name := op.name + "/" + door
						if withUnknown {
							name += "/unknown-members"
						}
						t.Run(name, func(t *testing.T) { adoptForeign(t, bin, k, op, door, withUnknown) })
					}
				}
			}
		})
	}
}

func adoptForeign(t *testing.T, bin string, k foreignKind, op foreignOp, door string, withUnknown bool) {
	p := &proc{t: t, bin: bin, dir: t.TempDir()}
	fixture := k.fixture
	if op.fixture != "" {
		fixture = op.fixture
	}
	found, err := os.ReadFile(filepath.Join("testdata", "foreign", fixture))
	if err != nil {
		t.Fatal(err)
	}
	var kept map[string]any
	if withUnknown || op.shape != nil {
		var m map[string]any
		if err := json.Unmarshal(found, &m); err != nil {
			t.Fatal(err)
		}
		if op.shape != nil {
			op.shape(m)
		}
		if withUnknown {
			kept = k.unknown(m)
		}
		if found, err = json.MarshalIndent(m, "", "  "); err != nil {
			t.Fatal(err)
		}
	}
	p.write(k.key, string(found))
	for _, f := range []string{".asdd/specs/auth/intent.md", ".asdd/specs/auth/requirements.md", "docs/architecture/domain-model.md",
		".asdd/specs/auth/design.md", ".asdd/specs/auth/tasks.md", ".asdd/traces/SLICE-001-design.md", ".asdd/specs/settlement/design.md",
		"src/auth.go", "notes.md"} {
		p.write(f, "# "+f+"\n")
	}

	args := make([]string, len(op.cli))
	for i, a := range op.cli {
		args[i] = strings.ReplaceAll(a, "$DIR", p.dir)
	}
	wantCode := 0
	if op.halts {
		wantCode = 3
	}
	switch door {
	case "cli":
		p.want(wantCode, args...)
	case "daemon":
		d := startServe(t, p.dir)
		p.want(wantCode, args...)
		if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := d.wait(t); code != 0 {
			t.Fatalf("serve exited %d\n%s", code, d.out.String())
		}
	case "mcp":
		cs, stderr := foreignMCP(t, p.dir)
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: op.tool, Arguments: op.args})
		if err != nil {
			t.Fatalf("%s: %v\n%s", op.tool, err, stderr.String())
		}
		if res.IsError != op.halts {
			t.Fatalf("%s: error %v, want %v: %+v", op.tool, res.IsError, op.halts, res.Content)
		}
		cs.Close()
	}

	// One record, the first commit's, says it adopted the document and
	// keeps it as found.
	var recs []store.Record
	if err := json.Unmarshal([]byte(p.want(0, "--json", "history", k.key)), &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || recs[0].Rev != 1 || len(recs[0].Events) == 0 || recs[0].Events[0].Type != store.AdoptedEvent {
		t.Fatalf("the first record does not adopt the document: %+v", recs)
	}
	var ev struct{ Found any }
	var want any
	if err := json.Unmarshal(recs[0].Events[0].Data, &ev); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(found, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev.Found, want) {
		t.Fatalf("the adoption record does not keep the document as found:\n%s", recs[0].Events[0].Data)
	}
	b, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(k.key)))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for ptr, v := range kept {
		if got := pointer(doc, ptr); !reflect.DeepEqual(got, v) {
			t.Errorf("unknown member %s is %v, want %v", ptr, got, v)
		}
	}
	if rev, ok := doc["revision"]; ok || k.name == "asdd" {
		if rev != float64(recs[len(recs)-1].Rev) {
			t.Errorf("revision member %v, journal at %d", rev, recs[len(recs)-1].Rev)
		}
	}
	p.want(0, "verify")
}

// pointer returns the value at a JSON pointer of plain segments in v.
func pointer(v any, ptr string) any {
	for _, seg := range strings.Split(ptr, "/")[1:] {
		switch c := v.(type) {
		case map[string]any:
			v = c[seg]
		case []any:
			i := 0
			for _, r := range seg {
				i = i*10 + int(r-'0')
			}
			if i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// foreignMCP starts `custodian -C dir mcp` and connects to it as an
// agent's MCP client does.
func foreignMCP(t *testing.T, dir string) (*sdk.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), "-C", dir, "mcp")
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// TestForeignDocumentFailingItsSchemaIsRefusedAndLeftAsItIs: a foreign
// document that fails its schema is refused with a reason code and the
// member named, and the project is left as it was: the file, no journal,
// no lock file; and a refused create makes no directory.
func TestForeignDocumentFailingItsSchemaIsRefusedAndLeftAsItIs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testbin.Path(t)
	for _, c := range []struct {
		kind   string
		break_ func(map[string]any)
		member string
	}{
		{"asdd", func(m map[string]any) { m["slices"].([]any)[0].(map[string]any)["status"] = "SHIPPED" }, "/slices/0/status"},
		{"impl", func(m map[string]any) { m["tasks"].([]any)[1].(map[string]any)["phase"] = "one" }, "phase"},
		{"state", func(m map[string]any) { m["status"] = "sleeping" }, "status"},
		{"cycle", func(m map[string]any) { m["status"] = "sleeping" }, "status"},
	} {
		var k foreignKind
		for _, fk := range foreignKinds() {
			if fk.name == c.kind {
				k = fk
			}
		}
		for _, op := range k.ops {
			t.Run(c.kind+"/"+op.name, func(t *testing.T) {
				p := &proc{t: t, bin: bin, dir: t.TempDir()}
				fixture := k.fixture
				if op.fixture != "" {
					fixture = op.fixture
				}
				raw, err := os.ReadFile(filepath.Join("testdata", "foreign", fixture))
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					t.Fatal(err)
				}
				if op.shape != nil {
					op.shape(m)
				}
				c.break_(m)
				bad, _ := json.MarshalIndent(m, "", "  ")
				p.write(k.key, string(bad))
				for _, f := range []string{".asdd/specs/auth/intent.md", ".asdd/specs/auth/requirements.md", "docs/architecture/domain-model.md",
					".asdd/specs/auth/design.md", ".asdd/specs/auth/tasks.md", ".asdd/traces/SLICE-001-design.md", ".asdd/specs/settlement/design.md",
					"src/auth.go", "notes.md"} {
					p.write(f, "# "+f+"\n")
				}
				args := make([]string, len(op.cli))
				for i, a := range op.cli {
					args[i] = strings.ReplaceAll(a, "$DIR", p.dir)
				}
				before := listFiles(t, p.dir)
				out, code := p.run(append([]string{"--json"}, args...)...)
				if code == 0 || code == 3 && strings.Contains(out, "committed") && !strings.Contains(out, `"committed": false`) {
					t.Fatalf("a foreign document failing its schema was accepted (exit %d):\n%s", code, out)
				}
				if !strings.Contains(out, c.member) || !strings.Contains(out, `"code"`) {
					t.Errorf("the refusal does not name %s with a reason code:\n%s", c.member, out)
				}
				if after := listFiles(t, p.dir); !reflect.DeepEqual(before, after) {
					t.Errorf("the project changed:\nbefore %v\nafter  %v", before, after)
				}
				if got, _ := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(k.key))); string(got) != string(bad) {
					t.Errorf("the document changed:\n%s", got)
				}
			})
		}
	}
	// A refused create makes no directory.
	p := &proc{t: t, bin: bin, dir: t.TempDir()}
	p.want(2, "cycle", "create", "Implement OAuth authentication", "--max-iterations", "0")
	if _, err := os.Stat(filepath.Join(p.dir, ".workflow")); !os.IsNotExist(err) {
		t.Errorf("a refused create left .workflow behind: %v", err)
	}
}

// listFiles lists the files and directories under dir with their sizes.
func listFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if strings.HasPrefix(rel, filepath.Join(".agents", "tmp", "phases")) {
			return nil // a phase's output, the caller's, written before it is recorded
		}
		out[rel] = fi.Size()
		if fi.IsDir() {
			out[rel] = -1
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
