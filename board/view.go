package board

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
)

// Column names besides the lifecycle phases.
const (
	ColumnBlocked  = asdd.Blocked
	ColumnQuickFix = asdd.QuickFix
	ColumnOther    = "OTHER"
)

// View is what the dashboard draws: the status board of the manifest
// (asdd.NewBoard) with, per slice, what only a picture shows well. Its
// cards are the board's slices.
type View struct {
	Revision         uint64                `json:"revision"`
	Sprint           string                `json:"current_sprint,omitempty"`
	GlobalConfidence *float64              `json:"global_confidence_score,omitempty"`
	Escalations      []asdd.EscalationView `json:"open_escalations"`
	Heartbeats       []asdd.BoardHeartbeat `json:"heartbeats"`
	NeedsReview      bool                  `json:"needs_human_review"`
	// ProjectReview lists the project-context fields a rebuild guessed.
	ProjectReview []string `json:"project_needs_human_review,omitempty"`
	// Columns are the board's columns in order: the lifecycle phases and
	// BLOCKED always, QUICK_FIX and OTHER only when a card is in them.
	Columns []string `json:"columns"`
	Cards   []Card   `json:"cards"`
	// Floor is the CCS floor below which a slice halts.
	Floor float64 `json:"ccs_floor"`
	// At is the time the view was made (heartbeat ages count to it).
	At string `json:"at"`
}

// Card is one slice on the board.
type Card struct {
	asdd.BoardSlice
	Column string `json:"column"`
	// Chain is the confidence chain as bars: one per CCS agent, in the
	// configured order, with the agent's latest live score.
	Chain []Bar `json:"chain"`
	// Blockers are the slice's blockers (seed 000) as text.
	Blockers []string `json:"blockers,omitempty"`
	// Drift lists artifacts whose file no longer matches the manifest.
	Drift []DriftMark `json:"drift,omitempty"`
	// PhaseSince is when the slice entered its current status, as far as
	// the slice records it: its creation, the latest accepted chain
	// entry, halt or resolution. PhaseSeconds is the time since then.
	PhaseSince   string `json:"phase_since,omitempty"`
	PhaseSeconds *int64 `json:"phase_seconds,omitempty"`
}

// Bar is one agent's link in the confidence chain.
type Bar struct {
	Agent   string   `json:"agent"`
	Score   *float64 `json:"score,omitempty"` // nil: not scored yet
	Minimum float64  `json:"minimum"`
	Attempt int      `json:"attempt,omitempty"`
	Below   bool     `json:"below_minimum,omitempty"`
	// Weakest marks the lowest-scoring link (the board's weak link).
	Weakest bool `json:"weakest,omitempty"`
}

// DriftMark is one artifact that is missing or changed on disk.
type DriftMark struct {
	Path    string `json:"path"`
	Code    string `json:"code"` // STATE_DRIFT, STATE_INCONSISTENCY, INVALID_INPUT
	Message string `json:"message"`
}

// NewView builds the dashboard's view of m at time now; drift maps slice
// ids to their drift marks (nil: not checked).
func NewView(m *asdd.Manifest, cfg *asdd.Config, now time.Time, drift map[string][]DriftMark) View {
	b := asdd.NewBoard(m, cfg, now)
	v := View{Revision: b.Revision, Sprint: b.Sprint, GlobalConfidence: b.GlobalConfidence, Escalations: b.Escalations,
		Heartbeats: b.Heartbeats, NeedsReview: b.NeedsReview, ProjectReview: m.ProjectContext.NeedsHumanReview, Cards: make([]Card, 0, len(b.Slices)), Floor: cfg.CCS.Floor, At: asdd.Timestamp(now)}
	used := map[string]bool{}
	for _, bs := range b.Slices {
		s := m.Slice(bs.ID)
		c := Card{BoardSlice: bs, Column: ColumnOf(bs.Status), Chain: chainBars(s, cfg, bs.WeakLink), Drift: drift[bs.ID]}
		used[c.Column] = true
		for _, raw := range s.Blockers {
			c.Blockers = append(c.Blockers, blockerText(raw))
		}
		if since, ok := phaseSince(s); ok {
			c.PhaseSince = asdd.Timestamp(since)
			secs := int64(now.Sub(since) / time.Second)
			c.PhaseSeconds = &secs
		}
		v.Cards = append(v.Cards, c)
	}
	v.Columns = append(append([]string(nil), asdd.Lifecycle...), ColumnBlocked)
	for _, extra := range []string{ColumnQuickFix, ColumnOther} {
		if used[extra] {
			v.Columns = append(v.Columns, extra)
		}
	}
	return v
}

