package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// Tool outputs carry the domain's documents as they encode themselves
// (slices, tasks, boards): their schema is the manifest's, not inferred.

// OpResult is the outcome of an ASDD operation (wire.OpResponse).
type OpResult struct {
	Revision  uint64   `json:"revision" jsonschema:"the manifest's revision after the call"`
	Committed bool     `json:"committed" jsonschema:"whether state changed (a halt is committed too)"`
	Outcome   string   `json:"outcome" jsonschema:"accepted, halted or unchanged"`
	Summary   string   `json:"summary"`
	Events    Array    `json:"events"`
	Verdict   Object   `json:"verdict,omitempty" jsonschema:"why the slice halted, when it did"`
	Slice     Object   `json:"slice,omitempty" jsonschema:"the slice as committed"`
	Warnings  []string `json:"warnings,omitempty"`
	Effects   Array    `json:"effects,omitempty" jsonschema:"files the operation wrote (notices, markers, log rows)"`
}

func opResult(r *wire.OpResponse) *OpResult {
	out := &OpResult{Revision: r.Revision, Committed: r.Committed, Outcome: r.Outcome, Summary: r.Summary, Events: r.Events, Warnings: r.Warnings}
	if r.Verdict != nil {
		out.Verdict = r.Verdict
	}
	if r.Slice != nil {
		out.Slice = r.Slice
	}
	if len(r.Effects) > 0 {
		out.Effects = r.Effects
	}
	return out
}

// halted is a committed halt: the tool reports an error (isError, text
// starting with the verdict's code) and the outcome as structured content.
type halted struct{ verdict *reason.Error }

func (h *halted) Error() string {
	return h.verdict.Error() + " (the halt is committed: the slice is BLOCKED until a human resolves it)"
}

// asdd runs op and turns a committed halt into a tool error.
func asddOp(ctx context.Context, svc app.Service, op asdd.Op) (*OpResult, error) {
	r, err := svc.ASDD(ctx, op)
	if err != nil {
		return nil, err
	}
	out := opResult(r)
	if r.Verdict != nil {
		return out, &halted{r.Verdict}
	}
	return out, nil
}

// addTool registers a typed tool (the go-sdk's AddTool) whose handler
// gets the application layer of this call. Its input and output schemas
// are inferred from In and Out (schemaFor); the SDK checks the arguments
// against the input schema (no unknown member: additionalProperties is
// false) before the handler runs, and the middleware gives its refusal
// the reason code INVALID_INPUT. A committed halt is a tool error with
// the outcome as structured content.
func addTool[In, Out any](s *Server, t *sdk.Tool, h func(ctx context.Context, svc app.Service, in In) (Out, error)) {
	t.InputSchema, t.OutputSchema = schemaFor[In](), schemaFor[Out]()
	sdk.AddTool(s.sdk, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		if ran, ok := ctx.Value(handlerRan{}).(*bool); ok {
			*ran = true
		}
		var zero Out
		ctx, svc, err := s.service(ctx)
		if err != nil {
			return nil, zero, err
		}
		o, err := h(ctx, svc, in)
		var hl *halted
		if errors.As(err, &hl) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: hl.Error()}}}, o, nil
		}
		return nil, o, err
	})
}

// handlerRan marks, in a tool call's context, whether the tool's handler
// ran: when it did not, the SDK refused the arguments.
type handlerRan struct{}

// toolError is a tool's error result: its text starts with the reason
// code.
func toolError(err error) *sdk.CallToolResult {
	res := &sdk.CallToolResult{}
	res.SetError(err)
	return res
}

// Object and Array hold a domain value (a slice, a task, a board, a
// list of events) as it encodes itself; their schemas say only its JSON
// type, since the documents' own schema (custodian schema) is the contract.
type (
	Object interface{}
	Array  interface{}
)

var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[Object](): {Type: "object", AdditionalProperties: &jsonschema.Schema{}},
	reflect.TypeFor[Array]():  {Type: "array"},
	reflect.TypeFor[any]():    {Description: "any JSON value"},
}

// schemaFor infers T's schema (through a pointer), with a single type per
// property (no ["null", T] unions: a client that maps schemas onto a
// single-type dialect would drop them).
func schemaFor[T any]() *jsonschema.Schema {
	rt := reflect.TypeFor[T]()
	for rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	sch, err := jsonschema.ForType(rt, &jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %v: %v", rt, err))
	}
	singleTypes(sch)
	return sch
}

