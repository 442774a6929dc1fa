package board_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/board"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
)

func ptr[T any](v T) *T { return &v }

func TestColumnOf(t *testing.T) {
	tests := map[string]string{
		asdd.Discovery:        "DISCOVERY",
		asdd.Spec:             "SPEC",
		asdd.BehaviorCapture:  "SPEC",
		asdd.Partial:          "VALIDATION",
		asdd.CICD:             "CI_CD",
		asdd.Done:             "DONE",
		asdd.Blocked:          "BLOCKED",
		asdd.QuickFix:         "QUICK_FIX",
		asdd.NeedsHumanReview: "OTHER",
		"SOMETHING_ELSE":      "OTHER",
	}
	for status, want := range tests {
		if got := board.ColumnOf(status); got != want {
			t.Errorf("ColumnOf(%s) = %s, want %s", status, got, want)
		}
	}
}

// A slice's chain as bars: configured CCS order, latest live score per
// agent, raised minimums, superseded entries ignored, weakest marked.
func TestViewChainAndPhase(t *testing.T) {
	cfg := asdd.DefaultConfig()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	min := func(name string) float64 { a, _ := cfg.Agent(name); return a.MinConfidence }
	m := &asdd.Manifest{Revision: 7, Slices: []*asdd.Slice{&asdd.Slice{
		SliceID: "S-1", Status: asdd.Design, CreatedAt: "2026-11-22T09:00:00Z",
		ConfidenceChain: []asdd.ChainEntry{
			{Agent: "discovery", Score: 0.95, Attempt: 1, Timestamp: "2026-11-22T10:00:00Z", Outcome: asdd.OutcomeAccepted},
			{Agent: "spec", Score: 0.70, Attempt: 1, Timestamp: "2026-11-22T10:10:00Z", Outcome: asdd.OutcomeSuperseded},
			{Agent: "spec", Score: 0.86, Attempt: 2, Timestamp: "2026-11-22T10:30:00Z", Outcome: asdd.OutcomeAccepted},
			{Agent: "validation", Score: 0.91, Attempt: 1, Timestamp: "2026-11-22T11:00:00Z", Outcome: asdd.OutcomeAccepted, Minimum: ptr(0.90)},
		},
		RaisedMinimums: map[string]float64{"design": 0.95},
		Blockers:       []json.RawMessage{json.RawMessage(`"waiting for the API contract"`), json.RawMessage(`{"id":"B-1","description":"legal review"}`), json.RawMessage(`42`)},
	}, &asdd.Slice{
		SliceID: "S-2", Status: asdd.QuickFix, CreatedAt: "2026-11-22T11:59:00Z",
	}}}
	drift := map[string][]board.DriftMark{"S-1": {{Path: "specs/S-1/design.md", Code: "STATE_DRIFT", Message: "changed"}}}
	v := board.NewView(m, cfg, now, drift)

	if v.Revision != 7 || len(v.Cards) != 2 {
		t.Fatalf("view: revision %d, %d cards", v.Revision, len(v.Cards))
	}
	wantCols := append(append([]string(nil), asdd.Lifecycle...), "BLOCKED", "QUICK_FIX")
	if diff := cmp.Diff(wantCols, v.Columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	c := v.Cards[0]
	if c.Column != "DESIGN" {
		t.Errorf("column %s", c.Column)
	}
	var want []board.Bar
	for _, a := range cfg.CCS.Agents {
		b := board.Bar{Agent: a, Minimum: min(a)}
		switch a {
		case "discovery":
			b.Score, b.Attempt = ptr(0.95), 1
		case "spec":
			b.Score, b.Attempt, b.Weakest = ptr(0.86), 2, true
		case "validation":
			b.Score, b.Attempt, b.Minimum = ptr(0.91), 1, 0.90
		case "design":
			b.Minimum = 0.95
		}
		want = append(want, b)
	}
	if diff := cmp.Diff(want, c.Chain); diff != "" {
		t.Errorf("chain (-want +got):\n%s", diff)
	}
	if c.PhaseSince != "2026-11-22T11:00:00Z" || c.PhaseSeconds == nil || *c.PhaseSeconds != 3600 {
		t.Errorf("in phase since %s (%v s)", c.PhaseSince, c.PhaseSeconds)
	}
	if diff := cmp.Diff([]string{"waiting for the API contract", "legal review", "42"}, c.Blockers); diff != "" {
		t.Errorf("blockers (-want +got):\n%s", diff)
	}
	if len(c.Drift) != 1 || c.Drift[0].Path != "specs/S-1/design.md" {
		t.Errorf("drift %v", c.Drift)
	}
	q := v.Cards[1]
	if q.Column != "QUICK_FIX" || q.PhaseSeconds == nil || *q.PhaseSeconds != 60 {
		t.Errorf("quick fix card: column %s, in phase %v", q.Column, q.PhaseSeconds)
	}
	for _, b := range q.Chain {
		if b.Score != nil || b.Weakest {
			t.Errorf("unscored slice has a scored bar %+v", b)
		}
	}
}

// A halted slice's card: BLOCKED column, time in phase from the halt; a
// resolution later counts as the next phase change.
func TestViewBlockedAndResolved(t *testing.T) {
	cfg := asdd.DefaultConfig()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	s := &asdd.Slice{SliceID: "S-1", Status: asdd.Blocked, CreatedAt: "2026-11-22T08:00:00Z",
		BlockedAtPhase: asdd.Spec, LKGPhase: asdd.Discovery, BlockReason: "too vague", RollbackTimestamp: "2026-11-22T11:30:00Z",
		ConfidenceChain: []asdd.ChainEntry{{Agent: "spec", Score: 0.5, Timestamp: "2026-11-22T11:30:00Z", Outcome: asdd.OutcomeHalted, BelowMinimum: true}}}
	v := board.NewView(&asdd.Manifest{Slices: []*asdd.Slice{s}}, cfg, now, nil)
	c := v.Cards[0]
	if c.Column != "BLOCKED" || c.Block == nil || c.Block.Reason != "too vague" {
		t.Fatalf("blocked card %+v", c)
	}
	if *c.PhaseSeconds != 1800 {
		t.Errorf("in phase %d s, want 1800", *c.PhaseSeconds)
	}
	var spec board.Bar
	for _, b := range c.Chain {
		if b.Agent == "spec" {
			spec = b
		}
	}
	if !spec.Below || !spec.Weakest {
		t.Errorf("halted link %+v: want below minimum and weakest", spec)
	}

	s.Status, s.RollbackTimestamp = asdd.Discovery, ""
	s.Escalations = []asdd.Escalation{{ID: "E", Status: asdd.EscalationResolved, ResolvedAt: "2026-11-22T11:50:00Z"}}
	v = board.NewView(&asdd.Manifest{Slices: []*asdd.Slice{s}}, cfg, now, nil)
	if c := v.Cards[0]; c.Column != "DISCOVERY" || *c.PhaseSeconds != 600 {
		t.Errorf("resolved card: column %s, in phase %d s", c.Column, *c.PhaseSeconds)
	}
}

func TestNewPlan(t *testing.T) {
	br := "impl/T-2"
	m := &impl.Manifest{
		Plan:   impl.Plan{Title: "Payments"},
		Phases: []impl.Phase{{Number: 2, DependsOn: []int{1}}, {Number: 1}},
		Tasks: []impl.Task{
			{ID: "T-1", Phase: 1, Status: impl.Merged},
			{ID: "T-2", Phase: 2, Status: impl.InProgress, Branch: &br, Retries: 1},
			{ID: "T-3", Phase: 3, Status: impl.Pending},
		},
	}
	p := board.NewPlan(m)
	want := board.Plan{Title: "Payments", Phases: []board.PlanPhase{
		{Number: 1, Tasks: []board.PlanTask{{ID: "T-1", Status: "merged"}}},
		{Number: 2, DependsOn: []int{1}, Tasks: []board.PlanTask{{ID: "T-2", Status: "in_progress", Branch: br, Retries: 1}}},
		{Number: 3, Tasks: []board.PlanTask{{ID: "T-3", Status: "pending"}}},
	}, Counts: map[string]int{"pending": 1, "in_progress": 1, "validating": 0, "passed": 0, "failed": 0, "merged": 1, "abandoned": 0, "conflict": 0}}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("plan (-want +got):\n%s", diff)
	}
}

