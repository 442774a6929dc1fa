package asdd

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Seed 004's worked examples, computed exactly (the seed's 0.455 and 0.614
// are arithmetic slips; DESIGN.md §3).
func TestCCSWorkedExamples(t *testing.T) {
	for _, c := range []struct {
		scores []float64
		exact  float64
		four   string
		three  string
	}{
		{[]float64{0.90, 0.88, 0.91, 0.82, 0.78}, 0.460972512, "0.4610", "0.461"},
		{[]float64{0.91, 0.88, 0.92, 0.83}, 0.61149088, "0.6115", "0.611"},
	} {
		got := CCSOf(c.scores...)
		if math.Abs(got-c.exact) > 1e-12 {
			t.Errorf("CCS%v = %.12f, want %.12f", c.scores, got, c.exact)
		}
		if s := fmt.Sprintf("%.4f", got); s != c.four {
			t.Errorf("CCS%v to 4 places = %s, want %s", c.scores, s, c.four)
		}
		if s := FormatScore(got); s != c.three {
			t.Errorf("CCS%v displayed = %s, want %s", c.scores, s, c.three)
		}
		var chain []ChainEntry
		for i, a := range DefaultConfig().CCS.Agents[:len(c.scores)] {
			chain = append(chain, ChainEntry{Agent: a, Score: c.scores[i]})
		}
		if v, ok := ComputeCCS(chain, DefaultConfig()); !ok || v != got {
			t.Errorf("ComputeCCS = %v, %v; want %v", v, ok, got)
		}
	}
}

// The seed's hand-written BLOCKED slice (no escalation, no sign-off list)
// is resolved by the configured escalation roles.
func TestResolveSeedBlockedSlice(t *testing.T) {
	m, err := Decode(readSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, m: m, cfg: DefaultConfig(), now: fixedNow}
	w.reject(Resolve{Slice: "SLICE-005", Role: "PO", Rationale: "x"}, reason.InvalidTransition)
	w.do(Resolve{Slice: "SLICE-005", Role: "TL", Rationale: "NFR added to requirements", Action: ActionRerun})
	if s := w.slice("SLICE-005"); s.Status != Implementation || s.BlockedAtPhase != "" || len(s.UncertaintyFactors) != 2 {
		t.Fatalf("after resolve: %+v", s)
	}
}