func singleTypes(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		singleTypes(p)
	}
	singleTypes(s.Items)
	singleTypes(s.AdditionalProperties)
}

func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
}

func change(title string, idempotent bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, IdempotentHint: idempotent, DestructiveHint: new(false), OpenWorldHint: new(false)}
}

// ---- ASDD ----------------------------------------------------------------

// StatusIn are the arguments of status.
type StatusIn struct {
	Slice string `json:"slice,omitempty" jsonschema:"only this slice (its row, its open escalations)"`
}

// BoardResult is the status board (custodian status --json).
type BoardResult struct {
	Revision uint64 `json:"revision"`
	Board    Object `json:"board" jsonschema:"slices by phase with CCS and weak link, blockers, locks, open escalations, heartbeats"`
}

// SliceIn names a slice.
type SliceIn struct {
	Slice string `json:"slice" jsonschema:"the slice id, e.g. SLICE-001"`
}

// SliceResult is one slice (custodian slice show --json).
type SliceResult struct {
	Revision uint64 `json:"revision"`
	Slice    Object `json:"slice"`
}

// SliceAddIn are the arguments of slice_add.
type SliceAddIn struct {
	Slice string `json:"slice" jsonschema:"the new slice's id, e.g. SLICE-004"`
	Name  string `json:"name" jsonschema:"the slice's name"`
	Type  string `json:"type,omitempty" jsonschema:"FEATURE (default; starts in DISCOVERY) or RETRO_SPEC (starts in BEHAVIOR_CAPTURE)"`
}

// ProposeIn are the arguments of propose.
type ProposeIn struct {
	Agent        string            `json:"agent" jsonschema:"the proposing agent: discovery, spec, validation, design, implementation, …"`
	Slice        string            `json:"slice" jsonschema:"the slice id"`
	Score        float64           `json:"score" jsonschema:"the agent's confidence in [0, 1]"`
	Artifacts    map[string]string `json:"artifacts" jsonschema:"the artifacts produced, NAME -> PATH relative to the project root; the custodian hashes them"`
	Uncertainty  []string          `json:"uncertainty" jsonschema:"uncertainty factors (at least one below 0.95)"`
	Trace        string            `json:"trace,omitempty" jsonschema:"the reasoning trace file, relative to the project root"`
	To           string            `json:"to,omitempty" jsonschema:"the status asked for (PARTIAL from validation, DONE for a quick fix); default: the next phase"`
	BaseRevision uint64            `json:"base_revision,omitempty" jsonschema:"the manifest revision you read before you worked: concurrent changes since are merged or escalated"`
}

// HeartbeatIn are the arguments of heartbeat.
type HeartbeatIn struct {
	Agent     string `json:"agent" jsonschema:"the agent"`
	Status    string `json:"status,omitempty" jsonschema:"ACTIVE (default), IDLE or PAUSED"`
	Slice     string `json:"slice,omitempty" jsonschema:"the slice it works on"`
	Wave      *int   `json:"wave,omitempty" jsonschema:"the current wave"`
	Done      *int   `json:"done,omitempty" jsonschema:"tasks completed"`
	Remaining *int   `json:"remaining,omitempty" jsonschema:"tasks remaining"`
}

// LockIn are the arguments of lock.
type LockIn struct {
	Slice  string `json:"slice" jsonschema:"the slice id"`
	Holder string `json:"holder" jsonschema:"who takes the lease (an agent)"`
	TTL    string `json:"ttl,omitempty" jsonschema:"lease duration, e.g. 10m (default: lock.default_ttl of the config)"`
	Reason string `json:"reason,omitempty" jsonschema:"why"`
}

// UnlockIn are the arguments of unlock.
type UnlockIn struct {
	Slice  string `json:"slice" jsonschema:"the slice id"`
	Holder string `json:"holder" jsonschema:"the lease's holder"`
}

// TasksResult lists a slice's ready tasks.
type TasksResult struct {
	Revision uint64 `json:"revision"`
	Slice    string `json:"slice"`
	Tasks    Array  `json:"tasks" jsonschema:"the tasks that may start now (pending, dependencies and earlier waves done, not claimed)"`
}