// ColumnOf is the board column of a slice status: its lifecycle phase
// (PARTIAL counts as VALIDATION, BEHAVIOR_CAPTURE as SPEC), BLOCKED,
// QUICK_FIX, or OTHER (NEEDS_HUMAN_REVIEW and statuses written by hand).
func ColumnOf(status string) string {
	switch {
	case status == asdd.Blocked:
		return ColumnBlocked
	case asdd.PhaseIndex(status) >= 0:
		return asdd.Lifecycle[asdd.PhaseIndex(status)]
	case status == asdd.QuickFix:
		return ColumnQuickFix
	}
	return ColumnOther
}

// chainBars lays the slice's confidence chain out as one bar per CCS
// agent, marking the weak link.
func chainBars(s *asdd.Slice, cfg *asdd.Config, weak *asdd.WeakLinkView) []Bar {
	latest := map[string]asdd.ChainEntry{}
	for _, e := range s.ConfidenceChain {
		if e.Outcome != asdd.OutcomeSuperseded {
			latest[e.Agent] = e
		}
	}
	bars := make([]Bar, 0, len(cfg.CCS.Agents))
	for _, name := range cfg.CCS.Agents {
		b := Bar{Agent: name}
		if a, ok := cfg.Agent(name); ok {
			b.Minimum = a.MinConfidence
		}
		if r, ok := s.RaisedMinimums[name]; ok && r > b.Minimum {
			b.Minimum = r
		}
		if e, ok := latest[name]; ok {
			score := e.Score
			b.Score, b.Attempt, b.Below = &score, e.Attempt, e.BelowMinimum
			if e.Minimum != nil {
				b.Minimum = *e.Minimum
			}
			b.Weakest = weak != nil && weak.Agent == name
		}
		bars = append(bars, b)
	}
	return bars
}

// phaseSince is the latest time the slice records a change of its status:
// its creation, an accepted chain entry, a halt, a sign-off or a
// resolution.
func phaseSince(s *asdd.Slice) (time.Time, bool) {
	var best time.Time
	found := false
	consider := func(ts string) {
		if t, ok := asdd.ParseTimestamp(ts); ok && (!found || t.After(best)) {
			best, found = t, true
		}
	}
	consider(s.CreatedAt)
	for _, e := range s.ConfidenceChain {
		if e.Outcome == "" || e.Outcome == asdd.OutcomeAccepted {
			consider(e.Timestamp)
		}
	}
	if s.Status == asdd.Blocked {
		consider(s.RollbackTimestamp)
	}
	for _, e := range s.Escalations {
		consider(e.ResolvedAt)
	}
	return best, found
}

// blockerText renders one blocker: a JSON string as itself, an object by
// its description-like member, anything else as compact JSON.
func blockerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		for _, k := range []string{"description", "reason", "message", "title", "id"} {
			if v, ok := obj[k].(string); ok && v != "" {
				return v
			}
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

// Plan is the implementation plan of .impl/manifest.json: phases × tasks.
type Plan struct {
	Title  string      `json:"title,omitempty"`
	Path   string      `json:"path,omitempty"`
	Phases []PlanPhase `json:"phases"`
	// Counts are the tasks per status, every status listed.
	Counts map[string]int `json:"counts"`
}

// PlanPhase is one phase of the plan with its tasks.
type PlanPhase struct {
	Number    int        `json:"number"`
	DependsOn []int      `json:"depends_on,omitempty"`
	Tasks     []PlanTask `json:"tasks"`
}

// PlanTask is one task of the plan.
type PlanTask struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	Status      string `json:"status"`
	Branch      string `json:"branch,omitempty"`
	Retries     int    `json:"retries,omitempty"`
	Error       string `json:"error,omitempty"`
}