// The seed manifest stores ccs 0.614 for the second example; the first
// commit recomputes it exactly.
func TestSeedCCSRecomputed(t *testing.T) {
	m, err := Decode(readSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Apply(m, Beat{Agent: "spec", Status: HeartbeatIdle}, DefaultConfig(), fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	if got := *out.Manifest.Slice("SLICE-001").CCS; math.Abs(got-0.61149088) > 1e-12 {
		t.Fatalf("ccs = %v, want 0.61149088", got)
	}
	if bad := Invariants(out.Manifest, DefaultConfig()); len(bad) > 0 {
		t.Fatalf("invariants: %v", bad)
	}
}

// The first worked example driven through the pipeline: every agent passes
// its own gate, but the CCS falls below the floor (0.591 after design) and
// halts the slice; a TL accepts it and implementation's 0.78 brings the CCS
// to exactly 0.4610 — halted again.
func TestCascadingConfidenceFailure(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S1"})
	w.do(prop("discovery", "S1", 0.90, artsFor("discovery", "S1")...))
	w.do(prop("spec", "S1", 0.88, artsFor("spec", "S1")...))
	w.do(prop("validation", "S1", 0.91))
	out := w.halt(prop("design", "S1", 0.82, artsFor("design", "S1")...), reason.BelowThreshold, ModeCCSFloor)
	s := w.slice("S1")
	if got := *s.CCS; math.Abs(got-0.5909904) > 1e-12 {
		t.Fatalf("ccs after design = %v", got)
	}
	if s.BlockReason != "CCS 0.591 < floor 0.65 after the design agent's 0.82" {
		t.Fatalf("block reason %q", s.BlockReason)
	}
	if s.BlockedAtPhase != Design || s.LKGPhase != Validation || s.ResumePhase != Implementation {
		t.Fatalf("block record %s/%s/%s", s.BlockedAtPhase, s.LKGPhase, s.ResumePhase)
	}
	if s.ActionRequired != "Halt pipeline; full human review of all artifacts in slice" {
		t.Fatalf("action %q", s.ActionRequired)
	}
	if s.PhaseData["design"] != "" || s.HaltedArtifacts["design"] == "" {
		t.Fatalf("halted design artifact accepted: %v / %v", s.PhaseData, s.HaltedArtifacts)
	}
	if !slices.ContainsFunc(out.Effects, func(e Effect) bool {
		return e.Kind == EffectMarkArtifact && e.Path == "S1/specs/x/design.md" && e.Marker == DefaultMarker
	}) {
		t.Fatalf("no marker effect: %+v", out.Effects)
	}
	w.do(Approve{Slice: "S1", Role: "TL", Rationale: "design reviewed in full"})
	if s := w.slice("S1"); s.Status != Implementation || s.PhaseData["design"] == "" {
		t.Fatalf("after approval: %s %v", s.Status, s.PhaseData)
	}
	w.do(prop("task_planning", "S1", 0.97, artsFor("task_planning", "S1")...))
	w.halt(prop("implementation", "S1", 0.78), reason.BelowThreshold, ModeCCSFloor)
	s = w.slice("S1")
	if got := fmt.Sprintf("%.4f", *s.CCS); got != "0.4610" || *s.CCS != CCSOf(0.90, 0.88, 0.91, 0.82, 0.78) {
		t.Fatalf("ccs = %v", *s.CCS)
	}
	if !strings.HasPrefix(s.BlockReason, "CCS 0.461 < floor 0.65") {
		t.Fatalf("block reason %q", s.BlockReason)
	}
}

// Seed 004's gating example: spec 0.86 passes its 0.85 minimum within the
// 0.02 margin, so validation's minimum rises from 0.90 to 0.95 for the slice.
func TestDynamicGating(t *testing.T) {
	w := newWorld(t)
	w.drive("S1", Spec)
	out := w.do(prop("spec", "S1", 0.86, artsFor("spec", "S1")...))
	s := w.slice("S1")
	if got := s.RaisedMinimums["validation"]; got != 0.95 {
		t.Fatalf("validation minimum = %v, want 0.95", got)
	}
	if !slices.ContainsFunc(out.Events, func(e Event) bool { return e.Type == "minimum_raised" && e.Agent == "validation" }) {
		t.Fatalf("no minimum_raised event: %+v", out.Events)
	}
	// 0.93 passes the table's 0.90 but not the raised 0.95.
	w.halt(prop("validation", "S1", 0.93), reason.BelowThreshold, ModeBelowMinimum)
	if got := w.slice("S1").BlockReason; got != "Validation Agent confidence 0.93 < threshold 0.95" {
		t.Fatalf("block reason %q", got)
	}
	// Another slice without the raise passes with 0.93.
	w.drive("S2", Validation)
	w.do(prop("validation", "S2", 0.93))
}

func TestGatingMarginEdges(t *testing.T) {
	for _, c := range []struct {
		score  float64
		raised bool
	}{{0.85, true}, {0.86, true}, {0.87, true}, {0.8701, false}, {0.90, false}} {
		w := newWorld(t)
		w.drive("S", Spec)
		w.do(prop("spec", "S", c.score, artsFor("spec", "S")...))
		_, got := w.slice("S").RaisedMinimums["validation"]
		if got != c.raised {
			t.Errorf("spec %v: raised = %v, want %v", c.score, got, c.raised)
		}
	}
	// A raise is capped at 1.0.
	cfg := DefaultConfig()
	for i := range cfg.Agents {
		if cfg.Agents[i].Name == "qa" {
			cfg.Agents[i].MinConfidence = 0.98
		}
	}
	w := newWorld(t)
	w.cfg = cfg
	w.drive("S", Implementation)
	w.do(prop("refactor", "S", 0.97))
	w.do(prop("implementation", "S", 0.76))
	if got := w.slice("S").RaisedMinimums["qa"]; got != 1.0 {
		t.Fatalf("qa minimum raised to %v, want 1.0", got)
	}
}

// Every threshold and action of seed 004's table: one hundredth below the
// minimum halts with the table's action, routed and signed off as
// configured; exactly the minimum passes.
func TestAgentThresholdTable(t *testing.T) {
	cfg := DefaultConfig()
	for _, c := range []struct {
		agent, phase string
		route        []string
		signOff      []string
		marker       string
	}{
		{"discovery", Discovery, []string{"PO", "TL"}, []string{"TL"}, "DRAFT — AWAITING CLARIFICATION"},
		{"spec", Spec, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"validation", Validation, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"domain", Design, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"design", Design, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"task_planning", Implementation, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"implementation", Implementation, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"qa", Implementation, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"refactor", Implementation, []string{"TL"}, []string{"TL"}, DefaultMarker},
		{"security", CICD, []string{"TL", "Security"}, []string{"TL", "Security"}, DefaultMarker},
		{"knowledge", Design, []string{"TL"}, []string{"TL"}, DefaultMarker},
	} {
		t.Run(c.agent, func(t *testing.T) {
			ag, _ := cfg.Agent(c.agent)
			arts := artsFor(c.agent, "S")
			if len(arts) == 0 {
				arts = []Artifact{art(c.agent+"_report", "S/"+c.agent+".md")}
			}
			w := newWorld(t)
			w.drive("S", c.phase)
			out := w.halt(prop(c.agent, "S", round4(ag.MinConfidence-0.01), arts...), reason.BelowThreshold, ModeBelowMinimum)
			s := w.slice("S")
			if s.ActionRequired != ag.ActionIfBelow {
				t.Errorf("action %q, want %q", s.ActionRequired, ag.ActionIfBelow)
			}
			wantReason := fmt.Sprintf("%s confidence %s < threshold %s", agentTitle(c.agent), plain(round4(ag.MinConfidence-0.01)), plain(ag.MinConfidence))
			if s.BlockReason != wantReason {
				t.Errorf("reason %q, want %q", s.BlockReason, wantReason)
			}
			if !slices.Equal(s.SignOffsRequired, c.signOff) || !slices.Equal(s.OpenEscalation().RouteTo, c.route) {
				t.Errorf("sign-off %v route %v", s.SignOffsRequired, s.OpenEscalation().RouteTo)
			}
			if s.BlockedAtPhase != c.phase || s.LKGPhase != Previous(c.phase) || s.RollbackTimestamp == "" || len(s.UncertaintyFactors) == 0 {
				t.Errorf("block record: %q %q %q %v", s.BlockedAtPhase, s.LKGPhase, s.RollbackTimestamp, s.UncertaintyFactors)
			}
			if want := cfg.Downstream(c.agent); !slices.Equal(s.PausedAgents, want) {
				t.Errorf("paused %v, want %v", s.PausedAgents, want)
			}
			var kinds []string
			for _, e := range out.Effects {
				kinds = append(kinds, e.Kind)
				if e.Kind == EffectMarkArtifact && e.Marker != c.marker {
					t.Errorf("marker %q, want %q", e.Marker, c.marker)
				}
			}
			want := []string{EffectMarkArtifact, EffectWriteFile, EffectUpsertRow}
			if c.agent == "knowledge" { // and the steering-update proposal
				want = append(want, EffectWriteFile)
			}
			if !slices.Equal(kinds, want) {
				t.Errorf("effects %v", kinds)
			}
			// The halted artifact's hash is the marked one.
			if got := s.ArtifactHashes[arts[0].Path]; got != arts[0].MarkedSHA256 {
				t.Errorf("halted artifact hash %s, want the marked hash", got)
			}
			// Exactly the minimum passes.
			w2 := newWorld(t)
			w2.drive("S", c.phase)
			if c.agent == "implementation" { // the phase's gate first
				w2.do(prop("refactor", "S", 0.97))
			}
			w2.do(prop(c.agent, "S", ag.MinConfidence, arts...))
		})
	}
}

// devops and observability have no minimum in the seed: any score passes
// its gate (uncertainty factors are still required below 0.95).
func TestAgentsWithoutMinimum(t *testing.T) {
	w := newWorld(t)
	w.drive("S", CICD)
	w.reject(Proposal{Agent: "devops", Slice: "S", Score: 0.1}, reason.MissingUncertaintyFactors)
	w.do(prop("qa", "S", 0.97))
	w.do(prop("security", "S", 0.97))
	w.do(prop("devops", "S", 0.1))
	w.do(prop("observability", "S", 0.2))
	if got := w.slice("S").Status; got != Done {
		t.Fatalf("status %s", got)
	}
}

func TestUncertaintyFactorsRequired(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S"})
	e := w.reject(Proposal{Agent: "discovery", Slice: "S", Score: 0.94, Artifacts: artsFor("discovery", "S")}, reason.MissingUncertaintyFactors)
	if !strings.Contains(e.Message, "0.940") {
		t.Fatalf("message %q", e.Message)
	}
	w.do(Proposal{Agent: "discovery", Slice: "S", Score: 0.95, Artifacts: artsFor("discovery", "S")})
	w.reject(Proposal{Agent: "spec", Slice: "S", Score: 0.9, Uncertainty: []string{" "}, Artifacts: artsFor("spec", "S")}, reason.InvalidInput)
}

// Full lifecycle, and every forbidden transition is rejected with nothing
// changed.
func TestLifecycle(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Done)
	s := w.slice("S")
	if len(s.ConfidenceChain) != 12 || s.CCS == nil {
		t.Fatalf("chain %d", len(s.ConfidenceChain))
	}
	w.reject(prop("observability", "S", 0.97), reason.InvalidTransition)

	w.do(AddSlice{ID: "T"})
	// wrong agent for the phase
	w.reject(prop("spec", "T", 0.97, artsFor("spec", "T")...), reason.InvalidTransition)
	// skipping a phase
	p := prop("discovery", "T", 0.97, artsFor("discovery", "T")...)
	p.To = Validation
	e := w.reject(p, reason.InvalidTransition)
	if !strings.Contains(e.Message, "skipping SPEC") {
		t.Fatalf("message %q", e.Message)
	}
	// required artifact
	w.reject(prop("discovery", "T", 0.97), reason.InvalidTransition)
	// unknown agent, bad score, bad path, unknown slice
	w.reject(prop("wizard", "T", 0.97), reason.InvalidInput)
	w.reject(Proposal{Agent: "discovery", Slice: "T", Score: 1.2}, reason.InvalidInput)
	w.reject(Proposal{Agent: "discovery", Slice: "T", Score: math.NaN()}, reason.InvalidInput)
	for _, bad := range []string{"../x.md", "/etc/passwd", "a/../../b", "a//b", "./a", `a\b`, ".asdd/state/manifest.json",
		// issue 18 item 1: the custodian's own files are never artifacts
		".impl/journal.ndjson", ".asdd/config.yaml", ".asdd/escalations/ESC-1.md", "docs/agent-failure-log.md", ".workflow/.cycle/c.progress/a.md"} {
		w.reject(prop("discovery", "T", 0.97, art("intent", bad)), reason.InvalidInput)
	}
	w.reject(prop("discovery", "NOPE", 0.97), reason.NotFound)
	// staying in the phase is allowed with To = current
	p = prop("discovery", "T", 0.97, artsFor("discovery", "T")...)
	p.To = Discovery
	w.do(p)
	if got := w.slice("T").Status; got != Discovery {
		t.Fatalf("status %s", got)
	}
}

func TestPartialValidation(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Validation)
	p := prop("validation", "S", 0.96)
	p.To = Partial
	w.do(p)
	if got := w.slice("S").Status; got != Partial {
		t.Fatalf("status %s", got)
	}
	w.reject(prop("design", "S", 0.97, artsFor("design", "S")...), reason.InvalidTransition)
	w.do(prop("validation", "S", 0.96))
	if got := w.slice("S").Status; got != Design {
		t.Fatalf("status %s", got)
	}
}