// TaskIn names a task of a slice and the agent acting on it.
type TaskIn struct {
	Slice string `json:"slice" jsonschema:"the slice id"`
	Task  string `json:"task" jsonschema:"the task id"`
	Agent string `json:"agent" jsonschema:"the agent (claims are per agent name: use a name of your own, e.g. implementation-3)"`
}

// TaskDoneIn are the arguments of task_done.
type TaskDoneIn struct {
	Slice string `json:"slice" jsonschema:"the slice id"`
	Task  string `json:"task" jsonschema:"the task id"`
	Agent string `json:"agent,omitempty" jsonschema:"the agent that did it (its claimer, if it was claimed); default implementation"`
}

// EscalationsIn are the arguments of escalations.
type EscalationsIn struct {
	Slice string `json:"slice,omitempty" jsonschema:"only this slice's"`
	All   bool   `json:"all,omitempty" jsonschema:"include resolved escalations"`
}

// EscalationsResult lists escalation notices.
type EscalationsResult struct {
	Revision    uint64 `json:"revision"`
	Escalations Array  `json:"escalations"`
}

// manifestOf reads the manifest and, when id is not "", finds the slice id
// in it (NOT_FOUND when it has none).
func manifestOf(ctx context.Context, svc app.Service, id string) (*asdd.Manifest, *asdd.Slice, error) {
	m, err := svc.Manifest(ctx)
	if err != nil {
		return nil, nil, err
	}
	if id == "" {
		return m, nil, nil
	}
	sl, err := m.Find(id)
	if err != nil {
		return nil, nil, err
	}
	return m, sl, nil
}

