package mcp_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
)

var agentTools = []string{
	"cycle_read", "cycle_update", "escalations", "heartbeat", "history", "impl_add_task", "impl_get_task", "impl_list_tasks",
	"impl_summary", "impl_update_status", "lock", "propose", "slice_add", "slice_show", "state_read", "state_update", "status",
	"task_claim", "task_done", "tasks_ready", "unlock",
}

var adminTools = []string{"approve", "force_unlock", "resolve", "rollback"}

func toolNames(t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil || tool.Description == "" {
			t.Errorf("%s: input schema %v, output schema %v, description %q", tool.Name, tool.InputSchema != nil, tool.OutputSchema != nil, tool.Description)
		}
	}
	slices.Sort(names)
	return names
}

func TestToolList(t *testing.T) {
	p := newProject(t)
	if got := toolNames(t, connect(t, p.server(false), nil)); !slices.Equal(got, agentTools) {
		t.Fatalf("agent server tools\n got %v\nwant %v", got, agentTools)
	}
	want := slices.Sorted(slices.Values(append(slices.Clone(agentTools), adminTools...)))
	if got := toolNames(t, connect(t, p.server(true), nil)); !slices.Equal(got, want) {
		t.Fatalf("admin server tools\n got %v\nwant %v", got, want)
	}
}

// revisions are the revisions of every document, to check that a
// rejection changed nothing.
func revisions(t *testing.T, p *project) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, k := range []string{asdd.Key, impl.Key, agentstate.Key, cycle.Key("c1")} {
		doc, err := p.st.Get(context.Background(), k)
		if err != nil && reason.CodeOf(err) != reason.NotFound {
			t.Fatal(err)
		}
		out[k] = doc.Revision
	}
	return out
}

type toolCase struct {
	name  string
	tool  string
	args  map[string]any
	setup func(p *project)
	// want is the reason code the error text starts with ("" success).
	want reason.Code
	// committed: the call is an error that committed (a halt).
	committed bool
	check     func(t *testing.T, p *project, out map[string]any)
}

func claim(slice, task, agent string) asdd.ClaimTask {
	return asdd.ClaimTask{Slice: slice, ID: task, Agent: agent}
}