func TestRetroSpecSlice(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "RETRO-AUTH-001", Type: TypeRetroSpec})
	s := w.slice("RETRO-AUTH-001")
	if s.Status != BehaviorCapture || s.ValidationStatus != "PENDING" || *s.RequirementsMissing != 0 {
		t.Fatalf("new retro slice %+v", s)
	}
	w.reject(prop("discovery", "RETRO-AUTH-001", 0.97, artsFor("discovery", "RETRO-AUTH-001")...), reason.InvalidTransition)
	w.do(prop("spec", "RETRO-AUTH-001", 0.97, artsFor("spec", "RETRO-AUTH-001")...))
	v, c, m := 14, 3, 2
	p := prop("validation", "RETRO-AUTH-001", 0.96)
	p.To = Partial
	p.Retro = &Retro{Validated: &v, Corrected: &c, Missing: &m}
	w.do(p)
	s = w.slice("RETRO-AUTH-001")
	if s.ValidationStatus != "PARTIAL" || *s.RequirementsValidated != 14 || *s.RequirementsCorrected != 3 || *s.RequirementsMissing != 2 || s.Status != Partial {
		t.Fatalf("retro counters %+v", s)
	}
	m = 0
	p = prop("validation", "RETRO-AUTH-001", 0.96)
	p.Retro = &Retro{Missing: &m}
	w.do(p)
	if s := w.slice("RETRO-AUTH-001"); s.ValidationStatus != "VALIDATED" || s.Status != Design {
		t.Fatalf("retro after validation: %s %s", s.ValidationStatus, s.Status)
	}
	w.drive("RETRO-AUTH-001", Done)
}