func (s *Server) addASDDTools() {
	addTool(s, &sdk.Tool{Name: "status", Description: "The status board: slices by phase with CCS and weak link, blockers of halted slices, locks, open escalations, agent heartbeats (STALE when silent past the timeout). With slice: that slice only.", Annotations: readOnly("Status board")},
		func(ctx context.Context, svc app.Service, in StatusIn) (*BoardResult, error) {
			m, _, err := manifestOf(ctx, svc, in.Slice)
			if err != nil {
				return nil, err
			}
			cfg, err := s.o.Config()
			if err != nil {
				return nil, err
			}
			b := asdd.NewBoard(m, cfg, s.o.Now())
			if in.Slice != "" {
				b.Slices = slices.DeleteFunc(b.Slices, func(x asdd.BoardSlice) bool { return x.ID != in.Slice })
				b.Escalations = slices.DeleteFunc(b.Escalations, func(e asdd.EscalationView) bool { return e.Slice != in.Slice })
			}
			return &BoardResult{Revision: m.Revision, Board: b}, nil
		})
	addTool(s, &sdk.Tool{Name: "slice_show", Description: "One slice as committed: phase, confidence chain, CCS, block record, lock, tasks, escalations.", Annotations: readOnly("Show a slice")},
		func(ctx context.Context, svc app.Service, in SliceIn) (*SliceResult, error) {
			m, sl, err := manifestOf(ctx, svc, in.Slice)
			if err != nil {
				return nil, err
			}
			return &SliceResult{Revision: m.Revision, Slice: sl}, nil
		})
	addTool(s, &sdk.Tool{Name: "slice_add", Description: "Add a slice (FEATURE starts in DISCOVERY, RETRO_SPEC in BEHAVIOR_CAPTURE).", Annotations: change("Add a slice", false)},
		func(ctx context.Context, svc app.Service, in SliceAddIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.AddSlice{ID: in.Slice, Name: in.Name, Type: in.Type, By: s.o.Actor})
		})
	addTool(s, &sdk.Tool{Name: "propose", Description: "Submit an agent's result for a slice. The custodian checks the lifecycle, the slice's lease, the agent's minimum confidence (raised by dynamic gating), uncertainty factors below 0.95, the CCS floor, the refinement-loop limit and concurrent changes since base_revision; it commits the result, or halts the slice (a tool error starting with the verdict's code; the halt is committed), or rejects it (a tool error starting with the reason code; nothing changed).", Annotations: change("Propose a result", false)},
		func(ctx context.Context, svc app.Service, in ProposeIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.Proposal{Agent: in.Agent, Slice: in.Slice, Score: in.Score, Artifacts: asdd.NamedArtifacts(in.Artifacts),
				Trace: asdd.TraceFile(in.Trace), Uncertainty: in.Uncertainty, To: in.To, BaseRevision: in.BaseRevision})
		})
	addTool(s, &sdk.Tool{Name: "heartbeat", Description: "Record an agent's heartbeat (agent_heartbeats): its status, slice, wave and task counts. An ACTIVE agent silent past its timeout is retried, then escalated.", Annotations: change("Heartbeat", true)},
		func(ctx context.Context, svc app.Service, in HeartbeatIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.Beat{Agent: in.Agent, Status: in.Status, Slice: in.Slice, Wave: in.Wave, Completed: in.Done, Remaining: in.Remaining})
		})
	addTool(s, &sdk.Tool{Name: "lock", Description: "Lease a slice: until the lease expires only its holder may change the slice (others get SLICE_LOCKED).", Annotations: change("Lock a slice", false)},
		func(ctx context.Context, svc app.Service, in LockIn) (*OpResult, error) {
			var ttl time.Duration
			if in.TTL != "" {
				d, err := time.ParseDuration(in.TTL)
				if err != nil || d <= 0 {
					return nil, reason.New(reason.InvalidInput, "ttl %q is not a positive duration (e.g. 10m, 90s)", in.TTL)
				}
				ttl = d
			}
			return asddOp(ctx, svc, asdd.LockSlice{Slice: in.Slice, Holder: in.Holder, TTL: ttl, Reason: in.Reason})
		})
	addTool(s, &sdk.Tool{Name: "unlock", Description: "Release a slice's lease (its holder only).", Annotations: change("Unlock a slice", false)},
		func(ctx context.Context, svc app.Service, in UnlockIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.UnlockSlice{Slice: in.Slice, Holder: in.Holder})
		})
	addTool(s, &sdk.Tool{Name: "tasks_ready", Description: "The tasks of a slice's plan that may start now: pending, not claimed, their dependencies and every earlier wave done.", Annotations: readOnly("Ready tasks")},
		func(ctx context.Context, svc app.Service, in SliceIn) (*TasksResult, error) {
			m, sl, err := manifestOf(ctx, svc, in.Slice)
			if err != nil {
				return nil, err
			}
			list := asdd.Ready(sl)
			if list == nil {
				list = []asdd.Task{}
			}
			return &TasksResult{Revision: m.Revision, Slice: sl.SliceID, Tasks: list}, nil
		})
	addTool(s, &sdk.Tool{Name: "task_claim", Description: "Claim a ready task for an agent, atomically: of any number of concurrent claims of one task exactly one wins; the others get CONFLICT (take another ready task). Only the claimer may complete it.", Annotations: change("Claim a task", false)},
		func(ctx context.Context, svc app.Service, in TaskIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.ClaimTask{Slice: in.Slice, ID: in.Task, Agent: in.Agent})
		})
	addTool(s, &sdk.Tool{Name: "task_done", Description: "Mark a task done (ready, or claimed by this agent).", Annotations: change("Complete a task", false)},
		func(ctx context.Context, svc app.Service, in TaskDoneIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.CompleteTask{Slice: in.Slice, ID: in.Task, Agent: orDefault(in.Agent, "implementation")})
		})
	addTool(s, &sdk.Tool{Name: "escalations", Description: "Escalation notices waiting for humans (open ones; all with all).", Annotations: readOnly("Escalations")},
		func(ctx context.Context, svc app.Service, in EscalationsIn) (*EscalationsResult, error) {
			m, _, err := manifestOf(ctx, svc, in.Slice)
			if err != nil {
				return nil, err
			}
			return &EscalationsResult{Revision: m.Revision, Escalations: m.Escalations(in.Slice, in.All)}, nil
		})
}

// ---- human decisions (admin only) ----------------------------------------

// ResolveIn are the arguments of resolve.
type ResolveIn struct {
	Slice     string `json:"slice" jsonschema:"the halted slice"`
	Role      string `json:"role" jsonschema:"the resolving role (TL, PO, Security)"`
	Rationale string `json:"rationale" jsonschema:"why (logged)"`
	By        string `json:"by,omitempty" jsonschema:"the person"`
	Action    string `json:"action,omitempty" jsonschema:"rerun (default), resume or return"`
	To        string `json:"to,omitempty" jsonschema:"the phase to return to (implies action return)"`
	RootCause string `json:"root_cause,omitempty" jsonschema:"the root cause, for the failure log"`
}