func TestNewCycle(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	st, err := cycle.New("cycle-v1-20261122T120000-abcd", "Rate limiting", "add rate limits", 5, now)
	if err != nil {
		t.Fatal(err)
	}
	st.Coordination.Blockers = []cycle.Blocker{{ID: "b1", Description: "no staging env", Status: "open"}, {ID: "b2", Description: "old", Status: "resolved"}}
	st.Coordination.PendingDecisions = []cycle.Decision{{ID: "d1", Status: "pending"}, {ID: "d2", Status: "made"}}
	c := board.NewCycle(st)
	if c.ID != st.CycleID || c.Title != st.Title || c.MaxIterations != 5 {
		t.Errorf("cycle %+v", c)
	}
	if diff := cmp.Diff([]string{"no staging env"}, c.OpenBlockers); diff != "" {
		t.Errorf("open blockers (-want +got):\n%s", diff)
	}
	if c.PendingDecisions != 1 || len(c.Agents) != 4 {
		t.Errorf("pending decisions %d, agents %v", c.PendingDecisions, c.Agents)
	}
	cs := []board.Cycle{{ID: "b", UpdatedAt: "2026-11-21T00:00:00Z"}, {ID: "a", UpdatedAt: "2026-11-22T00:00:00Z"}, {ID: "c", UpdatedAt: "2026-11-22T00:00:00Z"}}
	board.SortCycles(cs)
	if got := cs[0].ID + cs[1].ID + cs[2].ID; got != "acb" {
		t.Errorf("cycle order %s, want acb", got)
	}
}

