package asdd

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every operation names itself, says which slice it is about and whether
// it is a human decision; the doors ask it instead of switching on its
// type, so this table is what they all do.
func TestOperationsKnowThemselves(t *testing.T) {
	for _, tc := range []struct {
		op    Op
		name  string
		slice string // of the op as given
		human string // "" for an agent's operation
	}{
		{Init{Sprint: "S1"}, "init", "", "init"},
		{AddSlice{ID: "S-1"}, "add-slice", "S-1", ""},
		{Quick{ID: "QUICK-001"}, "quick", "QUICK-001", ""},
		{LockSlice{Slice: "S-1"}, "lock", "S-1", ""},
		{UnlockSlice{Slice: "S-1"}, "unlock", "S-1", ""},
		{UnlockSlice{Slice: "S-1", Force: true}, "unlock", "S-1", "a forced unlock"},
		{Beat{Slice: "S-1"}, "heartbeat", "", ""}, // names its agent's slice, does not change it
		{Proposal{Slice: "S-1"}, "propose", "S-1", ""},
		{Resolve{Slice: "S-1"}, "resolve", "S-1", "resolve"},
		{Approve{Slice: "S-1"}, "approve", "S-1", "approve"},
		{AddTask{Slice: "S-1"}, "add-task", "S-1", ""},
		{CompleteTask{Slice: "S-1"}, "complete-task", "S-1", ""},
		{ClaimTask{Slice: "S-1"}, "claim-task", "S-1", ""},
		{ClearReview{Slice: "S-1"}, "clear-review", "", "clear-review"},
		{CorrectAssumption{Slice: "S-1"}, "correct-assumption", "S-1", "correct-assumption"},
		{ReportFailure{Slice: "S-1"}, "halt", "S-1", ""},
		{FlagDrift{Slice: "S-1"}, "flag-drift", "S-1", ""},
		{AgentTimeout{}, "agent-timeout", "", ""},
		{ClearMarkers{}, "clear-markers", "", ""},
		{AttachBranch{Slice: "S-1"}, "attach-branch", "", ""},
	} {
		if got := tc.op.OpName(); got != tc.name {
			t.Errorf("%T: name %q, want %q", tc.op, got, tc.name)
		}
		if got := tc.op.SliceID(); got != tc.slice {
			t.Errorf("%T: slice %q, want %q", tc.op, got, tc.slice)
		}
		if got := tc.op.HumanDecision(); got != tc.human {
			t.Errorf("%+v: human decision %q, want %q", tc.op, got, tc.human)
		}
	}
}

// Ops lists every operation type once, each under a name of its own.
func TestOperationNamesAreUnique(t *testing.T) {
	names := map[string]reflect.Type{}
	types := map[reflect.Type]bool{}
	for _, op := range Ops() {
		typ := reflect.TypeOf(op)
		if types[typ] {
			t.Errorf("%v listed twice", typ)
		}
		types[typ] = true
		name := op.OpName()
		if name == "" {
			t.Errorf("%v has no name", typ)
		}
		if other, dup := names[name]; dup {
			t.Errorf("%v and %v are both %q", other, typ, name)
		}
		names[name] = typ
	}
	if len(names) != 19 {
		t.Errorf("%d operations, want 19 (a new one needs its line in TestOperationsKnowThemselves)", len(names))
	}
}