// ApproveIn are the arguments of approve.
type ApproveIn struct {
	Slice     string `json:"slice,omitempty" jsonschema:"the slice (omit with project)"`
	Role      string `json:"role" jsonschema:"the approving role (TL, PO, Security)"`
	Rationale string `json:"rationale" jsonschema:"why (logged)"`
	By        string `json:"by,omitempty" jsonschema:"the person"`
	RootCause string `json:"root_cause,omitempty" jsonschema:"the root cause, for the failure log"`
	Project   bool   `json:"project,omitempty" jsonschema:"clear NEEDS_HUMAN_REVIEW on the project context instead of a slice"`
}

// ForceUnlockIn are the arguments of force_unlock.
type ForceUnlockIn struct {
	Slice string `json:"slice" jsonschema:"the slice id"`
	Role  string `json:"role" jsonschema:"the role breaking the lease"`
}

// RollbackIn are the arguments of rollback.
type RollbackIn struct {
	Key      string `json:"key" jsonschema:"the document, e.g. .asdd/state/manifest.json"`
	Revision uint64 `json:"revision" jsonschema:"the revision whose value to restore"`
	Reason   string `json:"reason" jsonschema:"why (recorded in the journal)"`
}

// RollbackResult is the commit a rollback made.
type RollbackResult struct {
	Key      string `json:"key"`
	Revision uint64 `json:"revision"`
	Restored uint64 `json:"restored"`
	Changed  bool   `json:"changed"`
}

func (s *Server) addAdminTools() {
	addTool(s, &sdk.Tool{Name: "resolve", Description: "A human's decision on a halted slice (the only way out of a halt): rerun, resume, or return to a phase. Call only on a named human's instruction.", Annotations: change("Resolve a halt (human)", false)},
		func(ctx context.Context, svc app.Service, in ResolveIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.Resolve{Slice: in.Slice, Role: in.Role, By: in.By, Rationale: in.Rationale, Action: in.Action, ReturnTo: in.To, RootCause: in.RootCause})
		})
	addTool(s, &sdk.Tool{Name: "approve", Description: "A named role's sign-off: accept a halted slice's output, clear NEEDS_HUMAN_REVIEW (of a slice, or of the project context with project). Call only on a named human's instruction.", Annotations: change("Approve (human)", false)},
		func(ctx context.Context, svc app.Service, in ApproveIn) (*OpResult, error) {
			if in.Project {
				if in.Slice != "" {
					return nil, reason.New(reason.InvalidInput, "approve: give slice or project, not both")
				}
				return asddOp(ctx, svc, asdd.ClearReview{Role: in.Role, By: in.By, Rationale: in.Rationale})
			}
			if in.Slice == "" {
				return nil, reason.New(reason.InvalidInput, "approve: slice is required (or project)")
			}
			return asddOp(ctx, svc, asdd.Approve{Slice: in.Slice, Role: in.Role, By: in.By, Rationale: in.Rationale, RootCause: in.RootCause})
		})
	addTool(s, &sdk.Tool{Name: "force_unlock", Description: "Break someone else's lease on a slice (a human's decision).", Annotations: change("Force an unlock (human)", false)},
		func(ctx context.Context, svc app.Service, in ForceUnlockIn) (*OpResult, error) {
			return asddOp(ctx, svc, asdd.UnlockSlice{Slice: in.Slice, Force: true, Role: in.Role})
		})
	addTool(s, &sdk.Tool{Name: "rollback", Description: "Restore a document's value at a past revision, as a new commit (history is never rewritten). A human's decision.", Annotations: change("Roll back (human)", false)},
		func(ctx context.Context, svc app.Service, in RollbackIn) (*RollbackResult, error) {
			if err := app.DocumentKey(in.Key); err != nil {
				return nil, err
			}
			if strings.TrimSpace(in.Reason) == "" {
				return nil, reason.New(reason.InvalidInput, "a rollback needs a reason")
			}
			res, err := svc.Rollback(ctx, wire.RollbackRequest{Key: in.Key, To: in.Revision, Reason: in.Reason, Actor: s.o.Actor})
			if err != nil {
				return nil, err
			}
			return &RollbackResult{Key: res.Key, Revision: res.Revision, Restored: in.Revision, Changed: res.Changed}, nil
		})
}

