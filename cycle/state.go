package cycle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/custodian-dev/custodian/internal/legacyjson"
	"github.com/custodian-dev/custodian/reason"
)

// Cycle statuses.
const (
	StatusCreated   = "created"
	StatusRunning   = "running"
	StatusPaused    = "paused"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
)

// Statuses lists the cycle statuses in the seed's order.
var Statuses = []string{StatusCreated, StatusRunning, StatusPaused, StatusCompleted, StatusFailed}

// Agent names.
const (
	AgentRA  = "ra"
	AgentEP  = "ep"
	AgentCD  = "cd"
	AgentVAS = "vas"
)

// AgentNames lists the four agents in the order they run.
var AgentNames = []string{AgentRA, AgentEP, AgentCD, AgentVAS}

// Agent statuses.
const (
	AgentIdle      = "idle"
	AgentRunning   = "running"
	AgentWaiting   = "waiting"
	AgentCompleted = "completed"
	AgentFailed    = "failed"
)

// AgentStatuses lists the agent statuses in the seed's order.
var AgentStatuses = []string{AgentIdle, AgentRunning, AgentWaiting, AgentCompleted, AgentFailed}

// Phases lists the values of current_phase in the seed's order.
var Phases = []string{"init", AgentRA, AgentEP, AgentCD, AgentVAS, PhaseAggregation, PhaseComplete}

// Phases other than the agents'.
const (
	PhaseInit        = "init"
	PhaseAggregation = "aggregation"
	PhaseComplete    = "complete"
)

// Plan task efforts and statuses, change actions, feedback types, decision
// and blocker statuses.
var (
	Efforts          = []string{"small", "medium", "large"}
	TaskStatuses     = []string{"pending", "in_progress", "completed", "blocked"}
	ChangeActions    = []string{"create", "modify", "delete"}
	FeedbackTypes    = []string{"requirement_update", "bug_report", "issue_fix", "clarification"}
	DecisionStatuses = []string{"pending", "made", "implemented"}
	BlockerStatuses  = []string{"open", "resolved", "workaround"}
)

// State is the seed's CycleState: the whole content of
// .workflow/.cycle/{cycleId}.json. Its own names match case-sensitively
// (case:strict; the codec's names below it match as encoding/json's do),
// so that a miscased one reaches Extra and Decode rejects it.
type State struct {
	// Core metadata.
	CycleID     string   `json:"cycle_id,case:strict"`
	Title       string   `json:"title,case:strict"`
	Description string   `json:"description,case:strict"`
	TaskHistory []string `json:"task_history,case:strict"`

	// Status and timing.
	Status           string `json:"status,case:strict"`
	CreatedAt        string `json:"created_at,case:strict"`
	UpdatedAt        string `json:"updated_at,case:strict"`
	CompletedAt      string `json:"completed_at,omitempty,case:strict"`
	MaxIterations    int    `json:"max_iterations,case:strict"`
	CurrentIteration int    `json:"current_iteration,case:strict"`
	FailureReason    string `json:"failure_reason,omitempty,case:strict"`

	// Multi-agent tracking.
	Agents Agents `json:"agents,case:strict"`

	// Phase tracking.
	CurrentPhase    string       `json:"current_phase,case:strict"`
	CompletedPhases []string     `json:"completed_phases,case:strict"`
	PhaseErrors     []PhaseError `json:"phase_errors,case:strict"`

	// Shared context.
	Requirements *Requirements `json:"requirements,omitempty,case:strict"`
	Exploration  *Exploration  `json:"exploration,omitempty,case:strict"`
	Plan         *Plan         `json:"plan,omitempty,case:strict"`
	Changes      *Changes      `json:"changes,omitempty,case:strict"`
	TestResults  *TestResults  `json:"test_results,omitempty,case:strict"`

	// Iteration tracking.
	Iterations []IterationRecord `json:"iterations,case:strict"`

	// Coordination data.
	Coordination Coordination `json:"coordination,case:strict"`

	// Extra holds top-level fields this version does not know, kept as
	// they were so that other tools' data survives a rewrite; Encode
	// writes them after the known fields, in key order.
	Extra map[string]jsontext.Value `json:",inline"`
}

// Agents are the four agents' states.
type Agents struct {
	RA  AgentState `json:"ra"`
	EP  AgentState `json:"ep"`
	CD  AgentState `json:"cd"`
	VAS AgentState `json:"vas"`
}