// docs/security.md lists the human decisions a human lead makes; they are
// exactly the operations that say they are one (rollback and raw writes
// are not manifest operations).
func TestHumanDecisionsAreTheDocumentedOnes(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	// "The **human decisions** are the operations `a`, `b` (…) and a
	// forced `unlock`, and then `rollback`, …": the operations are the
	// names in backquotes before "and then", less those in parentheses.
	text := strings.Join(strings.Fields(string(doc)), " ")
	_, rest, ok := strings.Cut(text, "The **human decisions** are the operations ")
	ops, _, ok2 := strings.Cut(rest, ", and then ")
	if !ok || !ok2 {
		t.Fatal("docs/security.md has no sentence \"The **human decisions** are the operations …, and then …\"")
	}
	var listed []string
	depth := 0
	for i, part := range strings.Split(ops, "`") {
		depth += strings.Count(part, "(") - strings.Count(part, ")")
		if i%2 == 0 || depth > 0 {
			continue
		}
		name := part
		if strings.HasSuffix(strings.Split(ops, "`")[i-1], "a forced ") {
			name = "a forced " + part
		}
		listed = append(listed, name)
	}
	var human []string
	for _, op := range append(Ops(), UnlockSlice{Force: true}) {
		if what := op.HumanDecision(); what != "" {
			human = append(human, what)
		}
	}
	slices.Sort(listed)
	slices.Sort(human)
	if !slices.Equal(listed, human) {
		t.Errorf("docs/security.md lists the human decisions %q; the operations say %q", listed, human)
	}
}

// An enumerated value (a phase, a status, a failure mode, a resolution's
// action) is taken in any case, whichever door it came through: Apply
// reads its canonical form.
func TestEnumeratedFieldsAreTakenInAnyCase(t *testing.T) {
	for _, tc := range []struct{ in, want Op }{
		{Proposal{Slice: "S-1", To: "partial"}, Proposal{Slice: "S-1", To: Partial}},
		{Proposal{To: "Done"}, Proposal{To: Done}},
		{Beat{Agent: "spec", Status: "idle"}, Beat{Agent: "spec", Status: HeartbeatIdle}},
		{Resolve{Action: "RETURN", ReturnTo: "spec"}, Resolve{Action: ActionReturn, ReturnTo: Spec}},
		{ReportFailure{Mode: "conflicting_agent_outputs"}, ReportFailure{Mode: ModeConflict}},
		{AddSlice{ID: "S-1", Type: "retro_spec", GovernanceMode: "manual"}, AddSlice{ID: "S-1", Type: TypeRetroSpec, GovernanceMode: "MANUAL"}},
		{LockSlice{Slice: "s-1", Holder: "tl"}, LockSlice{Slice: "s-1", Holder: "tl"}}, // ids and names keep their case
		// With no action, a phase to return to means return and a favoured
		// agent resume, whichever door the resolution came through.
		{Resolve{ReturnTo: "design"}, Resolve{Action: ActionReturn, ReturnTo: Design}},
		{Resolve{Favour: "spec"}, Resolve{Action: ActionResume, Favour: "spec"}},
		{Resolve{ReturnTo: "SPEC", Favour: "spec"}, Resolve{Action: ActionReturn, ReturnTo: Spec, Favour: "spec"}},
		{Resolve{Action: "Rerun", Favour: "spec"}, Resolve{Action: ActionRerun, Favour: "spec"}},
		{Resolve{}, Resolve{}},
	} {
		if got := Normalize(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Normalize(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}

	// Through Apply: a lower-case status is the upper-case one.
	w := newWorld(t)
	w.do(Beat{Agent: "spec", Status: "paused"})
	if hb := w.m.AgentHeartbeats["spec_agent"]; hb == nil || hb.Status != HeartbeatPaused {
		t.Fatalf("heartbeat %+v, want status %s", hb, HeartbeatPaused)
	}
	out := w.do(AddSlice{ID: "S-2", Type: "retro_spec"})
	if s := out.Manifest.Slice("S-2"); s == nil || s.Type != TypeRetroSpec || s.Status != BehaviorCapture {
		t.Fatalf("slice %+v, want a %s in %s", s, TypeRetroSpec, BehaviorCapture)
	}
	if out.Slice != "S-2" {
		t.Errorf("outcome's slice %q, want S-2", out.Slice)
	}
	if out := w.do(Quick{Description: "typo"}); out.Slice != "QUICK-001" {
		t.Errorf("a quick fix's outcome names slice %q, want the id Apply chose, QUICK-001", out.Slice)
	}
}