// ---- impl ----------------------------------------------------------------

// ImplAddTaskIn are the arguments of impl_add_task (task-manifest.sh
// --add-task).
type ImplAddTaskIn struct {
	TaskID          string   `json:"task_id" jsonschema:"the task id"`
	Phase           int      `json:"phase" jsonschema:"the plan's phase number"`
	Description     string   `json:"description" jsonschema:"what the task is"`
	DependsOn       []int    `json:"depends_on,omitempty" jsonschema:"ids of the tasks it depends on (none by default)"`
	BoundedContexts []string `json:"bounded_contexts,omitempty" jsonschema:"the bounded contexts it touches"`
}

// ImplUpdateStatusIn are the arguments of impl_update_status
// (task-manifest.sh --update-status).
type ImplUpdateStatusIn struct {
	TaskID       string `json:"task_id" jsonschema:"the task id"`
	Status       string `json:"status" jsonschema:"the new status (pending, in_progress, passed, failed, merged, abandoned, …)"`
	Branch       string `json:"branch,omitempty" jsonschema:"the task's branch"`
	CheckResults string `json:"check_results,omitempty" jsonschema:"the checks' results"`
	Error        string `json:"error,omitempty" jsonschema:"the failure's message"`
}

// ImplChangeResult is the result of an impl change (wire.ImplResponse).
type ImplChangeResult struct {
	Revision   uint64 `json:"revision"`
	Message    string `json:"message" jsonschema:"task-manifest.sh's message"`
	ID         string `json:"id,omitempty"`
	Phase      int    `json:"phase,omitempty"`
	Transition Object `json:"transition,omitempty"`
}

// ImplTaskIn names an impl task.
type ImplTaskIn struct {
	TaskID string `json:"task_id" jsonschema:"the task id"`
}

// ImplTaskResult is one impl task (custodian impl --get-task --json).
type ImplTaskResult struct {
	Revision uint64 `json:"revision"`
	Task     Object `json:"task"`
}

// ImplListIn filters impl tasks.
type ImplListIn struct {
	Phase  *int   `json:"phase,omitempty" jsonschema:"only this phase"`
	Status string `json:"status,omitempty" jsonschema:"only this status"`
}

// ImplTasksResult lists impl tasks (custodian impl --list-tasks --json).
type ImplTasksResult struct {
	Revision uint64 `json:"revision"`
	Tasks    Array  `json:"tasks"`
}

// Empty has no arguments.
type Empty struct{}

// implChange makes the impl change req as this server's actor.
func (s *Server) implChange(ctx context.Context, svc app.Service, req wire.ImplRequest) (*ImplChangeResult, error) {
	req.Actor = s.o.Actor
	r, err := svc.Impl(ctx, req)
	if err != nil {
		return nil, err
	}
	out := &ImplChangeResult{Revision: r.Revision, Message: r.Message, ID: r.ID, Phase: r.Phase}
	if r.Transition != nil {
		out.Transition = r.Transition
	}
	return out, nil
}