func TestQuickMode(t *testing.T) {
	w := newWorld(t)
	w.do(Quick{Description: "Fix typo in login header", Agent: "implementation", Artifacts: []Artifact{art("fix", "web/login.html")}})
	s := w.slice("QUICK-001")
	if s.Type != TypeQuickFix || s.Status != QuickFix || s.Description != "Fix typo in login header" || s.PhaseData["fix"] != "web/login.html" {
		t.Fatalf("quick slice %+v", s)
	}
	// No phase gates, but QA verifies it before it is DONE.
	p := prop("implementation", "QUICK-001", 0.8)
	p.To = Done
	w.reject(p, reason.GatePending)
	w.do(prop("qa", "QUICK-001", 0.9))
	w.do(p)
	if got := w.slice("QUICK-001").Status; got != Done {
		t.Fatalf("status %s", got)
	}
	w.reject(Quick{Description: "two\nlines"}, reason.InvalidInput)
	w.reject(Quick{Description: "  "}, reason.InvalidInput)
	w.do(Quick{Description: "another"})
	if w.m.Slice("QUICK-002") == nil {
		t.Fatal("no QUICK-002")
	}
	// A feature slice cannot skip to DONE.
	w.do(AddSlice{ID: "F"})
	p = prop("discovery", "F", 0.97, artsFor("discovery", "F")...)
	p.To = Done
	w.reject(p, reason.InvalidTransition)
}

func TestLocks(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S"})
	w.do(LockSlice{Slice: "S", Holder: "spec", TTL: 5 * time.Minute, Reason: "editing"})
	e := w.reject(prop("discovery", "S", 0.97, artsFor("discovery", "S")...), reason.SliceLocked)
	if e.Details["holder"] != "spec" {
		t.Fatalf("details %v", e.Details)
	}
	w.reject(LockSlice{Slice: "S", Holder: "design"}, reason.SliceLocked)
	w.reject(UnlockSlice{Slice: "S", Holder: "design"}, reason.SliceLocked)
	w.reject(UnlockSlice{Slice: "S", Force: true, Role: "CEO"}, reason.InvalidInput)
	w.do(LockSlice{Slice: "S", Holder: "spec", TTL: 5 * time.Minute}) // renew
	w.do(UnlockSlice{Slice: "S", Holder: "spec"})
	w.reject(UnlockSlice{Slice: "S", Holder: "spec"}, reason.NotFound)
	// The holder may propose; forcing by a role frees it.
	w.do(LockSlice{Slice: "S", Holder: "discovery_agent"})
	w.do(prop("discovery", "S", 0.97, artsFor("discovery", "S")...))
	w.do(UnlockSlice{Slice: "S", Force: true, Role: "TL"})
	// Expired leases free themselves.
	w.do(LockSlice{Slice: "S", Holder: "design", TTL: 90 * time.Second})
	w.reject(prop("spec", "S", 0.97, artsFor("spec", "S")...), reason.SliceLocked) // +1 min: still held
	out := w.do(prop("spec", "S", 0.97, artsFor("spec", "S")...))                  // +2 min: expired
	if w.slice("S").Lock != nil || out.Events[0].Type != "lock_expired" {
		t.Fatalf("lease not expired: %+v %+v", w.slice("S").Lock, out.Events)
	}
	w.reject(LockSlice{Slice: "S", Holder: " "}, reason.InvalidInput)
	w.reject(LockSlice{Slice: "S", Holder: "x", TTL: -time.Second}, reason.InvalidInput)
}

// The refinement loop: the same agent submitting the same phase a third
// time force-halts, even after humans approved re-runs.
func TestRefinementLoop(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Spec)
	w.halt(prop("spec", "S", 0.80, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "clarified the intent", Action: ActionRerun})
	w.halt(prop("spec", "S", 0.82, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "try once more", Action: ActionRerun})
	w.halt(prop("spec", "S", 0.97, artsFor("spec", "S")...), reason.Halted, ModeRefinementLoop)
	s := w.slice("S")
	if s.BlockReason != "the spec agent submitted SPEC of S for the 3rd time" || s.Attempts["spec:SPEC"] != 3 {
		t.Fatalf("loop: %q %v", s.BlockReason, s.Attempts)
	}
	// Resolving the loop resets the counter; the next attempt passes.
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "requirements rewritten by hand", Action: ActionRerun, RootCause: "ambiguous intent"})
	w.do(prop("spec", "S", 0.97, artsFor("spec", "S")...))
	s = w.slice("S")
	if s.Status != Validation {
		t.Fatalf("status %s", s.Status)
	}
	// One current entry per agent; the earlier attempts are history.
	var attempts, history []int
	for _, e := range s.ConfidenceChain {
		if e.Agent == "spec" {
			attempts = append(attempts, e.Attempt)
		}
	}
	for _, e := range s.ChainHistory {
		if e.Agent == "spec" {
			history = append(history, e.Attempt)
		}
	}
	if !slices.Equal(attempts, []int{4}) || !slices.Equal(history, []int{1, 2, 3}) {
		t.Fatalf("spec attempts %v, history %v", attempts, history)
	}
	if e := s.Escalations[len(s.Escalations)-1]; e.RootCause != "ambiguous intent" || e.Status != EscalationResolved || e.TimeToResolve != "1m0s" {
		t.Fatalf("escalation %+v", e)
	}
}