var toolCases = []toolCase{
	// status
	{name: "whole board", tool: "status", check: func(t *testing.T, p *project, out map[string]any) {
		b := out["board"].(map[string]any)
		if len(b["slices"].([]any)) != 1 || out["revision"].(float64) == 0 {
			t.Fatalf("board %v", out)
		}
	}},
	{name: "one slice", tool: "status", args: map[string]any{"slice": "SLICE-001"}, check: func(t *testing.T, p *project, out map[string]any) {
		sl := out["board"].(map[string]any)["slices"].([]any)
		if len(sl) != 1 || sl[0].(map[string]any)["slice_id"] != "SLICE-001" {
			t.Fatalf("board %v", out)
		}
	}},
	{name: "unknown slice", tool: "status", args: map[string]any{"slice": "NOPE"}, want: reason.NotFound},
	// slice_show
	{name: "show", tool: "slice_show", args: map[string]any{"slice": "SLICE-001"}, check: func(t *testing.T, p *project, out map[string]any) {
		if s := out["slice"].(map[string]any); s["slice_id"] != "SLICE-001" || s["status"] != "DISCOVERY" {
			t.Fatalf("slice %v", s)
		}
	}},
	{name: "show unknown", tool: "slice_show", args: map[string]any{"slice": "NOPE"}, want: reason.NotFound},
	{name: "show without slice", tool: "slice_show", args: map[string]any{}, want: reason.InvalidInput},
	// slice_add
	{name: "add", tool: "slice_add", args: map[string]any{"slice": "SLICE-002", "name": "billing", "type": "retro_spec"}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["outcome"] != "accepted" || out["slice"].(map[string]any)["type"] != "RETRO_SPEC" {
			t.Fatalf("outcome %v", out)
		}
	}},
	{name: "add existing", tool: "slice_add", args: map[string]any{"slice": "SLICE-001", "name": "again"}, want: reason.InvalidInput},
	// propose
	{name: "propose", tool: "propose", args: map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.97, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{}},
		check: func(t *testing.T, p *project, out map[string]any) {
			s := out["slice"].(map[string]any)
			if out["outcome"] != "accepted" || s["status"] != "SPEC" {
				t.Fatalf("outcome %v, slice status %v", out["outcome"], s["status"])
			}
			if h := s["artifact_hashes"].(map[string]any)["specs/SLICE-001/intent.md"]; !strings.HasPrefix(h.(string), "sha256:") {
				t.Fatalf("artifact not hashed by the custodian: %v", s["artifact_hashes"])
			}
		}},
	{name: "propose without uncertainty", tool: "propose", args: map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.9, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{}}, want: reason.MissingUncertaintyFactors},
	{name: "propose below threshold halts", tool: "propose", args: map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.5, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{"unclear scope"}},
		want: reason.BelowThreshold, committed: true, check: func(t *testing.T, p *project, out map[string]any) {
			if out["outcome"] != "halted" || out["slice"].(map[string]any)["status"] != "BLOCKED" {
				t.Fatalf("halt outcome %v", out)
			}
		}},
	{name: "propose to a locked slice", tool: "propose", setup: func(p *project) { p.do(asdd.LockSlice{Slice: "SLICE-001", Holder: "spec"}) },
		args: map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.97, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{}}, want: reason.SliceLocked},
	{name: "propose artifact outside the project", tool: "propose", args: map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.97, "artifacts": map[string]any{"intent": "../outside.md"}, "uncertainty": []any{}}, want: reason.InvalidInput},
	{name: "propose score out of range", tool: "propose", args: map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 1.5, "artifacts": map[string]any{}, "uncertainty": []any{}}, want: reason.InvalidInput},
	{name: "propose score as text", tool: "propose", args: map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": "high", "artifacts": map[string]any{}, "uncertainty": []any{}}, want: reason.InvalidInput},
	{name: "propose unknown slice", tool: "propose", args: map[string]any{"agent": "discovery", "slice": "NOPE", "score": 0.97, "artifacts": map[string]any{}, "uncertainty": []any{}}, want: reason.NotFound},
	{name: "propose phase skip", tool: "propose", args: map[string]any{"agent": "design", "slice": "SLICE-001", "score": 0.97, "artifacts": map[string]any{}, "uncertainty": []any{}}, want: reason.InvalidTransition},
	// heartbeat
	{name: "heartbeat", tool: "heartbeat", args: map[string]any{"agent": "implementation", "slice": "SLICE-001", "wave": 1, "done": 0, "remaining": 3}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["outcome"] != "accepted" {
			t.Fatalf("outcome %v", out)
		}
	}},
	{name: "heartbeat unknown agent", tool: "heartbeat", args: map[string]any{"agent": "ghost"}, want: reason.InvalidInput},
	{name: "heartbeat unknown slice", tool: "heartbeat", args: map[string]any{"agent": "spec", "slice": "NOPE"}, want: reason.NotFound},
	// lock, unlock
	{name: "lock", tool: "lock", args: map[string]any{"slice": "SLICE-001", "holder": "spec", "ttl": "5m"}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["slice"].(map[string]any)["lock"].(map[string]any)["holder"] != "spec" {
			t.Fatalf("lock %v", out["slice"])
		}
	}},
	{name: "lock held by another", tool: "lock", setup: func(p *project) { p.do(asdd.LockSlice{Slice: "SLICE-001", Holder: "design"}) }, args: map[string]any{"slice": "SLICE-001", "holder": "spec"}, want: reason.SliceLocked},
	{name: "lock bad ttl", tool: "lock", args: map[string]any{"slice": "SLICE-001", "holder": "spec", "ttl": "soon"}, want: reason.InvalidInput},
	{name: "unlock", tool: "unlock", setup: func(p *project) { p.do(asdd.LockSlice{Slice: "SLICE-001", Holder: "spec"}) }, args: map[string]any{"slice": "SLICE-001", "holder": "spec"}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["slice"].(map[string]any)["lock"] != nil {
			t.Fatalf("still locked: %v", out["slice"])
		}
	}},
	{name: "unlock by another", tool: "unlock", setup: func(p *project) { p.do(asdd.LockSlice{Slice: "SLICE-001", Holder: "spec"}) }, args: map[string]any{"slice": "SLICE-001", "holder": "design"}, want: reason.SliceLocked},
	// tasks
	{name: "ready", tool: "tasks_ready", args: map[string]any{"slice": "SLICE-001"}, setup: func(p *project) { p.do(claim("SLICE-001", "t2", "impl-9")) }, check: func(t *testing.T, p *project, out map[string]any) {
		ts := out["tasks"].([]any)
		if len(ts) != 1 || ts[0].(map[string]any)["id"] != "t1" {
			t.Fatalf("ready %v (t2 is claimed, t3 waits for wave 1)", ts)
		}
	}},
	{name: "ready unknown slice", tool: "tasks_ready", args: map[string]any{"slice": "NOPE"}, want: reason.NotFound},
	{name: "claim", tool: "task_claim", args: map[string]any{"slice": "SLICE-001", "task": "t1", "agent": "impl-1"}, check: func(t *testing.T, p *project, out map[string]any) {
		tk := out["slice"].(map[string]any)["tasks"].([]any)[0].(map[string]any)
		if tk["status"] != "claimed" || tk["agent"] != "impl-1" {
			t.Fatalf("task %v", tk)
		}
	}},
	{name: "claim claimed", tool: "task_claim", setup: func(p *project) { p.do(claim("SLICE-001", "t1", "impl-2")) }, args: map[string]any{"slice": "SLICE-001", "task": "t1", "agent": "impl-1"}, want: reason.Conflict},
	{name: "claim next wave", tool: "task_claim", args: map[string]any{"slice": "SLICE-001", "task": "t3", "agent": "impl-1"}, want: reason.InvalidTransition},
	{name: "claim unknown task", tool: "task_claim", args: map[string]any{"slice": "SLICE-001", "task": "t9", "agent": "impl-1"}, want: reason.NotFound},
	{name: "claim without agent", tool: "task_claim", args: map[string]any{"slice": "SLICE-001", "task": "t1"}, want: reason.InvalidInput},
	{name: "done", tool: "task_done", setup: func(p *project) { p.do(claim("SLICE-001", "t1", "impl-1")) }, args: map[string]any{"slice": "SLICE-001", "task": "t1", "agent": "impl-1"}, check: func(t *testing.T, p *project, out map[string]any) {
		if tk := out["slice"].(map[string]any)["tasks"].([]any)[0].(map[string]any); tk["status"] != "done" {
			t.Fatalf("task %v", tk)
		}
	}},
	{name: "done by another than the claimer", tool: "task_done", setup: func(p *project) { p.do(claim("SLICE-001", "t1", "impl-1")) }, args: map[string]any{"slice": "SLICE-001", "task": "t1", "agent": "impl-2"}, want: reason.Conflict},
	{name: "done out of wave", tool: "task_done", args: map[string]any{"slice": "SLICE-001", "task": "t3"}, want: reason.InvalidTransition},
	// escalations
	{name: "escalations", tool: "escalations", setup: func(p *project) {
		p.svc.ASDD(context.Background(), asdd.Proposal{Agent: "discovery", Slice: "SLICE-001", Score: 0.5, Uncertainty: []string{"u"}, Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/SLICE-001/intent.md"}}})
	}, check: func(t *testing.T, p *project, out map[string]any) {
		es := out["escalations"].([]any)
		if len(es) != 1 || es[0].(map[string]any)["slice"] != "SLICE-001" {
			t.Fatalf("escalations %v", es)
		}
	}},
	{name: "escalations unknown slice", tool: "escalations", args: map[string]any{"slice": "NOPE"}, want: reason.NotFound},
	// impl
	{name: "impl add", tool: "impl_add_task", args: map[string]any{"task_id": "2", "phase": 1, "description": "api", "depends_on": []any{1}, "bounded_contexts": []any{"auth"}}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["message"] != "Added task 2 to phase 1" {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "impl add existing", tool: "impl_add_task", args: map[string]any{"task_id": "1", "phase": 1, "description": "again"}, want: reason.InvalidInput},
	{name: "impl add phase as text", tool: "impl_add_task", args: map[string]any{"task_id": "2", "phase": "one", "description": "api"}, want: reason.InvalidInput},
	{name: "impl update", tool: "impl_update_status", args: map[string]any{"task_id": "1", "status": "in_progress", "branch": "impl/1"}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["message"] != "Task 1 status updated to in_progress" {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "impl update bad status", tool: "impl_update_status", args: map[string]any{"task_id": "1", "status": "finished"}, want: reason.InvalidInput},
	{name: "impl update unknown task", tool: "impl_update_status", args: map[string]any{"task_id": "9", "status": "passed"}, want: reason.NotFound},
	{name: "impl get", tool: "impl_get_task", args: map[string]any{"task_id": "1"}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["task"].(map[string]any)["description"] != "schema" {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "impl get unknown", tool: "impl_get_task", args: map[string]any{"task_id": "9"}, want: reason.NotFound},
	{name: "impl list", tool: "impl_list_tasks", args: map[string]any{"status": "pending"}, check: func(t *testing.T, p *project, out map[string]any) {
		if len(out["tasks"].([]any)) != 1 {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "impl list bad status", tool: "impl_list_tasks", args: map[string]any{"status": "later"}, want: reason.InvalidInput},
	{name: "impl summary", tool: "impl_summary", check: func(t *testing.T, p *project, out map[string]any) {
		if out["plan_title"] != "Auth" || out["total_tasks"].(float64) != 1 || out["pending"].(float64) != 1 {
			t.Fatalf("out %v", out)
		}
	}},
	// state
	{name: "state read", tool: "state_read", check: func(t *testing.T, p *project, out map[string]any) {
		if out["state"] == nil {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "state update", tool: "state_update", args: map[string]any{"patch": map[string]any{"notes": map[string]any{"x": 1}}}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["state"].(map[string]any)["notes"].(map[string]any)["x"].(float64) != 1 {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "state update not an object", tool: "state_update", args: map[string]any{"patch": []any{1}}, want: reason.InvalidInput},
	// cycle
	{name: "cycle read", tool: "cycle_read", args: map[string]any{"cycle_id": "c1"}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["cycle_id"] != "c1" || out["revision"].(float64) != 1 {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "cycle read unknown", tool: "cycle_read", args: map[string]any{"cycle_id": "c9"}, want: reason.NotFound},
	{name: "cycle read bad id", tool: "cycle_read", args: map[string]any{"cycle_id": "../x"}, want: reason.InvalidInput},
	{name: "cycle update", tool: "cycle_update", args: map[string]any{"cycle_id": "c1", "op": "iterate", "args": map[string]any{"extension": "add 2FA"}, "if_revision": 1}, check: func(t *testing.T, p *project, out map[string]any) {
		if out["revision"].(float64) != 2 {
			t.Fatalf("out %v", out)
		}
	}},
	{name: "cycle update stale revision", tool: "cycle_update", args: map[string]any{"cycle_id": "c1", "op": "iterate", "args": map[string]any{"extension": "add 2FA"}, "if_revision": 7}, want: reason.Conflict},
	{name: "cycle update unknown op", tool: "cycle_update", args: map[string]any{"cycle_id": "c1", "op": "explode"}, want: reason.InvalidInput},
	// history
	{name: "history", tool: "history", args: map[string]any{"key": asdd.Key, "limit": 2}, check: func(t *testing.T, p *project, out map[string]any) {
		recs := out["records"].([]any)
		if len(recs) != 2 || recs[1].(map[string]any)["rev"].(float64) != out["revision"].(float64) {
			t.Fatalf("history %v", out)
		}
	}},
	{name: "history of a project file", tool: "history", args: map[string]any{"key": "src/main.go"}, want: reason.InvalidInput},
	{name: "history bad limit", tool: "history", args: map[string]any{"key": asdd.Key, "limit": 5000}, want: reason.InvalidInput},
	{name: "history unknown argument", tool: "history", args: map[string]any{"key": asdd.Key, "limt": 5}, want: reason.InvalidInput},
}

// TestTools calls every tool over an in-memory transport: its success and
// each reason code it can return; a rejection changes no document.
func TestTools(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range toolCases {
		seen[tc.tool] = true
		t.Run(tc.tool+"/"+tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProject(t)
			p.seed()
			if tc.setup != nil {
				tc.setup(p)
			}
			cs := connect(t, p.server(false), nil)
			before := revisions(t, p)
			args := tc.args
			if args == nil {
				args = map[string]any{}
			}
			res := call(t, cs, tc.tool, args)
			if got := errorCode(res); got != tc.want {
				t.Fatalf("got %q (%s), want %q", got, text(res), tc.want)
			}
			after := revisions(t, p)
			switch {
			case tc.want != "" && !tc.committed:
				if !maps_equal(before, after) {
					t.Fatalf("a rejection changed documents: %v -> %v", before, after)
				}
				if res.StructuredContent != nil {
					t.Fatalf("a rejection has structured content: %v", res.StructuredContent)
				}
				return
			case tc.want == "" && res.StructuredContent == nil:
				t.Fatalf("no structured content: %s", text(res))
			}
			if tc.check != nil {
				tc.check(t, p, structured(t, res))
			}
		})
	}
	for _, name := range agentTools {
		if !seen[name] {
			t.Errorf("tool %s has no case", name)
		}
	}
}

func maps_equal(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestNoManifest: the ASDD tools in a project without a manifest.
func TestNoManifest(t *testing.T) {
	p := newProject(t)
	cs := connect(t, p.server(false), nil)
	for _, tool := range []string{"status", "slice_add", "tasks_ready", "escalations", "impl_summary", "state_read"} {
		args := map[string]any{}
		switch tool {
		case "slice_add":
			args = map[string]any{"slice": "SLICE-001", "name": "x"}
		case "tasks_ready":
			args = map[string]any{"slice": "SLICE-001"}
		}
		res := call(t, cs, tool, args)
		if errorCode(res) != reason.NotFound {
			t.Errorf("%s without documents: %s", tool, text(res))
		}
	}
}

// TestAdminTools: the human decisions, on a server started with the
// admin token.
func TestAdminTools(t *testing.T) {
	p := newProject(t)
	p.seed()
	cs := connect(t, p.server(true), nil)
	halt := call(t, cs, "propose", map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.5, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{"scope"}})
	if errorCode(halt) != reason.BelowThreshold {
		t.Fatalf("halt: %s", text(halt))
	}
	if res := call(t, cs, "resolve", map[string]any{"slice": "SLICE-001", "role": "TL", "rationale": "scope clarified"}); res.IsError {
		t.Fatalf("resolve: %s", text(res))
	}
	if res := call(t, cs, "resolve", map[string]any{"slice": "SLICE-001", "role": "TL", "rationale": "again"}); errorCode(res) != reason.InvalidTransition {
		t.Fatalf("resolve of a slice that is not halted: %s", text(res))
	}
	p.do(asdd.LockSlice{Slice: "SLICE-001", Holder: "spec"})
	if res := call(t, cs, "force_unlock", map[string]any{"slice": "SLICE-001", "role": "TL"}); res.IsError {
		t.Fatalf("force_unlock: %s", text(res))
	}
	if res := call(t, cs, "approve", map[string]any{"role": "TL", "rationale": "x"}); errorCode(res) != reason.InvalidInput {
		t.Fatalf("approve without slice: %s", text(res))
	}
	rev := revisions(t, p)[asdd.Key]
	res := call(t, cs, "rollback", map[string]any{"key": asdd.Key, "revision": 2, "reason": "back to the plan"})
	if res.IsError {
		t.Fatalf("rollback: %s", text(res))
	}
	if out := structured(t, res); out["revision"].(float64) != float64(rev+1) || out["changed"] != true {
		t.Fatalf("rollback %v", out)
	}
	if res := call(t, cs, "rollback", map[string]any{"key": "src/x.go", "revision": 1, "reason": "x"}); errorCode(res) != reason.InvalidInput {
		t.Fatalf("rollback of a project file: %s", text(res))
	}
	// The agents' server does not list them, and a call is UNAUTHORIZED.
	agent := connect(t, p.server(false), nil)
	if res := call(t, agent, "resolve", map[string]any{"slice": "SLICE-001", "role": "TL", "rationale": "x"}); errorCode(res) != reason.Unauthorized {
		t.Fatalf("resolve on the agents' server: %s", text(res))
	}
}

// TestBadInput: arguments the schema refuses name the field; oversized
// arguments are refused like API bodies; unknown tools and resources are
// the protocol's errors; a document outside the managed ones is
// INVALID_INPUT.
func TestBadInput(t *testing.T) {
	p := newProject(t)
	p.seed()
	cs := connect(t, p.server(false), nil)
	ctx := context.Background()
	res := call(t, cs, "slice_add", map[string]any{"slice": "SLICE-002"})
	if errorCode(res) != reason.InvalidInput || !strings.Contains(text(res), "name") {
		t.Fatalf("missing field: %s", text(res))
	}
	res = call(t, cs, "heartbeat", map[string]any{"agent": "spec", "wave": "two"})
	if errorCode(res) != reason.InvalidInput || !strings.Contains(text(res), "wave") {
		t.Fatalf("wrong type: %s", text(res))
	}
	big := strings.Repeat("x", 2<<20)
	res = call(t, cs, "slice_add", map[string]any{"slice": "SLICE-002", "name": big})
	if errorCode(res) != reason.InvalidInput || !strings.Contains(text(res), "limit") {
		t.Fatalf("oversized: %.200s", text(res))
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "drop_tables", Arguments: map[string]any{}}); err == nil {
		t.Fatal("unknown tool: no protocol error")
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "custodian://doc/src/main.go"}); err == nil || !strings.Contains(err.Error(), "INVALID_INPUT") {
		t.Fatalf("a project file as a resource: %v", err)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "file:///etc/passwd"}); err == nil {
		t.Fatal("unknown resource: no protocol error")
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "custodian://doc/" + cycle.Key("c9")}); err == nil {
		t.Fatal("a cycle that does not exist: no protocol error")
	}
}

// TestResources lists and reads the managed documents: a read returns the
// stored bytes of the latest revision.
func TestResources(t *testing.T) {
	p := newProject(t)
	p.seed()
	cs := connect(t, p.server(false), nil)
	ctx := context.Background()
	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	want := []string{"custodian://doc/" + agentstate.Key, "custodian://doc/" + asdd.Key, "custodian://doc/" + impl.Key, "custodian://doc/" + cycle.Key("c1")}
	slices.Sort(uris)
	slices.Sort(want)
	if !slices.Equal(uris, want) {
		t.Fatalf("resources %v, want %v", uris, want)
	}
	for _, key := range []string{asdd.Key, impl.Key, agentstate.Key, cycle.Key("c1")} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "custodian://doc/" + key})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Contents[0].Text; !bytes.Equal([]byte(got), docBytes(t, p.st, key)) {
			t.Fatalf("%s: read %.100s…, stored %.100s…", key, got, docBytes(t, p.st, key))
		}
	}
	// every read is the latest revision: no session cache
	p.do(asdd.AddSlice{ID: "SLICE-009", Name: "late", Type: asdd.TypeFeature})
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "custodian://doc/" + asdd.Key})
	if err != nil || !strings.Contains(res.Contents[0].Text, "SLICE-009") {
		t.Fatalf("read after a commit: %v", err)
	}
	pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "custodian-protocol"})
	if err != nil || !strings.Contains(pr.Messages[0].Content.(*sdk.TextContent).Text, "task_claim") {
		t.Fatalf("prompt: %v", err)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "never by editing") {
		t.Fatalf("instructions %q", cs.InitializeResult().Instructions)
	}
}