func (s *Server) addImplTools() {
	addTool(s, &sdk.Tool{Name: "impl_add_task", Description: "Add a task to the implementation plan's task manifest (.impl/manifest.json), with task-manifest.sh --add-task's rules.", Annotations: change("Add a plan task", false)},
		func(ctx context.Context, svc app.Service, in ImplAddTaskIn) (*ImplChangeResult, error) {
			deps := "none"
			if len(in.DependsOn) > 0 {
				ss := make([]string, len(in.DependsOn))
				for i, d := range in.DependsOn {
					ss[i] = strconv.Itoa(d)
				}
				deps = strings.Join(ss, ",")
			}
			return s.implChange(ctx, svc, wire.ImplRequest{Op: string(impl.OpAddTask), TaskID: in.TaskID, Phase: strconv.Itoa(in.Phase), Description: in.Description,
				DependsOn: deps, BoundedContexts: strings.Join(in.BoundedContexts, ",")})
		})
	addTool(s, &sdk.Tool{Name: "impl_update_status", Description: "Change a plan task's status, with task-manifest.sh --update-status's rules (a merged or abandoned task stays so).", Annotations: change("Update a plan task's status", false)},
		func(ctx context.Context, svc app.Service, in ImplUpdateStatusIn) (*ImplChangeResult, error) {
			return s.implChange(ctx, svc, wire.ImplRequest{Op: string(impl.OpUpdateStatus), TaskID: in.TaskID, Status: in.Status, Branch: in.Branch, CheckResults: in.CheckResults, Error: in.Error})
		})
	addTool(s, &sdk.Tool{Name: "impl_get_task", Description: "One task of the plan's task manifest.", Annotations: readOnly("Get a plan task")},
		func(ctx context.Context, svc app.Service, in ImplTaskIn) (*ImplTaskResult, error) {
			m, rev, err := svc.ImplManifest(ctx)
			if err != nil {
				return nil, err
			}
			t, err := m.Task(in.TaskID)
			if err != nil {
				return nil, err
			}
			return &ImplTaskResult{Revision: rev, Task: t}, nil
		})
	addTool(s, &sdk.Tool{Name: "impl_list_tasks", Description: "The plan's tasks, optionally of one phase and/or status, in manifest order.", Annotations: readOnly("List plan tasks")},
		func(ctx context.Context, svc app.Service, in ImplListIn) (*ImplTasksResult, error) {
			m, rev, err := svc.ImplManifest(ctx)
			if err != nil {
				return nil, err
			}
			var f impl.Filter
			f.Phase = in.Phase
			if in.Status != "" {
				st, err := impl.ParseStatus(in.Status)
				if err != nil {
					return nil, err
				}
				f.Status = st
			}
			return &ImplTasksResult{Revision: rev, Tasks: m.List(f)}, nil
		})
	addTool(s, &sdk.Tool{Name: "impl_summary", Description: "The plan's title and number, its phase and task counts, and how many tasks have each status (task-manifest.sh --summary).", Annotations: readOnly("Plan summary")},
		func(ctx context.Context, svc app.Service, in Empty) (map[string]any, error) {
			m, rev, err := svc.ImplManifest(ctx)
			if err != nil {
				return nil, err
			}
			sum := m.Summary()
			out := map[string]any{"revision": rev, "plan_title": sum.PlanTitle, "plan_number": sum.PlanNumber, "total_phases": sum.TotalPhases, "total_tasks": sum.TotalTasks}
			for _, c := range sum.Counts {
				out[string(c.Status)] = c.N
			}
			return out, nil
		})
}

// ---- state, cycle, history -------------------------------------------------

// StateResult is the state-manager's state.
type StateResult struct {
	Revision uint64 `json:"revision"`
	Summary  string `json:"summary,omitempty"`
	State    Object `json:"state"`
}

// StateUpdateIn are the arguments of state_update.
type StateUpdateIn struct {
	Patch map[string]any `json:"patch" jsonschema:"the object deep-merged into the state (null deletes a member)"`
}

// CycleIn names a dev cycle.
type CycleIn struct {
	CycleID string `json:"cycle_id" jsonschema:"the cycle's id"`
}

// CycleResult is a dev cycle's state.
type CycleResult struct {
	CycleID  string   `json:"cycle_id"`
	Revision uint64   `json:"revision"`
	Event    string   `json:"event,omitempty"`
	Summary  string   `json:"summary,omitempty"`
	Cycle    Object   `json:"cycle"`
	Synced   []string `json:"synced,omitempty"`
}

// CycleUpdateIn are the arguments of cycle_update.
type CycleUpdateIn struct {
	CycleID    string         `json:"cycle_id" jsonschema:"the cycle's id"`
	Op         string         `json:"op" jsonschema:"the operation: create, put (args: the whole document; with if_revision), iterate, complete, agent, change, test-results, requirements, exploration, plan, task, feedback, propose-decision, make-decision, implement-decision, report-blocker, resolve-blocker, pause, resume, stop, sync (rewrite its progress files), append (args: log, a path inside its .progress directory ending in .ndjson, and records, JSON values appended as whole lines)"`
	Args       map[string]any `json:"args,omitempty" jsonschema:"the operation's fields"`
	IfRevision *uint64        `json:"if_revision,omitempty" jsonschema:"commit only if the cycle is still at this revision (else CONFLICT)"`
}

// HistoryIn are the arguments of history.
type HistoryIn struct {
	Key   string `json:"key" jsonschema:"the document, e.g. .asdd/state/manifest.json"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many of the latest commits (default 20, at most 1000)"`
}