// Two consecutive agents below their minimum: a low-confidence cascade.
func TestLowConfidenceCascade(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Spec)
	w.halt(prop("spec", "S", 0.84, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
	w.do(Approve{Slice: "S", Role: "TL", Rationale: "ambiguities acceptable for now"})
	if got := w.slice("S").Status; got != Validation {
		t.Fatalf("status %s", got)
	}
	w.halt(prop("validation", "S", 0.89), reason.BelowThreshold, ModeLowCascade)
	s := w.slice("S")
	if !strings.HasPrefix(s.BlockReason, "2 consecutive agents below threshold (spec, validation)") || s.ActionRequired != "Halt pipeline; full human review of phase" {
		t.Fatalf("cascade: %q / %q", s.BlockReason, s.ActionRequired)
	}
	// return to SPEC: later entries superseded, CCS recomputed without them.
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "redo the spec", Action: ActionReturn, ReturnTo: Spec})
	s = w.slice("S")
	if s.Status != Spec || *s.CCS != 0.97 {
		t.Fatalf("after return: %s ccs %v", s.Status, *s.CCS)
	}
	for _, e := range s.ConfidenceChain[1:] {
		if e.Outcome != OutcomeSuperseded {
			t.Fatalf("entry %s %s not superseded", e.Agent, e.Outcome)
		}
	}
	w.do(prop("spec", "S", 0.97, artsFor("spec", "S")...))
	w.do(prop("validation", "S", 0.97))
}

func TestResolveRules(t *testing.T) {
	w := newWorld(t)
	w.drive("S", CICD)
	w.reject(Resolve{Slice: "S", Role: "TL", Rationale: "x"}, reason.InvalidTransition) // not halted
	w.halt(prop("security", "S", 0.94, art("scan", "S/scan.md")), reason.BelowThreshold, ModeBelowMinimum)
	w.reject(Resolve{Slice: "S", Role: "TL"}, reason.InvalidInput)                      // no rationale
	w.reject(Resolve{Slice: "S", Role: "", Rationale: "x"}, reason.InvalidInput)        // no role
	w.reject(Resolve{Slice: "S", Role: "PO", Rationale: "x"}, reason.InvalidTransition) // not this halt's role
	w.reject(Resolve{Slice: "S", Role: "TL", Rationale: "x", Action: "magic"}, reason.InvalidInput)
	w.reject(Resolve{Slice: "S", Role: "TL", Rationale: "x", Action: ActionReturn, ReturnTo: Observability}, reason.InvalidTransition)
	w.reject(Resolve{Slice: "S", Role: "TL", Rationale: "x", Action: ActionReturn, ReturnTo: BehaviorCapture}, reason.InvalidTransition)
	w.reject(prop("devops", "S", 0.97), reason.Halted) // paused
	// TL + Security: the halt lifts at the second sign-off.
	out := w.do(Resolve{Slice: "S", Role: "TL", Rationale: "scan findings are false positives", Action: ActionResume})
	if w.slice("S").Status != Blocked || out.Events[0].Type != "sign_off_recorded" {
		t.Fatalf("lifted after one of two sign-offs: %s", w.slice("S").Status)
	}
	w.do(Resolve{Slice: "S", Role: "Security", By: "ana", Rationale: "confirmed false positives", Action: ActionResume})
	s := w.slice("S")
	if s.Status != CICD || s.PhaseData["scan"] != "S/scan.md" {
		t.Fatalf("after both sign-offs: %s %v", s.Status, s.PhaseData)
	}
	e := s.Escalations[0]
	if e.ResolvedBy != "TL + Security (ana)" || e.Status != EscalationResolved {
		t.Fatalf("escalation %+v", e)
	}
	w.reject(Approve{Slice: "S", Role: "TL", Rationale: "x"}, reason.InvalidTransition)
}

func TestConcurrentProposals(t *testing.T) {
	t.Run("disjoint changes merge", func(t *testing.T) {
		w := newWorld(t)
		w.drive("S", Design)
		base := w.m.Revision
		// design completes DESIGN; domain, based on the same revision, still merges.
		w.do(prop("design", "S", 0.97, artsFor("design", "S")...))
		p := prop("domain", "S", 0.97, artsFor("domain", "S")...)
		p.BaseRevision = base
		w.do(p)
		s := w.slice("S")
		if s.Status != Implementation || s.PhaseData["domain_model"] == "" || s.PhaseData["design"] == "" {
			t.Fatalf("merge: %s %v", s.Status, s.PhaseData)
		}
		// without a base revision the late domain proposal is out of phase
		w.reject(prop("domain", "S", 0.97, artsFor("domain", "S")...), reason.InvalidTransition)
	})
	t.Run("steering precedence settles a conflict", func(t *testing.T) {
		w := newWorld(t)
		w.drive("S", Design)
		base := w.m.Revision
		w.do(prop("domain", "S", 0.97, art("domain_model", "S/model-by-domain.md")))
		// design also wrote the domain model: domain has precedence, design's version is dropped.
		p := prop("design", "S", 0.97, art("design", "S/design.md"), art("domain_model", "S/model-by-design.md"))
		p.BaseRevision = base
		w.do(p)
		s := w.slice("S")
		if s.PhaseData["domain_model"] != "S/model-by-domain.md" || s.PhaseData["design"] != "S/design.md" || len(s.DissentNotices) != 1 {
			t.Fatalf("precedence: %v, %d dissent", s.PhaseData, len(s.DissentNotices))
		}
		if !strings.Contains(string(s.DissentNotices[0]), `"agent":"design"`) {
			t.Fatalf("dissent %s", s.DissentNotices[0])
		}
	})
	t.Run("winner by precedence overrides", func(t *testing.T) {
		w := newWorld(t)
		w.drive("S", Design)
		base := w.m.Revision
		w.do(prop("design", "S", 0.97, art("design", "S/design.md"), art("domain_model", "S/model-by-design.md")))
		w.do(AddTask{Slice: "S", ID: "T1", Wave: 1}) // unrelated commit in between
		p := prop("domain", "S", 0.97, art("domain_model", "S/model-by-domain.md"))
		p.BaseRevision = base
		w.do(p)
		if got := w.slice("S").PhaseData["domain_model"]; got != "S/model-by-domain.md" {
			t.Fatalf("domain_model %s", got)
		}
	})
	t.Run("no rule: escalated with the conflict diff", func(t *testing.T) {
		w := newWorld(t)
		w.drive("S", Design)
		base := w.m.Revision
		w.do(prop("knowledge", "S", 0.97, art("glossary", "S/glossary-k.md")))
		p := prop("domain", "S", 0.97, art("domain_model", "S/m.md"), art("glossary", "S/glossary-d.md"))
		p.BaseRevision = base
		out := w.halt(p, reason.Conflict, ModeConflict)
		s := w.slice("S")
		e := s.OpenEscalation()
		if len(e.Conflict) != 1 || e.Conflict[0].Field != "phase_data.glossary" || e.Conflict[0].Theirs.Agent != "knowledge" || e.Conflict[0].Ours.Value != "S/glossary-d.md" {
			t.Fatalf("conflict diff %+v", e.Conflict)
		}
		if !strings.Contains(out.Effects[0].Content, "## Conflict diff") {
			t.Fatalf("notice without the diff:\n%s", out.Effects[0].Content)
		}
		// TL arbitrates for the halted proposal.
		w.do(Approve{Slice: "S", Role: "TL", Rationale: "domain's glossary is right"})
		if got := w.slice("S").PhaseData["glossary"]; got != "S/glossary-d.md" {
			t.Fatalf("glossary %s", got)
		}
	})
	t.Run("identical change is no conflict", func(t *testing.T) {
		w := newWorld(t)
		w.drive("S", Design)
		base := w.m.Revision
		w.do(prop("knowledge", "S", 0.97, art("glossary", "S/g.md")))
		p := prop("domain", "S", 0.97, art("domain_model", "S/m.md"), art("glossary", "S/g.md"))
		p.BaseRevision = base
		w.do(p)
	})
	t.Run("base ahead of the manifest", func(t *testing.T) {
		w := newWorld(t)
		w.do(AddSlice{ID: "S"})
		p := prop("discovery", "S", 0.97, artsFor("discovery", "S")...)
		p.BaseRevision = 99
		w.reject(p, reason.InvalidInput)
	})
}

