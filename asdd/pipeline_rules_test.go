package asdd

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// The pipeline's rules hold in the domain, whichever door a
// proposal comes through. One table test per rule.

// 1. Quick mode: QA's verdict gates a quick fix, and the boundary keeps
// architectural artifacts out of it.
func TestQuickFixGatedByQA(t *testing.T) {
	done := func(agent string, score float64) Proposal {
		p := prop(agent, "QUICK-001", score)
		p.To = Done
		return p
	}
	for _, c := range []struct {
		name   string
		steps  []Proposal
		last   Proposal
		code   reason.Code // rejection, or the halt's verdict
		halted bool
		status string
	}{
		{"QA below its minimum halts", []Proposal{prop("implementation", "QUICK-001", 0.9)}, prop("qa", "QUICK-001", 0.30), reason.BelowThreshold, true, Blocked},
		{"DONE at 0.30 by QA halts", []Proposal{prop("implementation", "QUICK-001", 0.9)}, done("qa", 0.30), reason.BelowThreshold, true, Blocked},
		{"implementation below its minimum halts", nil, prop("implementation", "QUICK-001", 0.5), reason.BelowThreshold, true, Blocked},
		{"DONE without QA is refused", []Proposal{prop("implementation", "QUICK-001", 0.9)}, done("implementation", 0.9), reason.GatePending, false, QuickFix},
		{"DONE after QA passed", []Proposal{prop("implementation", "QUICK-001", 0.9), prop("qa", "QUICK-001", 0.9)}, done("implementation", 0.9), "", false, Done},
		{"QA closes it itself", []Proposal{prop("implementation", "QUICK-001", 0.9)}, done("qa", 0.9), "", false, Done},
		{"an agent outside quick mode", nil, prop("design", "QUICK-001", 0.97), reason.InvalidTransition, false, QuickFix},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.do(Quick{Description: "Fix typo in login header", Agent: "implementation", Artifacts: []Artifact{art("fix", "web/login.html")}})
			for _, p := range c.steps {
				w.do(p)
			}
			switch {
			case c.halted:
				out := w.halt(c.last, c.code, ModeBelowMinimum)
				s := w.slice("QUICK-001")
				if s.BlockedAtPhase != QuickFix || s.LKGPhase != QuickFix || s.OpenEscalation() == nil {
					t.Fatalf("block record %q %q %v", s.BlockedAtPhase, s.LKGPhase, s.OpenEscalation())
				}
				if !slices.ContainsFunc(out.Effects, func(e Effect) bool { return e.Kind == EffectUpsertRow && e.Path == FailureLogPath }) {
					t.Fatalf("no failure-log row: %+v", out.Effects)
				}
				// A human decides; a revised run returns it to QUICK_FIX.
				w.do(Resolve{Slice: "QUICK-001", Role: "TL", Rationale: "tests fixed", Action: ActionRerun})
				if got := w.slice("QUICK-001").Status; got != QuickFix {
					t.Fatalf("after rerun: %s", got)
				}
			case c.code != "":
				w.reject(c.last, c.code)
			default:
				w.do(c.last)
			}
			if !c.halted {
				if got := w.slice("QUICK-001").Status; got != c.status {
					t.Fatalf("status %s, want %s", got, c.status)
				}
			}
		})
	}
}