// Any manifest the schema accepts gives a view without panicking, with one
// card per slice in a column the view lists.
func FuzzNewView(f *testing.F) {
	f.Add([]byte(`{"project_context":{},"slices":[{"slice_id":"S","status":"SPEC","confidence_chain":[{"agent":"spec","score":0.9,"timestamp":"x"}],"blockers":["a",{"reason":"b"},[1]]}],"agent_heartbeats":{}}`))
	f.Add([]byte(`{"project_context":{},"slices":[{"slice_id":"S","status":"BLOCKED","blocked_at_phase":"NOPE","created_at":"2026-01-01T00:00:00Z"}],"agent_heartbeats":{"a_agent":{"status":"ACTIVE","last_execution":"2026-01-01T00:00:00Z"}}}`))
	cfg := asdd.DefaultConfig()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := asdd.Decode(raw)
		if err != nil {
			return
		}
		v := board.NewView(m, cfg, now, nil)
		if len(v.Cards) != len(m.Slices) {
			t.Fatalf("%d cards for %d slices", len(v.Cards), len(m.Slices))
		}
		cols := map[string]bool{}
		for _, c := range v.Columns {
			cols[c] = true
		}
		for _, c := range v.Cards {
			if !cols[c.Column] {
				t.Fatalf("card %s in column %s, not among %v", c.ID, c.Column, v.Columns)
			}
			if len(c.Chain) != len(cfg.CCS.Agents) {
				t.Fatalf("%d bars for %d CCS agents", len(c.Chain), len(cfg.CCS.Agents))
			}
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	})
}

// Issue 19, item 9: the board shows a retro-spec slice's validation status
// and counts beside the feature slices (seed 000: "a single view").
func TestViewRetroSpecProgress(t *testing.T) {
	cfg := asdd.DefaultConfig()
	retro := &asdd.Slice{SliceID: "RETRO-AUTH-001", Type: asdd.TypeRetroSpec, Status: asdd.BehaviorCapture,
		ValidationStatus: "PARTIAL", RequirementsValidated: ptr(14), RequirementsCorrected: ptr(3), RequirementsMissing: ptr(2)}
	feature := &asdd.Slice{SliceID: "SLICE-001", Status: asdd.Design}
	v := board.NewView(&asdd.Manifest{Slices: []*asdd.Slice{retro, feature}}, cfg, time.Now(), nil)
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Cards []struct {
			ID    string `json:"slice_id"`
			Retro *struct {
				Status                        string `json:"validation_status"`
				Validated, Corrected, Missing int
			} `json:"retro"`
		} `json:"cards"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for _, c := range got.Cards {
		switch c.ID {
		case "RETRO-AUTH-001":
			if c.Retro == nil || c.Retro.Status != "PARTIAL" {
				t.Errorf("retro card %+v in %s", c.Retro, raw)
			}
		case "SLICE-001":
			if c.Retro != nil {
				t.Errorf("feature card with retro counts %+v", c.Retro)
			}
		}
	}
	if !json.Valid(raw) || !strings.Contains(string(raw), `"requirements_validated":14,"requirements_corrected":3,"requirements_missing":2`) {
		t.Errorf("board JSON lacks the counts: %s", raw)
	}
}