func TestConsistencyAndDrift(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Validation)
	intent, req := "S/specs/x/intent.md", "S/specs/x/requirements.md"
	obs := map[string]string{intent: h(intent), req: ""}
	p := prop("validation", "S", 0.97)
	p.Observed = obs
	e := w.reject(p, reason.StateInconsistency)
	if e.Details["path"] != req {
		t.Fatalf("details %v", e.Details)
	}
	obs[req] = h("edited by hand")
	w.halt(p, reason.StateDrift, ModeDrift)
	s := w.slice("S")
	if !strings.Contains(s.BlockReason, req) || len(s.ConfidenceChain) != 2 {
		t.Fatalf("drift: %q, chain %d", s.BlockReason, len(s.ConfidenceChain))
	}
	// Approving records the new hash; the next proposal passes.
	w.do(Approve{Slice: "S", Role: "TL", Rationale: "hand edit reviewed", Hashes: map[string]string{req: h("edited by hand")}})
	if got := w.slice("S").ArtifactHashes[req]; got != h("edited by hand") {
		t.Fatalf("hash %s", got)
	}
	w.do(p)
	// Re-proposing a changed artifact is not drift.
	w.drive("T", Validation)
	p = prop("validation", "T", 0.97)
	p.Observed = map[string]string{"T/specs/x/requirements.md": h("v2")}
	w.halt(p, reason.StateDrift, ModeDrift)
	w.do(Resolve{Slice: "T", Role: "TL", Rationale: "spec will re-propose", Action: ActionReturn, ReturnTo: Spec})
	a := art("requirements", "T/specs/x/requirements.md")
	a.SHA256 = h("v2")
	p = prop("spec", "T", 0.97, a)
	p.Observed = map[string]string{"T/specs/x/requirements.md": h("v2"), "T/specs/x/intent.md": h("T/specs/x/intent.md")}
	w.do(p)
	// FlagDrift (used by `custodian check`) halts too.
	w.halt(FlagDrift{Slice: "T", Paths: map[string]string{"T/specs/x/intent.md": h("x")}}, reason.StateDrift, ModeDrift)
	w.reject(FlagDrift{Slice: "T", Paths: map[string]string{"T/specs/x/intent.md": h("x")}}, reason.Halted)
}

func TestTasksAndWaves(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Implementation)
	w.do(AddTask{Slice: "S", ID: "migrations", Wave: 1})
	w.do(AddTask{Slice: "S", ID: "models", Wave: 1})
	w.do(AddTask{Slice: "S", ID: "repos", Wave: 2, DependsOn: []string{"models"}})
	w.do(AddTask{Slice: "S", ID: "services", Wave: 2, DependsOn: []string{"repos"}})
	w.reject(AddTask{Slice: "S", ID: "x", Wave: 1, DependsOn: []string{"repos"}}, reason.InvalidInput) // later wave
	w.reject(AddTask{Slice: "S", ID: "y", Wave: 1, DependsOn: []string{"ghost"}}, reason.InvalidInput)
	w.reject(AddTask{Slice: "S", ID: "models", Wave: 1}, reason.InvalidInput)
	w.reject(AddTask{Slice: "S", ID: "z", Wave: 0}, reason.InvalidInput)
	ready := func() []string {
		var ids []string
		for _, tk := range Ready(w.slice("S")) {
			ids = append(ids, tk.ID)
		}
		return ids
	}
	if got := ready(); !slices.Equal(got, []string{"migrations", "models"}) {
		t.Fatalf("ready %v", got)
	}
	w.do(CompleteTask{Slice: "S", ID: "models"})
	if got := ready(); !slices.Equal(got, []string{"migrations"}) {
		t.Fatalf("wave 2 started before wave 1 was complete: %v", got)
	}
	w.reject(CompleteTask{Slice: "S", ID: "repos"}, reason.InvalidTransition)
	w.reject(CompleteTask{Slice: "S", ID: "models"}, reason.InvalidTransition)
	w.reject(CompleteTask{Slice: "S", ID: "ghost"}, reason.NotFound)
	w.do(CompleteTask{Slice: "S", ID: "migrations"})
	if got := ready(); !slices.Equal(got, []string{"repos"}) {
		t.Fatalf("ready %v", got)
	}
	w.do(CompleteTask{Slice: "S", ID: "repos"})
	w.do(CompleteTask{Slice: "S", ID: "services"})
	if got := ready(); len(got) != 0 {
		t.Fatalf("ready %v", got)
	}
}

