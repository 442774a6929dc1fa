package wire

import (
	"encoding/json"
	"reflect"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
)

// ImplRequest is the body of POST /v1/impl: one change of the task
// manifest, with task-manifest.sh's arguments (seed 001). Op is "init",
// "add-task" or "update-status"; the arguments are checked by the
// custodian, as the script checks them.
type ImplRequest struct {
	Op              string `json:"op"`
	PlanPath        string `json:"plan_path,omitempty"`
	PlanNumber      string `json:"plan_number,omitempty"`
	PlanTitle       string `json:"plan_title,omitempty"`
	Force           bool   `json:"force,omitempty"`
	TaskID          string `json:"task_id,omitempty"`
	Phase           string `json:"phase,omitempty"`
	Description     string `json:"description,omitempty"`
	DependsOn       string `json:"depends_on,omitempty"`
	BoundedContexts string `json:"bounded_contexts,omitempty"`
	Status          string `json:"status,omitempty"`
	Branch          string `json:"branch,omitempty"`
	CheckResults    string `json:"check_results,omitempty"`
	Error           string `json:"error,omitempty"`
	Actor           string `json:"actor,omitempty"`
}

// ImplRequestOf is the request of parsed task-manifest.sh arguments.
func ImplRequestOf(a impl.Args, actor string) ImplRequest {
	return ImplRequest{Op: string(a.Op), PlanPath: a.PlanPath, PlanNumber: a.PlanNumber, PlanTitle: a.PlanTitle, Force: a.Force,
		TaskID: a.TaskID, Phase: a.Phase, Description: a.Description, DependsOn: a.DependsOn, BoundedContexts: a.BoundedContexts,
		Status: a.Status, Branch: a.Branch, CheckResults: a.CheckResults, Error: a.Error, Actor: actor}
}

// ImplResponse is the result of an ImplRequest.
type ImplResponse struct {
	Revision   uint64           `json:"revision"`
	Message    string           `json:"message"`
	ID         string           `json:"id,omitempty"`
	Phase      int              `json:"phase,omitempty"`
	Transition *impl.Transition `json:"transition,omitempty"`
}

// StateRequest is the body of POST /v1/state: one change of the
// state-manager's state (seed 002). Op is "init", "update",
// "record-output", "record-failure" or "compact".
type StateRequest struct {
	Op    string `json:"op"`
	Task  string `json:"task,omitempty"`  // init
	Force bool   `json:"force,omitempty"` // init
	// Patch is the object deep-merged by update.
	Patch json.RawMessage `json:"patch,omitempty"`
	// Phase, Ext and Content: record-output writes Content to the phase's
	// output file; Phase, Error and Context: record-failure.
	Phase   string          `json:"phase,omitempty"`
	Ext     string          `json:"ext,omitempty"`
	Content []byte          `json:"content,omitempty"`
	Error   string          `json:"error,omitempty"`
	Context json.RawMessage `json:"context,omitempty"`
	Summary string          `json:"summary,omitempty"` // compact
	Actor   string          `json:"actor,omitempty"`
}

// StateResponse is the result of a StateRequest: the state committed.
type StateResponse struct {
	Revision uint64            `json:"revision"`
	Summary  string            `json:"summary"`
	State    agentstate.Object `json:"state"`
	// Wrote is the file record-output wrote, relative to the root.
	Wrote string `json:"wrote,omitempty"`
}

// CycleRequest is the body of POST /v1/cycle: one operation on a dev
// cycle (seed 003). Op names the operation (see CycleOps); Args holds its
// fields; IfRevision, when set, makes it a compare-and-swap against the
// cycle's revision.
type CycleRequest struct {
	ID         string          `json:"id"`
	Op         string          `json:"op"`
	Args       json.RawMessage `json:"args,omitempty"`
	IfRevision *uint64         `json:"if_revision,omitempty"`
	Actor      string          `json:"actor,omitempty"`
}

// CycleCreate is the Args of the "create" operation.
type CycleCreate struct {
	Task        string `json:"task"`
	Description string `json:"description,omitempty"`
	// MaxIterations: nil for cycle.DefaultMaxIterations.
	MaxIterations *int `json:"max_iterations,omitempty"`
}

// CycleResponse is the result of a CycleRequest.
type CycleResponse struct {
	CycleID  string      `json:"cycle_id"`
	Revision uint64      `json:"revision"`
	Event    string      `json:"event"`
	Summary  string      `json:"summary"`
	Cycle    cycle.State `json:"cycle"`
	Synced   []string    `json:"synced"`
	// MovedAside is where "rebuild" kept a damaged document it could not
	// recover (relative to the root), if it had to.
	MovedAside string `json:"moved_aside,omitempty"`
	// Log and Appended are what "append" did: the log's project-relative
	// path and how many records it appended.
	Log      string `json:"log,omitempty"`
	Appended int    `json:"appended,omitempty"`
}

// CycleAppend is the Args of the "append" operation: records appended to
// one of the cycle's NDJSON coordination logs (a path inside its .progress
// directory), each one JSON value, in one durable write.
type CycleAppend struct {
	Log     string            `json:"log"`
	Records []json.RawMessage `json:"records"`
}

// The operations of a CycleRequest that are not a cycle.Op: "create" makes
// a cycle, "put" replaces it whole, "rebuild" restores a lost or damaged
// one from its progress files (a human decision), "sync" rewrites its
// progress files from the committed state, "append" appends records to one
// of its coordination logs.
var cycleWholeOps = []string{"create", "put", "rebuild", "sync", "append"}