// Get returns a pointer to the named agent's state, or nil for an unknown
// name.
func (a *Agents) Get(name string) *AgentState {
	switch name {
	case AgentRA:
		return &a.RA
	case AgentEP:
		return &a.EP
	case AgentCD:
		return &a.CD
	case AgentVAS:
		return &a.VAS
	}
	return nil
}

// AgentState is one agent's state.
type AgentState struct {
	Status              string   `json:"status"`
	StartedAt           string   `json:"started_at,omitempty"`
	CompletedAt         string   `json:"completed_at,omitempty"`
	OutputFiles         []string `json:"output_files"`
	LastMessage         string   `json:"last_message,omitempty"`
	Error               string   `json:"error,omitempty"`
	IterationsCompleted int      `json:"iterations_completed"`
}

// PhaseError is one entry of phase_errors.
type PhaseError struct {
	Phase     string `json:"phase"`
	Error     string `json:"error"`
	Timestamp string `json:"timestamp"`
}

// Requirements is the Requirements Analyst's shared context.
type Requirements struct {
	Version       string   `json:"version"`
	Specification string   `json:"specification"`
	EdgeCases     []string `json:"edge_cases"`
	LastUpdated   string   `json:"last_updated"`
}

// Exploration is the Exploration Planner's findings.
type Exploration struct {
	Version             string   `json:"version"`
	ArchitectureSummary string   `json:"architecture_summary"`
	IntegrationPoints   []string `json:"integration_points"`
	IdentifiedRisks     []string `json:"identified_risks"`
	LastUpdated         string   `json:"last_updated"`
}

// Plan is the Exploration Planner's plan.
type Plan struct {
	Version              string     `json:"version"`
	Tasks                []PlanTask `json:"tasks"`
	TotalEstimatedEffort string     `json:"total_estimated_effort"`
	CriticalPath         []string   `json:"critical_path"`
	LastUpdated          string     `json:"last_updated"`
}

// PlanTask is one task of the plan.
type PlanTask struct {
	ID          string   `json:"id"`
	Description string   `json:"description"`
	Effort      string   `json:"effort"`
	DependsOn   []string `json:"depends_on"`
	Status      string   `json:"status"`
	AssignedTo  string   `json:"assigned_to,omitempty"`
	Files       []string `json:"files"`
}

// Changes is the Code Developer's change log.
type Changes struct {
	TotalFiles       int            `json:"total_files"`
	Changes          []ChangeLog    `json:"changes"`
	IterationMarkers map[int]string `json:"iteration_markers"`
}

// ChangeLog is one entry of the append-only change log.
type ChangeLog struct {
	Timestamp   string `json:"timestamp"`
	File        string `json:"file"`
	Action      string `json:"action"`
	Iteration   int    `json:"iteration"`
	Agent       string `json:"agent"`
	Description string `json:"description"`
}

// TestResults is the Validation Archivist's latest test run.
type TestResults struct {
	Version     string   `json:"version"`
	PassRate    float64  `json:"pass_rate"`
	Coverage    float64  `json:"coverage"`
	FailedTests []string `json:"failed_tests"`
	TotalTests  int      `json:"total_tests"`
	LastRun     string   `json:"last_run"`
}

// IterationRecord is one iteration.
type IterationRecord struct {
	Number       int                    `json:"number"`
	Extension    string                 `json:"extension,omitempty"`
	StartedAt    string                 `json:"started_at"`
	CompletedAt  string                 `json:"completed_at,omitempty"`
	AgentResults map[string]AgentResult `json:"agent_results"`
	IssuesFound  []string               `json:"issues_found"`
	Resolved     bool                   `json:"resolved"`
}

// AgentResult is one agent's result in an iteration.
type AgentResult struct {
	Status        string `json:"status"`
	FilesModified int    `json:"files_modified"`
}

// Coordination holds inter-agent communication.
type Coordination struct {
	FeedbackLog      []FeedbackEntry `json:"feedback_log"`
	PendingDecisions []Decision      `json:"pending_decisions"`
	Blockers         []Blocker       `json:"blockers"`
}

// FeedbackEntry is one message between agents or from the user.
type FeedbackEntry struct {
	Timestamp string `json:"timestamp"`
	Source    string `json:"source"`
	Target    string `json:"target"`
	Content   string `json:"content"`
	Type      string `json:"type"`
}