func TestHeartbeats(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "SLICE-003"})
	wave, done, left := 2, 7, 4
	w.do(Beat{Agent: "implementation", Status: HeartbeatActive, Slice: "SLICE-003", Wave: &wave, Completed: &done, Remaining: &left})
	hb := w.m.AgentHeartbeats["implementation_agent"]
	if hb.Status != "ACTIVE" || hb.CurrentSlice != "SLICE-003" || *hb.CurrentWave != 2 || *hb.TasksCompleted != 7 || *hb.TasksRemaining != 4 || hb.LastExecution != Timestamp(w.now) {
		t.Fatalf("heartbeat %+v", hb)
	}
	w.reject(Beat{Agent: "ghost"}, reason.InvalidInput)
	w.reject(Beat{Agent: "spec", Slice: "NOPE"}, reason.NotFound)
	w.reject(Beat{Agent: "spec", Status: "half asleep"}, reason.InvalidInput) // a word, in any case
	neg := -1
	w.reject(Beat{Agent: "spec", Wave: &neg}, reason.InvalidInput)
}

func TestNeedsHumanReview(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S"})
	w.do(AddSlice{ID: "R"})
	m := w.m.Clone()
	m.Slice("R").NeedsHumanReview = []string{"status", "confidence_chain"}
	w.m = m
	// the whole pipeline refuses to run
	w.reject(prop("discovery", "S", 0.97, artsFor("discovery", "S")...), reason.NeedsReview)
	w.reject(Approve{Slice: "S", Role: "TL", Rationale: "x"}, reason.InvalidTransition)
	w.do(Approve{Slice: "R", Role: "TL", Rationale: "checked against git history"})
	w.do(prop("discovery", "S", 0.97, artsFor("discovery", "S")...))
	m = w.m.Clone()
	m.ProjectContext.NeedsHumanReview = []string{"current_sprint"}
	w.m = m
	w.reject(prop("spec", "S", 0.97, artsFor("spec", "S")...), reason.NeedsReview)
	w.do(ClearReview{Role: "TL", Rationale: "sprint confirmed"})
	w.do(prop("spec", "S", 0.97, artsFor("spec", "S")...))
}

func TestGlobalConfidence(t *testing.T) {
	w := newWorld(t)
	if w.m.ProjectContext.GlobalConfidenceScore != nil {
		t.Fatal("global score with no slices")
	}
	w.drive("A", Spec) // ccs 0.97
	w.do(AddSlice{ID: "B"})
	w.do(prop("discovery", "B", 0.87, artsFor("discovery", "B")...)) // ccs 0.87
	if got := *w.m.ProjectContext.GlobalConfidenceScore; got != 0.92 {
		t.Fatalf("global %v, want 0.92", got)
	}
	w.drive("A", Done) // DONE slices are not active
	if got := *w.m.ProjectContext.GlobalConfidenceScore; got != 0.87 {
		t.Fatalf("global %v, want 0.87", got)
	}
}

func TestEscalationFiles(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Implementation)
	out := w.halt(prop("implementation", "S", 0.71, art("code", "S/impl.md")), reason.BelowThreshold, ModeBelowMinimum)
	var notice, row Effect
	for _, e := range out.Effects {
		switch e.Kind {
		case EffectWriteFile:
			notice = e
		case EffectUpsertRow:
			row = e
		}
	}
	s := w.slice("S")
	if notice.Path != ".asdd/escalations/"+s.EscalationID+".md" {
		t.Fatalf("notice path %s", notice.Path)
	}
	for _, want := range []string{"Agent below minimum confidence", "Confidence score: 0.710", "S/impl.md", "Implementation Agent confidence 0.71 < threshold 0.75", "Routed to: TL"} {
		if !strings.Contains(notice.Content, want) {
			t.Errorf("notice lacks %q:\n%s", want, notice.Content)
		}
	}
	if row.Path != FailureLogPath || !strings.Contains(row.Header, "| Date | Agent | Phase | Failure Mode | Confidence Score | Resolution | Time to Resolve | Root Cause |") {
		t.Fatalf("log effect %+v", row)
	}
	at := s.RollbackTimestamp
	wantRow := "| " + at + " | implementation | IMPLEMENTATION | Agent below minimum confidence | 0.710 | open — routed to TL | — | Implementation Agent confidence 0.71 < threshold 0.75 |"
	if row.Content != wantRow {
		t.Fatalf("row\n%s\nwant\n%s", row.Content, wantRow)
	}
	out = w.do(Resolve{Slice: "S", Role: "TL", By: "kim", Rationale: "NFR added", RootCause: "missing NFR", Action: ActionRerun})
	for _, e := range out.Effects {
		if e.Kind == EffectUpsertRow {
			wantRow = "| " + at + " | implementation | IMPLEMENTATION | Agent below minimum confidence | 0.710 | revised run of implementation approved by TL (kim): NFR added | 1m0s | missing NFR |"
			if e.Content != wantRow {
				t.Fatalf("resolved row\n%s\nwant\n%s", e.Content, wantRow)
			}
		}
	}
	if len(AllEffects(w.m, w.cfg)) != 2 {
		t.Fatalf("AllEffects: %v", AllEffects(w.m, w.cfg))
	}
}