// NewPlan lays an implementation manifest out by phase. Tasks of a phase
// the manifest does not declare get a phase of their own.
func NewPlan(m *impl.Manifest) Plan {
	p := Plan{Title: m.Plan.Title, Path: m.Plan.Path, Phases: []PlanPhase{}, Counts: map[string]int{}}
	for _, st := range impl.Statuses {
		p.Counts[string(st)] = 0
	}
	index := map[int]int{}
	for _, ph := range m.Phases {
		if _, dup := index[ph.Number]; dup {
			continue
		}
		index[ph.Number] = len(p.Phases)
		p.Phases = append(p.Phases, PlanPhase{Number: ph.Number, DependsOn: ph.DependsOn, Tasks: []PlanTask{}})
	}
	for _, t := range m.Tasks {
		i, ok := index[t.Phase]
		if !ok {
			i = len(p.Phases)
			index[t.Phase] = i
			p.Phases = append(p.Phases, PlanPhase{Number: t.Phase, Tasks: []PlanTask{}})
		}
		pt := PlanTask{ID: t.ID, Description: t.Description, Status: string(t.Status), Retries: t.Retries}
		if t.Branch != nil {
			pt.Branch = *t.Branch
		}
		if t.Error != nil {
			pt.Error = *t.Error
		}
		p.Phases[i].Tasks = append(p.Phases[i].Tasks, pt)
		p.Counts[string(t.Status)]++
	}
	sort.SliceStable(p.Phases, func(i, j int) bool { return p.Phases[i].Number < p.Phases[j].Number })
	return p
}

// Cycle is one iteration cycle (seed 003) in short.
type Cycle struct {
	ID               string            `json:"cycle_id"`
	Title            string            `json:"title"`
	Status           string            `json:"status"`
	Phase            string            `json:"current_phase"`
	CompletedPhases  []string          `json:"completed_phases"`
	Iteration        int               `json:"current_iteration"`
	MaxIterations    int               `json:"max_iterations"`
	Agents           map[string]string `json:"agents"`
	OpenBlockers     []string          `json:"open_blockers,omitempty"`
	PendingDecisions int               `json:"pending_decisions"`
	UpdatedAt        string            `json:"updated_at"`
	FailureReason    string            `json:"failure_reason,omitempty"`
}

// NewCycle summarises a cycle's state.
func NewCycle(s cycle.State) Cycle {
	c := Cycle{ID: s.CycleID, Title: s.Title, Status: s.Status, Phase: s.CurrentPhase, CompletedPhases: s.CompletedPhases,
		Iteration: s.CurrentIteration, MaxIterations: s.MaxIterations, UpdatedAt: s.UpdatedAt, FailureReason: s.FailureReason,
		Agents: map[string]string{}}
	if c.CompletedPhases == nil {
		c.CompletedPhases = []string{}
	}
	for _, name := range cycle.AgentNames {
		if a := s.Agents.Get(name); a != nil {
			c.Agents[name] = a.Status
		}
	}
	for _, b := range s.Coordination.Blockers {
		if b.Status == "open" {
			c.OpenBlockers = append(c.OpenBlockers, b.Description)
		}
	}
	for _, d := range s.Coordination.PendingDecisions {
		if d.Status == "pending" {
			c.PendingDecisions++
		}
	}
	return c
}

// SortCycles orders cycles by last update, newest first, then by id.
func SortCycles(cs []Cycle) {
	slices.SortStableFunc(cs, func(a, b Cycle) int {
		if a.UpdatedAt != b.UpdatedAt {
			return strings.Compare(b.UpdatedAt, a.UpdatedAt)
		}
		return strings.Compare(a.ID, b.ID)
	})
}