// Decision is a decision to be made, made, or implemented.
type Decision struct {
	ID           string   `json:"id"`
	Description  string   `json:"description"`
	Options      []string `json:"options"`
	MadeBy       string   `json:"made_by,omitempty"`
	ChosenOption string   `json:"chosen_option,omitempty"`
	Status       string   `json:"status"`
}

// Blocker is something that stops an agent.
type Blocker struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	ReportedBy  string `json:"reported_by"`
	Status      string `json:"status"`
	Resolution  string `json:"resolution,omitempty"`
}

// stateFields are the JSON names State knows, for Extra.
var stateFields = map[string]bool{
	"cycle_id": true, "title": true, "description": true, "task_history": true,
	"status": true, "created_at": true, "updated_at": true, "completed_at": true,
	"max_iterations": true, "current_iteration": true, "failure_reason": true,
	"agents": true, "current_phase": true, "completed_phases": true, "phase_errors": true,
	"requirements": true, "exploration": true, "plan": true, "changes": true, "test_results": true,
	"iterations": true, "coordination": true,
}

// plainState is State without its JSON methods, for the codec.
type plainState State

// codec is encoding/json's behaviour, which the previous releases used
// and whose output the files keep: v1 names matching (case-insensitive
// below the top level), omitempty, map keys in order, invalid UTF-8 and
// duplicate names accepted, unknown members kept as written (compacted);
// HTML characters are not escaped.
var codec = jsonv2.JoinOptions(
	jsonv1.DefaultOptionsV1(),
	jsontext.EscapeForHTML(false),
	jsontext.EscapeForJS(false),
	jsonv2.WithMarshalers(legacyjson.Strings[string]()),
)

// Decode parses a cycle document. A document that is not JSON, or whose
// fields have the wrong types, is a CORRUPT_STATE error; Decode does not
// check the rules (see Validate).
func Decode(raw []byte) (State, error) {
	var s State
	if err := s.UnmarshalJSON(raw); err != nil {
		return State{}, reason.New(reason.CorruptState, "%w", err)
	}
	return s, nil
}

// UnmarshalJSON decodes s as Decode does, so that a State inside another
// JSON value keeps its unknown fields.
func (s *State) UnmarshalJSON(raw []byte) error {
	var d State
	if err := jsonv2.Unmarshal(raw, (*plainState)(&d), codec); err != nil {
		return fmt.Errorf("cycle document is not a valid CycleState: %w", err)
	}
	for k := range d.Extra {
		if stateFields[strings.ToLower(k)] {
			return fmt.Errorf("cycle document has a field %q; field names are lower case (%q)", k, strings.ToLower(k))
		}
	}
	d.normalize()
	*s = d
	return nil
}

// Encode returns the document's JSON: the seed's field order, unknown
// top-level fields appended in key order, HTML characters not escaped.
func Encode(s State) ([]byte, error) {
	s.normalize()
	for k := range s.Extra {
		if stateFields[k] { // set by a caller: the field itself wins
			s.Extra = maps.Clone(s.Extra)
			maps.DeleteFunc(s.Extra, func(k string, _ jsontext.Value) bool { return stateFields[k] })
			break
		}
	}
	out, err := jsonv2.Marshal((*plainState)(&s), codec)
	if err != nil {
		return nil, fmt.Errorf("encode cycle %s: %w", s.CycleID, err)
	}
	return out, nil
}