// Seed 004: agent timeout — retry once, then escalate (the slice halts).
func TestAgentTimeout(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Implementation)
	w.do(Beat{Agent: "implementation", Status: HeartbeatActive, Slice: "S"})
	w.reject(AgentTimeout{Agent: "implementation"}, reason.InvalidTransition) // 1 minute: not stale
	w.now = w.now.Add(20 * time.Minute)
	w.do(AgentTimeout{Agent: "implementation"})
	hb := w.m.AgentHeartbeats["implementation_agent"]
	if hb.RetryRequestedAt == "" || hb.EscalatedAt != "" {
		t.Fatalf("after first timeout: %+v", hb)
	}
	w.reject(AgentTimeout{Agent: "implementation"}, reason.InvalidTransition) // the retry has its own timeout
	w.now = w.now.Add(20 * time.Minute)
	w.halt(AgentTimeout{Agent: "implementation"}, reason.Halted, ModeAgentTimeout)
	if hb := w.m.AgentHeartbeats["implementation_agent"]; hb.EscalatedAt == "" || Stale(hb, time.Minute, w.now.Add(time.Hour)) {
		t.Fatalf("after escalation: %+v", hb)
	}
	w.reject(AgentTimeout{Agent: "implementation"}, reason.InvalidTransition)
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "agent restarted"})
	w.do(Beat{Agent: "implementation", Status: HeartbeatActive, Slice: "S"})
	if hb := w.m.AgentHeartbeats["implementation_agent"]; hb.EscalatedAt != "" || hb.RetryRequestedAt != "" {
		t.Fatalf("a new heartbeat clears the timeout marks: %+v", hb)
	}
}

// The failure modes agents detect themselves (seed 004's table): each
// halts the slice with the seed's response.
func TestReportedFailureModes(t *testing.T) {
	for mode, r := range Reportable {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t)
			w.drive("S", Design)
			w.do(ReportFailure{Agent: r.Detector, Slice: "S", Mode: mode, Reason: r.Detection, Flagged: []string{"REQ-004"},
				Artifacts: []Artifact{art("design", "S/design.md"), art("domain_model", "S/model.md")}})
			s := w.slice("S")
			e := s.OpenEscalation()
			if s.Status != Blocked || s.FailureMode != mode || s.ActionRequired != r.Response || e == nil ||
				!slices.Equal(e.Artifacts, []string{"S/design.md", "S/model.md"}) || !slices.Equal(s.UncertaintyFactors, []string{"flagged: REQ-004"}) {
				t.Fatalf("after report: %+v", s)
			}
			w.reject(ReportFailure{Agent: r.Detector, Slice: "S", Mode: mode, Reason: "again"}, reason.Halted)
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "section removed", Action: ActionReturn, ReturnTo: Spec})
		})
	}
	w := newWorld(t)
	w.do(AddSlice{ID: "S"})
	w.reject(ReportFailure{Agent: "validation", Slice: "S", Mode: ModeCCSFloor, Reason: "x"}, reason.InvalidInput)
	w.reject(ReportFailure{Agent: "validation", Slice: "S", Mode: ModeHallucinatedSpec}, reason.InvalidInput)
}

// Assumptions-first discovery: the discovery agent records its
// assumptions; PO/TL correct only the wrong ones.
func TestAssumptionsFirst(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S"})
	p := prop("discovery", "S", 0.97, artsFor("discovery", "S")...)
	p.Assumptions = []string{"We use PostgreSQL", "Sessions are JWT"}
	w.do(p)
	w.reject(CorrectAssumption{Slice: "S", Index: 3, Role: "PO", Correction: "x"}, reason.NotFound)
	w.reject(CorrectAssumption{Slice: "S", Index: 2, Role: "PO"}, reason.InvalidInput)
	w.do(CorrectAssumption{Slice: "S", Index: 2, Role: "PO", Correction: "Sessions are server-side"})
	as := w.slice("S").Assumptions
	if len(as) != 2 || as[0].Status != AssumptionAssumed || as[1].Status != AssumptionCorrected || as[1].Correction != "Sessions are server-side" {
		t.Fatalf("assumptions %+v", as)
	}
	w.drive("S", Implementation)
	w.do(AddTask{Slice: "S", ID: "T1", Wave: 1, Requirement: "REQ-001"})
	if got := w.slice("S").Tasks[0].Requirement; got != "REQ-001" {
		t.Fatalf("requirement %q", got)
	}
}

// Downstream agents working on a halted slice are paused, and idle again
// when the halt lifts.
func TestDownstreamHeartbeatsPaused(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Spec)
	w.do(Beat{Agent: "design", Status: HeartbeatActive, Slice: "S"})
	w.do(Beat{Agent: "qa", Status: HeartbeatActive})
	w.halt(prop("spec", "S", 0.5, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
	if got := w.m.AgentHeartbeats["design_agent"].Status; got != HeartbeatPaused {
		t.Fatalf("design agent %s, want PAUSED", got)
	}
	if got := w.m.AgentHeartbeats["qa_agent"].Status; got != HeartbeatActive {
		t.Fatalf("qa agent (not on the slice) %s", got)
	}
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "rerun"})
	if got := w.m.AgentHeartbeats["design_agent"].Status; got != HeartbeatIdle {
		t.Fatalf("design agent %s after resolution, want IDLE", got)
	}
}

// A slice cannot be called DONE while an artifact it names has no recorded
// hash (found by the property test, seed 17501953702109109257: a halted
// artifact restored by a resume had lost its hash).
func TestDoneNeedsEveryArtifactHashed(t *testing.T) {
	s := &Slice{SliceID: "S1", PhaseData: map[string]string{"intent": "a/intent.md", "glossary": "a/glossary.md"},
		ArtifactHashes: map[string]string{"a/intent.md": "sha256:" + strings.Repeat("0", 64)}}
	err := unhashedArtifacts(s)
	if reason.CodeOf(err) != reason.StateInconsistency || !strings.Contains(err.Error(), "a/glossary.md") {
		t.Fatalf("got %v, want STATE_INCONSISTENCY naming a/glossary.md", err)
	}
	s.ArtifactHashes["a/glossary.md"] = "sha256:" + strings.Repeat("1", 64)
	if err := unhashedArtifacts(s); err != nil {
		t.Fatal(err)
	}
}