// HistoryResult lists journal records, oldest first.
type HistoryResult struct {
	Key      string `json:"key"`
	Revision uint64 `json:"revision"`
	Records  Array  `json:"records" jsonschema:"revision, time, actor, reason, RFC 6902 patch and events of each commit"`
}

func (s *Server) addOtherTools() {
	addTool(s, &sdk.Tool{Name: "state_read", Description: "The state-manager's state (.agents/tmp/state.json).", Annotations: readOnly("Read the state")},
		func(ctx context.Context, svc app.Service, in Empty) (*StateResult, error) {
			st, rev, err := svc.State(ctx)
			if err != nil {
				return nil, err
			}
			return &StateResult{Revision: rev, State: st}, nil
		})
	addTool(s, &sdk.Tool{Name: "state_update", Description: "Deep-merge an object into the state-manager's state, checked against its schema and committed.", Annotations: change("Update the state", true)},
		func(ctx context.Context, svc app.Service, in StateUpdateIn) (*StateResult, error) {
			patch, err := json.Marshal(in.Patch)
			if err != nil {
				return nil, reason.New(reason.InvalidInput, "patch: %v", err)
			}
			r, err := svc.UpdateState(ctx, wire.StateRequest{Op: "update", Patch: patch, Actor: s.o.Actor})
			if err != nil {
				return nil, err
			}
			return &StateResult{Revision: r.Revision, Summary: r.Summary, State: r.State}, nil
		})
	addTool(s, &sdk.Tool{Name: "cycle_read", Description: "A dev cycle's state (.workflow/.cycle/<id>.json).", Annotations: readOnly("Read a cycle")},
		func(ctx context.Context, svc app.Service, in CycleIn) (*CycleResult, error) {
			st, rev, err := svc.Cycle(ctx, in.CycleID)
			if err != nil {
				return nil, err
			}
			return &CycleResult{CycleID: in.CycleID, Revision: rev, Cycle: st}, nil
		})
	addTool(s, &sdk.Tool{Name: "cycle_update", Description: "One operation on a dev cycle, then its .progress/ files are synced. With if_revision it is a compare-and-swap: CONFLICT unless the cycle is still at that revision.", Annotations: change("Update a cycle", false)},
		func(ctx context.Context, svc app.Service, in CycleUpdateIn) (*CycleResult, error) {
			var args json.RawMessage
			if in.Args != nil {
				b, err := json.Marshal(in.Args)
				if err != nil {
					return nil, reason.New(reason.InvalidInput, "args: %v", err)
				}
				args = b
			}
			r, err := svc.UpdateCycle(ctx, wire.CycleRequest{ID: in.CycleID, Op: in.Op, Args: args, IfRevision: in.IfRevision, Actor: s.o.Actor})
			if err != nil {
				return nil, err
			}
			return &CycleResult{CycleID: r.CycleID, Revision: r.Revision, Event: r.Event, Summary: r.Summary, Cycle: r.Cycle, Synced: r.Synced}, nil
		})
	addTool(s, &sdk.Tool{Name: "history", Description: "The latest commits of a managed document, oldest first: who changed it, when, why, and the patch.", Annotations: readOnly("History")},
		func(ctx context.Context, svc app.Service, in HistoryIn) (*HistoryResult, error) {
			if err := app.DocumentKey(in.Key); err != nil {
				return nil, err
			}
			limit := in.Limit
			switch {
			case limit < 0 || limit > 1000:
				return nil, reason.New(reason.InvalidInput, "limit %d is outside 1..1000", limit)
			case limit == 0:
				limit = 20
			}
			doc, err := svc.Doc(ctx, in.Key)
			if err != nil {
				return nil, err
			}
			if doc.Revision == 0 {
				return nil, reason.New(reason.NotFound, "%s has no commits", in.Key)
			}
			from := uint64(1)
			if doc.Revision > uint64(limit) {
				from = doc.Revision - uint64(limit) + 1
			}
			recs, err := svc.History(ctx, in.Key, from, doc.Revision)
			if err != nil {
				return nil, err
			}
			if recs == nil {
				recs = []store.Record{}
			}
			return &HistoryResult{Key: in.Key, Revision: doc.Revision, Records: recs}, nil
		})
}

func (s *Server) addTools() {
	s.addASDDTools()
	s.addImplTools()
	s.addOtherTools()
	if s.o.Admin {
		s.addAdminTools()
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