func TestQuickFixBoundary(t *testing.T) {
	custom := DefaultConfig()
	custom.Quick.Boundary = QuickBoundary{AllowedArtifacts: []string{"fix", "tests"}, AllowedPaths: []string{"web/**", "tests/**"}}
	for _, c := range []struct {
		name string
		cfg  *Config
		art  Artifact
		ok   bool
	}{
		{"a code fix", nil, art("fix", "web/login.html"), true},
		{"a domain model by kind", nil, art("domain_model", "src/model.md"), false},
		{"a design by kind", nil, art("design", "web/design.md"), false},
		{"requirements by kind", nil, art("requirements", "web/req.md"), false},
		{"the architecture docs by path", nil, art("notes", "docs/architecture/domain-model.md"), false},
		{"a spec by path", nil, art("fix", ".asdd/specs/auth/requirements.md"), false},
		{"allowed kind and path", custom, art("tests", "tests/login_test.go"), true},
		{"a kind not allowed", custom, art("config", "web/app.yaml"), false},
		{"a path not allowed", custom, art("fix", "server/main.go"), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			if c.cfg != nil {
				w.cfg = c.cfg
			}
			q := Quick{Description: "a fix", Agent: "implementation", Artifacts: []Artifact{c.art}}
			if !c.ok {
				e := w.reject(q, reason.OutsideQuickBoundary)
				if e.Details["path"] != c.art.Path || !strings.Contains(e.Message, "quick.boundary") {
					t.Fatalf("refusal %v %v", e.Message, e.Details)
				}
				// The same through a proposal on a quick slice.
				w.do(Quick{Description: "a fix", Agent: "implementation"})
				w.reject(prop("implementation", "QUICK-001", 0.97, c.art), reason.OutsideQuickBoundary)
				return
			}
			w.do(q)
			w.do(prop("implementation", "QUICK-001", 0.97, c.art))
		})
	}
	// The boundary is configurable in .asdd/config.yaml, globs checked.
	cfg, err := ParseConfig([]byte("version: 1\nquick:\n  boundary:\n    allowed_paths: [\"web/**\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Quick.Boundary.AllowedPaths, []string{"web/**"}) || len(cfg.Quick.Boundary.ExcludedArtifacts) != 0 || !slices.Equal(cfg.Quick.Gates, []string{"qa"}) {
		t.Fatalf("parsed %+v", cfg.Quick)
	}
	if _, err := ParseConfig([]byte("version: 1\nquick:\n  boundary:\n    excluded_paths: [\"web/[\"]\n")); reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "quick.boundary.excluded_paths[0]") {
		t.Fatalf("bad glob: %v", err)
	}
	if _, err := ParseConfig([]byte("version: 1\nquick:\n  gates: [design]\n")); err == nil || !strings.Contains(err.Error(), "quick.gates[0]") {
		t.Fatalf("gate outside quick mode: %v", err)
	}
}

// 2. A score below the agent's minimum halts the slice even without
// uncertainty factors; the missing factors are a second finding. A result
// says whether anything was committed.
func TestBelowMinimumWithoutFactors(t *testing.T) {
	for _, c := range []struct {
		name    string
		agent   string
		phase   string
		score   float64
		factors []string
		result  string
		code    reason.Code
		finding bool
	}{
		{"below minimum, no factors: halted", "implementation", Implementation, 0.40, nil, ResultHalted, reason.BelowThreshold, true},
		{"below minimum, factors: halted", "implementation", Implementation, 0.40, []string{"x"}, ResultHalted, reason.BelowThreshold, false},
		{"spec below minimum, no factors", "spec", Spec, 0.60, nil, ResultHalted, reason.BelowThreshold, true},
		{"passing, no factors: rejected", "spec", Spec, 0.90, nil, ResultRejected, reason.MissingUncertaintyFactors, false},
		{"passing with factors: accepted", "spec", Spec, 0.90, []string{"x"}, ResultAccepted, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.drive("S", c.phase)
			p := Proposal{Agent: c.agent, Slice: "S", Score: c.score, Artifacts: artsFor(c.agent, "S"), Uncertainty: c.factors}
			switch c.result {
			case ResultRejected:
				w.reject(p, c.code)
				return
			case ResultAccepted:
				if got := w.do(p).Result(); got != ResultAccepted {
					t.Fatalf("result %s", got)
				}
				return
			}
			out := w.halt(p, c.code, ModeBelowMinimum)
			if out.Result() != ResultHalted {
				t.Fatalf("result %s", out.Result())
			}
			s := w.slice("S")
			e := s.OpenEscalation()
			hasFinding := len(e.Findings) == 1 && strings.HasPrefix(e.Findings[0], "MISSING_UNCERTAINTY_FACTORS: ")
			if hasFinding != c.finding {
				t.Fatalf("findings %v", e.Findings)
			}
			if c.finding && !strings.Contains(NoticeText(s, e), "## Further findings") {
				t.Fatalf("notice without the finding:\n%s", NoticeText(s, e))
			}
			if s.Status != Blocked || s.Attempts[c.agent+":"+c.phase] != 1 {
				t.Fatalf("status %s attempts %v", s.Status, s.Attempts)
			}
		})
	}
	// The refinement-loop limit is reached by such proposals too.
	w := newWorld(t)
	w.drive("S", Spec)
	for i := range 2 {
		w.halt(Proposal{Agent: "spec", Slice: "S", Score: 0.5, Artifacts: artsFor("spec", "S")}, reason.BelowThreshold, ModeBelowMinimum)
		w.do(Resolve{Slice: "S", Role: "TL", Rationale: "again " + string(rune('a'+i))})
	}
	w.halt(Proposal{Agent: "spec", Slice: "S", Score: 0.5, Artifacts: artsFor("spec", "S")}, reason.Halted, ModeRefinementLoop)
}

// 3. The lifecycle requires the gate agents' accepted results before a
// phase completes.
func TestPhaseGates(t *testing.T) {
	noGates := DefaultConfig()
	noGates.PhaseGates = nil
	for _, c := range []struct {
		name    string
		cfg     *Config
		phase   string
		before  []string // agents accepted first
		closer  string
		missing []string // nil: completes
	}{
		{"CI_CD without QA or Security", nil, CICD, nil, "devops", []string{"qa", "security"}},
		{"CI_CD without Security", nil, CICD, []string{"qa"}, "devops", []string{"security"}},
		{"CI_CD without QA", nil, CICD, []string{"security"}, "devops", []string{"qa"}},
		{"CI_CD with both", nil, CICD, []string{"qa", "security"}, "devops", nil},
		{"IMPLEMENTATION without Refactor", nil, Implementation, []string{"task_planning"}, "implementation", []string{"refactor"}},
		{"IMPLEMENTATION with Refactor", nil, Implementation, []string{"task_planning", "refactor"}, "implementation", nil},
		{"no gates configured", noGates, CICD, nil, "devops", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			if c.cfg != nil {
				w.cfg = c.cfg
			}
			w.drive("S", c.phase)
			for _, a := range c.before {
				w.do(prop(a, "S", 0.97, artsFor(a, "S")...))
			}
			p := prop(c.closer, "S", 0.97, artsFor(c.closer, "S")...)
			if c.missing == nil {
				w.do(p)
				if got := w.slice("S").Status; got != Next(c.phase) {
					t.Fatalf("status %s", got)
				}
				return
			}
			e := w.reject(p, reason.GatePending)
			if got, _ := e.Details["missing"].([]string); !slices.Equal(got, c.missing) {
				t.Fatalf("missing %v, want %v (%s)", e.Details["missing"], c.missing, e.Message)
			}
		})
	}
	// A failing completer halts rather than waiting for the gates; a halted
	// gate agent does not count as accepted.
	w := newWorld(t)
	w.drive("S", CICD)
	w.do(prop("qa", "S", 0.97))
	w.halt(prop("security", "S", 0.90), reason.BelowThreshold, ModeBelowMinimum)
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "scan again", Action: ActionRerun})
	w.do(Resolve{Slice: "S", Role: "Security", Rationale: "scan again", Action: ActionRerun})
	w.reject(prop("devops", "S", 0.97), reason.GatePending)
	w.do(prop("security", "S", 0.97))
	w.do(prop("devops", "S", 0.97))
	// Gates name agents of their phase.
	if _, err := ParseConfig([]byte("version: 1\nphase_gates:\n  CI_CD: [design]\n")); err == nil || !strings.Contains(err.Error(), "phase_gates.CI_CD[0]") {
		t.Fatalf("gate outside its phase: %v", err)
	}
	if cfg, err := ParseConfig([]byte("version: 1\nphase_gates: {}\n")); err != nil || len(cfg.PhaseGates) != 0 {
		t.Fatalf("gates turned off: %v %v", cfg.PhaseGates, err)
	}
}

// 4. A conflict locks the slice; arbitration applies the chosen agent's
// whole proposal and moves the slice on; the decision is logged with both
// sides.
func TestConflictLockAndArbitration(t *testing.T) {
	conflict := func(t *testing.T) *world {
		w := newWorld(t)
		w.drive("S", Design)
		w.do(prop("domain", "S", 0.97, artsFor("domain", "S")...))
		base := w.m.Revision
		w.do(prop("knowledge", "S", 0.97, art("glossary", "S/glossary-k.md")))
		// design completes DESIGN, and also wrote the glossary: no steering rule.
		p := prop("design", "S", 0.91, art("design", "S/design.md"), art("glossary", "S/glossary-d.md"))
		p.BaseRevision = base
		w.halt(p, reason.Conflict, ModeConflict)
		return w
	}
	t.Run("lock", func(t *testing.T) {
		w := conflict(t)
		s := w.slice("S")
		if l := s.Lock; l == nil || l.Status != "LOCK" || l.Requester != "design" || l.Acquired == "" || l.Holder != "knowledge" || l.Escalation != s.EscalationID {
			t.Fatalf("lock %+v", s.Lock)
		}
		e := w.reject(prop("domain", "S", 0.97, artsFor("domain", "S")...), reason.SliceLocked)
		if e.Details["holder"] != "knowledge" {
			t.Fatalf("details %v", e.Details)
		}
	})
	for _, c := range []struct {
		favour, status, glossary, design, loser string
		entry                                   string
	}{
		{"", Implementation, "S/glossary-d.md", "S/design.md", "knowledge", OutcomeAccepted},
		{"design", Implementation, "S/glossary-d.md", "S/design.md", "knowledge", OutcomeAccepted},
		{"knowledge", Design, "S/glossary-k.md", "", "design", OutcomeSuperseded},
	} {
		t.Run("favour "+c.favour, func(t *testing.T) {
			w := conflict(t)
			esc := w.slice("S").EscalationID
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "arbitrated", Action: ActionResume, Favour: c.favour})
			s := w.slice("S")
			if s.Status != c.status || s.PhaseData["glossary"] != c.glossary || s.PhaseData["design"] != c.design || s.Lock != nil {
				t.Fatalf("after arbitration: %s %v lock %+v", s.Status, s.PhaseData, s.Lock)
			}
			i := slices.IndexFunc(s.ConfidenceChain, func(e ChainEntry) bool { return e.Agent == "design" })
			if i < 0 || s.ConfidenceChain[i].Outcome != c.entry || s.ConfidenceChain[i].Score != 0.91 {
				t.Fatalf("design entry %+v", s.ConfidenceChain)
			}
			var e *Escalation
			for i := range s.Escalations {
				if s.Escalations[i].ID == esc {
					e = &s.Escalations[i]
				}
			}
			a := e.Arbitration
			want := orDefault(c.favour, "design")
			if a == nil || a.Favoured != want || a.Overruled != c.loser || !slices.Equal(a.Fields, []string{"phase_data.glossary"}) || !strings.Contains(e.Resolution, "in favour of "+want) {
				t.Fatalf("arbitration %+v %q", a, e.Resolution)
			}
			var d map[string]any
			if err := json.Unmarshal(s.DissentNotices[len(s.DissentNotices)-1], &d); err != nil || d["agent"] != c.loser || d["rule"] != "arbitration" ||
				d["favoured_value"] != c.glossary || d["overruled_value"] == nil {
				t.Fatalf("dissent %v", d)
			}
		})
	}
	t.Run("favour must be a side", func(t *testing.T) {
		w := conflict(t)
		w.reject(Resolve{Slice: "S", Role: "TL", Rationale: "x", Action: ActionResume, Favour: "qa"}, reason.InvalidInput)
		w.reject(Resolve{Slice: "S", Role: "TL", Rationale: "x", Action: ActionRerun, Favour: "design"}, reason.InvalidInput)
	})
}

// 5. CCS below the floor: the escalation lists every artifact of the slice
// with its hash.
func TestCCSEscalationListsEveryArtifact(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S"})
	for _, st := range []struct {
		agent string
		score float64
	}{{"discovery", 0.95}, {"spec", 0.92}, {"validation", 0.95}, {"domain", 0.97}} {
		w.do(prop(st.agent, "S", st.score, artsFor(st.agent, "S")...))
	}
	p := prop("design", "S", 0.85, artsFor("design", "S")...)
	tr := art("trace", "S/traces/design.md")
	p.Trace = &tr
	w.do(p)
	w.do(prop("task_planning", "S", 0.97, artsFor("task_planning", "S")...))
	w.do(prop("refactor", "S", 0.97))
	out := w.halt(prop("implementation", "S", 0.78, art("code", "S/src/main.go")), reason.BelowThreshold, ModeCCSFloor)
	s := w.slice("S")
	e := s.OpenEscalation()
	if !slices.Equal(e.Artifacts, s.Artifacts()) || len(e.Artifacts) != 7 {
		t.Fatalf("artifacts %v, slice names %v", e.Artifacts, s.Artifacts())
	}
	notice := NoticeText(s, e)
	_ = out
	for _, path := range s.Artifacts() {
		if e.ArtifactHashes[path] != s.ArtifactHashes[path] || !strings.Contains(notice, "- "+path+" `"+s.ArtifactHashes[path]+"`") {
			t.Fatalf("%s: hash %q in escalation, notice:\n%s", path, e.ArtifactHashes[path], notice)
		}
	}
	// A halt of one agent still lists its own artifacts only.
	w2 := newWorld(t)
	w2.drive("S", Spec)
	w2.halt(prop("spec", "S", 0.5, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
	if e := w2.slice("S").OpenEscalation(); len(e.Artifacts) != 1 || e.ArtifactHashes != nil {
		t.Fatalf("below-minimum escalation %v %v", e.Artifacts, e.ArtifactHashes)
	}
}

// 6. A reported halt marks the current phase's artifact DRAFT — AGENT
// HALTED, as a threshold halt does, and records its marked hash.
func TestReportedHaltMarksPhaseArtifact(t *testing.T) {
	for _, c := range []struct {
		phase, agent, mode string
		before             string // an agent accepted in the phase first
		marked             string
	}{
		{Validation, "validation", ModeHallucinatedSpec, "", "S/specs/x/requirements.md"},
		{Design, "design", ModeConflict, "domain", "S/docs/domain-model.md"},
		{CICD, "security", ModeContradictorySteering, "", "S/specs/x/tasks.md"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			w := newWorld(t)
			w.drive("S", c.phase)
			if c.before != "" {
				w.do(prop(c.before, "S", 0.97, artsFor(c.before, "S")...))
			}
			marked := h("marked " + c.marked)
			out := w.do(ReportFailure{Agent: c.agent, Slice: "S", Mode: c.mode, Reason: "found it", Marked: map[string]string{c.marked: marked, "S/other.md": h("x")}})
			s := w.slice("S")
			var marks []string
			for _, e := range out.Effects {
				if e.Kind == EffectMarkArtifact {
					if e.Marker != DefaultMarker {
						t.Fatalf("marker %q", e.Marker)
					}
					marks = append(marks, e.Path)
				}
			}
			if !slices.Equal(marks, []string{c.marked}) || s.ArtifactHashes[c.marked] != marked || s.Status != Blocked {
				t.Fatalf("marks %v, hash %s, status %s", marks, s.ArtifactHashes[c.marked], s.Status)
			}
			if !slices.Contains(s.OpenEscalation().Artifacts, c.marked) {
				t.Fatalf("escalation artifacts %v", s.OpenEscalation().Artifacts)
			}
			// The marker is re-derived after a crash, like a threshold halt's.
			if !slices.ContainsFunc(AllEffects(w.m, w.cfg), func(e Effect) bool { return e.Kind == EffectMarkArtifact && e.Path == c.marked }) {
				t.Fatal("AllEffects does not re-mark the artifact")
			}
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "section rewritten", Action: ActionRerun})
		})
	}
	w := newWorld(t)
	w.drive("S", Validation)
	w.reject(ReportFailure{Agent: "validation", Slice: "S", Mode: ModeHallucinatedSpec, Reason: "x", Marked: map[string]string{"S/r.md": "md5:1"}}, reason.InvalidInput)
}

// 7. Implementation below its minimum: the block record names the feature
// branch and the review required.
func TestImplementationFeatureBranch(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Implementation)
	w.do(prop("refactor", "S", 0.97))
	p := prop("implementation", "S", 0.71, art("code", "S/src/main.go"))
	p.FeatureBranch = "asdd/S/implementation-attempt-1"
	out := w.halt(p, reason.BelowThreshold, ModeBelowMinimum)
	s := w.slice("S")
	if s.FeatureBranch != p.FeatureBranch || !strings.Contains(s.ReviewRequired, "code review of branch asdd/S/implementation-attempt-1") ||
		s.BlockReason != "Implementation Agent confidence 0.71 < threshold 0.75" {
		t.Fatalf("block record: %q %q %q", s.FeatureBranch, s.ReviewRequired, s.BlockReason)
	}
	if !strings.Contains(out.Effects[len(out.Effects)-2].Content, "- Feature branch: asdd/S/implementation-attempt-1") {
		t.Fatalf("notice:\n%s", out.Effects[len(out.Effects)-2].Content)
	}
	// Without a branch in the proposal, the runner attaches it after the halt.
	w2 := newWorld(t)
	w2.drive("S", Implementation)
	w2.do(prop("refactor", "S", 0.97))
	w2.halt(prop("implementation", "S", 0.71), reason.BelowThreshold, ModeBelowMinimum)
	if s := w2.slice("S"); s.FeatureBranch != "" || !strings.Contains(s.ReviewRequired, "human code review") {
		t.Fatalf("block record: %q %q", s.FeatureBranch, s.ReviewRequired)
	}
	w2.reject(AttachBranch{Slice: "S", Agent: "implementation", Branch: "bad..name"}, reason.InvalidInput)
	w2.reject(AttachBranch{Slice: "S", Agent: "spec", Branch: "asdd/S/x"}, reason.InvalidTransition)
	w2.do(AttachBranch{Slice: "S", Agent: "implementation", Branch: "asdd/S/implementation-attempt-1", Commit: "0123abcd"})
	s = w2.slice("S")
	if s.FeatureBranch != "asdd/S/implementation-attempt-1" || !strings.Contains(s.ReviewRequired, "commit 0123abcd") || s.OpenEscalation().FeatureBranch != s.FeatureBranch {
		t.Fatalf("after attach: %q %q", s.FeatureBranch, s.ReviewRequired)
	}
	w2.do(Resolve{Slice: "S", Role: "TL", Rationale: "reviewed", Action: ActionRerun})
	if s := w2.slice("S"); s.FeatureBranch != "" || s.ReviewRequired != "" {
		t.Fatal("block record kept after the resolution")
	}
	// Another agent below its minimum has no branch.
	w3 := newWorld(t)
	w3.drive("S", Spec)
	p = prop("spec", "S", 0.5, artsFor("spec", "S")...)
	p.FeatureBranch = "asdd/S/spec"
	w3.halt(p, reason.BelowThreshold, ModeBelowMinimum)
	if s := w3.slice("S"); s.FeatureBranch != "" || s.ReviewRequired != "" {
		t.Fatalf("spec halt with a branch: %q", s.FeatureBranch)
	}
}

// 8. Knowledge below its minimum: a steering-update proposal written under
// .asdd/ and linked from the escalation; it takes effect only once approved.
func TestKnowledgeSteeringProposal(t *testing.T) {
	for _, c := range []struct {
		name     string
		decide   Op
		status   string
		inEffect bool
	}{
		{"approved", Approve{Slice: "S", Role: "TL", Rationale: "the rule is right"}, SteeringApproved, true},
		{"rejected", Resolve{Slice: "S", Role: "TL", Rationale: "not now", Action: ActionRerun}, SteeringRejected, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.drive("S", Design)
			out := w.halt(prop("knowledge", "S", 0.70, art("steering", "S/steering/naming.md")), reason.BelowThreshold, ModeBelowMinimum)
			s := w.slice("S")
			e := s.OpenEscalation()
			if len(s.SteeringUpdates) != 1 || s.SteeringUpdates[0].Status != SteeringPending || e.SteeringProposal != s.SteeringUpdates[0].Path ||
				!strings.HasPrefix(e.SteeringProposal, ".asdd/steering-proposals/") || s.PhaseData["steering"] != "" {
				t.Fatalf("proposal %+v, escalation links %q, phase data %v", s.SteeringUpdates, e.SteeringProposal, s.PhaseData)
			}
			i := slices.IndexFunc(out.Effects, func(x Effect) bool { return x.Path == e.SteeringProposal })
			if i < 0 || !strings.Contains(out.Effects[i].Content, "Status: PENDING_APPROVAL") || !strings.Contains(out.Effects[i].Content, "steering: S/steering/naming.md") {
				t.Fatalf("effects %+v", out.Effects)
			}
			if !strings.Contains(NoticeText(s, e), "Steering-update proposal: "+e.SteeringProposal) {
				t.Fatal("the notice does not link the proposal")
			}
			out = w.do(c.decide)
			s = w.slice("S")
			if s.SteeringUpdates[0].Status != c.status || (s.PhaseData["steering"] != "") != c.inEffect {
				t.Fatalf("after decision: %+v %v", s.SteeringUpdates, s.PhaseData)
			}
			if !slices.ContainsFunc(out.Effects, func(x Effect) bool {
				return x.Path == e.SteeringProposal && strings.Contains(x.Content, "Status: "+c.status)
			}) {
				t.Fatalf("proposal file not rewritten: %+v", out.Effects)
			}
		})
	}
}

// 10. The chain keeps one current entry per agent; earlier attempts are
// history. Chains of the previous release load (migrated on read); a
// chain with duplicates the custodian cannot tell apart is an invariant
// violation (check reports it).
func TestChainOneEntryPerAgent(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Spec)
	w.halt(prop("spec", "S", 0.80, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
	w.do(Resolve{Slice: "S", Role: "TL", Rationale: "again"})
	w.do(prop("spec", "S", 0.97, artsFor("spec", "S")...))
	s := w.slice("S")
	if len(s.DuplicateChainAgents()) != 0 || len(s.ChainHistory) != 1 || s.ChainHistory[0].Outcome != OutcomeHalted || s.ChainHistory[0].Attempt != 1 {
		t.Fatalf("chain %+v history %+v", s.ConfidenceChain, s.ChainHistory)
	}
	if i := slices.IndexFunc(s.ConfidenceChain, func(e ChainEntry) bool { return e.Agent == "spec" }); s.ConfidenceChain[i].Attempt != 2 {
		t.Fatalf("current spec entry %+v", s.ConfidenceChain[i])
	}

	for _, c := range []struct {
		name    string
		chain   string
		current int
		history int
		dups    []string
	}{
		{"previous release: attempts", `[{"agent":"spec","score":0.8,"timestamp":"t","attempt":1,"outcome":"halted"},{"agent":"validation","score":0.9,"timestamp":"t","attempt":1},{"agent":"spec","score":0.9,"timestamp":"t","attempt":2}]`, 2, 1, nil},
		{"seed layout, no duplicates", `[{"agent":"spec","score":0.8,"timestamp":"t"},{"agent":"validation","score":0.9,"timestamp":"t"}]`, 2, 0, nil},
		{"hand-written duplicates", `[{"agent":"spec","score":0.8,"timestamp":"t"},{"agent":"spec","score":0.9,"timestamp":"t"}]`, 2, 0, []string{"spec"}},
		{"same attempt twice", `[{"agent":"spec","score":0.8,"timestamp":"t","attempt":1},{"agent":"spec","score":0.9,"timestamp":"t","attempt":1}]`, 2, 0, []string{"spec"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := `{"project_context":{},"slices":[{"slice_id":"S","status":"VALIDATION","confidence_chain":` + c.chain + `}],"agent_heartbeats":{}}`
			m, err := Decode([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			s := m.Slice("S")
			if len(s.ConfidenceChain) != c.current || len(s.ChainHistory) != c.history || !slices.Equal(s.DuplicateChainAgents(), c.dups) {
				t.Fatalf("chain %d history %d dups %v", len(s.ConfidenceChain), len(s.ChainHistory), s.DuplicateChainAgents())
			}
			bad := Invariants(m, DefaultConfig())
			hasDup := slices.ContainsFunc(bad, func(b string) bool { return strings.Contains(b, "two current confidence chain entries") })
			if hasDup != (c.dups != nil) {
				t.Fatalf("invariants %v", bad)
			}
			if c.history > 0 && s.ConfidenceChain[len(s.ConfidenceChain)-1].Score != 0.9 {
				t.Fatalf("the latest attempt is not current: %+v", s.ConfidenceChain)
			}
		})
	}
}