// CycleOps lists every operation a CycleRequest may name, sorted.
func CycleOps() []string {
	out := append(sortedKeys(cycleOps), cycleWholeOps...)
	sortStrings(out)
	return out
}

// cycleOps maps operation names to their Args' types and decoders.
var cycleOps = map[string]cycleOpEntry{
	"iterate":            cycleOp[cycle.Iterate](),
	"complete":           cycleOp[cycle.Complete](),
	"agent":              cycleOp[cycle.SetAgent](),
	"change":             cycleOp[cycle.AppendChange](),
	"test-results":       cycleOp[cycle.RecordTests](),
	"requirements":       cycleOp[cycle.SetRequirements](),
	"exploration":        cycleOp[cycle.SetExploration](),
	"plan":               cycleOp[cycle.SetPlan](),
	"task":               cycleOp[cycle.SetTask](),
	"feedback":           cycleOp[cycle.AddFeedback](),
	"propose-decision":   cycleOp[cycle.ProposeDecision](),
	"make-decision":      cycleOp[cycle.MakeDecision](),
	"implement-decision": cycleOp[cycle.ImplementDecision](),
	"report-blocker":     cycleOp[cycle.ReportBlocker](),
	"resolve-blocker":    cycleOp[cycle.ResolveBlocker](),
	"pause":              cycleOp[cycle.Pause](),
	"resume":             cycleOp[cycle.Resume](),
	"stop":               cycleOp[cycle.Stop](),
}

type cycleOpEntry struct {
	typ    reflect.Type
	decode func([]byte) (cycle.Op, error)
}

func cycleOp[T cycle.Op]() cycleOpEntry {
	return cycleOpEntry{typ: reflect.TypeFor[T](), decode: decodeCycle[T]}
}

// CycleOpType is the Go type of the Args of cycle operation name (one of
// the cycle.Op types, CycleCreate or CycleAppend), for documentation
// generated from it. It reports false for "put" (its Args are the whole
// cycle document), "sync" and "rebuild" (no Args) and unknown names.
func CycleOpType(name string) (reflect.Type, bool) {
	switch name {
	case "create":
		return reflect.TypeFor[CycleCreate](), true
	case "append":
		return reflect.TypeFor[CycleAppend](), true
	}
	e, ok := cycleOps[name]
	return e.typ, ok
}

func decodeCycle[T cycle.Op](args []byte) (cycle.Op, error) {
	var v T
	if len(args) == 0 {
		args = []byte("{}")
	}
	if err := decodeOp(args, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeCycleOp decodes the operation a CycleRequest names (not "create",
// "put" or "rebuild": they make or replace the whole cycle).
func DecodeCycleOp(name string, args []byte) (cycle.Op, error) {
	e, ok := cycleOps[name]
	if !ok {
		return nil, reason.New(reason.InvalidInput, "no cycle operation %q (operations: %s)", name, joinNames(CycleOps()))
	}
	return e.decode(args)
}

// CycleRequestOf is the request of a cycle operation.
func CycleRequestOf(id string, op cycle.Op, ifRev *uint64, actor string) (CycleRequest, error) {
	name := CycleOpName(op)
	if name == "" {
		return CycleRequest{}, reason.New(reason.InvalidInput, "no wire name for cycle operation %T", op)
	}
	args, err := json.Marshal(op)
	if err != nil {
		return CycleRequest{}, err
	}
	return CycleRequest{ID: id, Op: name, Args: args, IfRevision: ifRev, Actor: actor}, nil
}

// CycleOpName is the wire name of a cycle operation.
func CycleOpName(op cycle.Op) string {
	switch op.(type) {
	case cycle.Iterate:
		return "iterate"
	case cycle.Complete:
		return "complete"
	case cycle.SetAgent:
		return "agent"
	case cycle.AppendChange:
		return "change"
	case cycle.RecordTests:
		return "test-results"
	case cycle.SetRequirements:
		return "requirements"
	case cycle.SetExploration:
		return "exploration"
	case cycle.SetPlan:
		return "plan"
	case cycle.SetTask:
		return "task"
	case cycle.AddFeedback:
		return "feedback"
	case cycle.ProposeDecision:
		return "propose-decision"
	case cycle.MakeDecision:
		return "make-decision"
	case cycle.ImplementDecision:
		return "implement-decision"
	case cycle.ReportBlocker:
		return "report-blocker"
	case cycle.ResolveBlocker:
		return "resolve-blocker"
	case cycle.Pause:
		return "pause"
	case cycle.Resume:
		return "resume"
	case cycle.Stop:
		return "stop"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}

// JQRequest is the body of POST /v1/jq: run a jq program on the document
// Key inside a commit (the state-manager plugins' state_update).
type JQRequest struct {
	Key     string  `json:"key"`
	Program string  `json:"program"`
	Args    []JQArg `json:"args,omitempty"`
	// Touch, when set, names a top-level field set to the commit time.
	Touch string `json:"touch,omitempty"`
	// IfRevision makes it a compare-and-swap (0: the document is absent).
	IfRevision *uint64 `json:"if_revision,omitempty"`
	Actor      string  `json:"actor,omitempty"`
}

// JQArg is a named value of the program ($Name), as JSON.
type JQArg struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// JQResponse is the committed result of a JQRequest.
type JQResponse struct {
	Key      string          `json:"key"`
	Revision uint64          `json:"revision"`
	Changed  bool            `json:"changed"`
	Value    json.RawMessage `json:"value"`
}