// normalize replaces nil lists and maps with empty ones, so that the file
// always shows [] and {} where the seed does.
func (s *State) normalize() {
	s.TaskHistory = nonNil(s.TaskHistory)
	for _, n := range AgentNames {
		a := s.Agents.Get(n)
		a.OutputFiles = nonNil(a.OutputFiles)
	}
	s.CompletedPhases = nonNil(s.CompletedPhases)
	s.PhaseErrors = nonNil(s.PhaseErrors)
	if s.Requirements != nil {
		s.Requirements.EdgeCases = nonNil(s.Requirements.EdgeCases)
	}
	if s.Exploration != nil {
		s.Exploration.IntegrationPoints = nonNil(s.Exploration.IntegrationPoints)
		s.Exploration.IdentifiedRisks = nonNil(s.Exploration.IdentifiedRisks)
	}
	if s.Plan != nil {
		s.Plan.Tasks = nonNil(s.Plan.Tasks)
		s.Plan.CriticalPath = nonNil(s.Plan.CriticalPath)
		for i := range s.Plan.Tasks {
			s.Plan.Tasks[i].DependsOn = nonNil(s.Plan.Tasks[i].DependsOn)
			s.Plan.Tasks[i].Files = nonNil(s.Plan.Tasks[i].Files)
		}
	}
	if s.Changes != nil {
		s.Changes.Changes = nonNil(s.Changes.Changes)
		if s.Changes.IterationMarkers == nil {
			s.Changes.IterationMarkers = map[int]string{}
		}
	}
	if s.TestResults != nil {
		s.TestResults.FailedTests = nonNil(s.TestResults.FailedTests)
	}
	s.Iterations = nonNil(s.Iterations)
	for i := range s.Iterations {
		if s.Iterations[i].AgentResults == nil {
			s.Iterations[i].AgentResults = map[string]AgentResult{}
		}
		s.Iterations[i].IssuesFound = nonNil(s.Iterations[i].IssuesFound)
	}
	s.Coordination.FeedbackLog = nonNil(s.Coordination.FeedbackLog)
	s.Coordination.PendingDecisions = nonNil(s.Coordination.PendingDecisions)
	s.Coordination.Blockers = nonNil(s.Coordination.Blockers)
	for i := range s.Coordination.PendingDecisions {
		s.Coordination.PendingDecisions[i].Options = nonNil(s.Coordination.PendingDecisions[i].Options)
	}
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

// Clone returns a deep copy of s.
func (s State) Clone() State {
	c := s
	c.TaskHistory = slices.Clone(s.TaskHistory)
	for _, n := range AgentNames {
		a := c.Agents.Get(n)
		a.OutputFiles = slices.Clone(a.OutputFiles)
	}
	c.CompletedPhases = slices.Clone(s.CompletedPhases)
	c.PhaseErrors = slices.Clone(s.PhaseErrors)
	if s.Requirements != nil {
		r := *s.Requirements
		r.EdgeCases = slices.Clone(r.EdgeCases)
		c.Requirements = &r
	}
	if s.Exploration != nil {
		e := *s.Exploration
		e.IntegrationPoints = slices.Clone(e.IntegrationPoints)
		e.IdentifiedRisks = slices.Clone(e.IdentifiedRisks)
		c.Exploration = &e
	}
	if s.Plan != nil {
		p := *s.Plan
		p.Tasks = slices.Clone(p.Tasks)
		for i := range p.Tasks {
			p.Tasks[i].DependsOn = slices.Clone(p.Tasks[i].DependsOn)
			p.Tasks[i].Files = slices.Clone(p.Tasks[i].Files)
		}
		p.CriticalPath = slices.Clone(p.CriticalPath)
		c.Plan = &p
	}
	if s.Changes != nil {
		ch := *s.Changes
		ch.Changes = slices.Clone(ch.Changes)
		if s.Changes.IterationMarkers != nil {
			ch.IterationMarkers = make(map[int]string, len(s.Changes.IterationMarkers))
			for k, v := range s.Changes.IterationMarkers {
				ch.IterationMarkers[k] = v
			}
		}
		c.Changes = &ch
	}
	if s.TestResults != nil {
		t := *s.TestResults
		t.FailedTests = slices.Clone(t.FailedTests)
		c.TestResults = &t
	}
	c.Iterations = slices.Clone(s.Iterations)
	for i := range c.Iterations {
		it := &c.Iterations[i]
		if it.AgentResults != nil {
			m := make(map[string]AgentResult, len(it.AgentResults))
			for k, v := range it.AgentResults {
				m[k] = v
			}
			it.AgentResults = m
		}
		it.IssuesFound = slices.Clone(it.IssuesFound)
	}
	c.Coordination.FeedbackLog = slices.Clone(s.Coordination.FeedbackLog)
	c.Coordination.PendingDecisions = slices.Clone(s.Coordination.PendingDecisions)
	for i := range c.Coordination.PendingDecisions {
		c.Coordination.PendingDecisions[i].Options = slices.Clone(c.Coordination.PendingDecisions[i].Options)
	}
	c.Coordination.Blockers = slices.Clone(s.Coordination.Blockers)
	c.Extra = maps.Clone(s.Extra)
	return c
}

// MarshalJSON encodes s as Encode does (seed field order, unknown fields
// kept), so that a State inside another JSON value looks like the file.
func (s State) MarshalJSON() ([]byte, error) { return Encode(s) }
