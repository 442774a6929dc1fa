package cycle

import (
	"bytes"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/reason"
)

// genOp draws a random operation from every kind the domain has, mostly
// well formed (so that sequences get far) and sometimes not.
func genOp(t *rapid.T) Op {
	agent := rapid.SampledFrom([]string{"ra", "ep", "cd", "vas", "ra", "ep", "cd", "vas", "qa"}).Draw(t, "agent")
	name := rapid.SampledFrom([]string{"a.go", "b.go", "src/c.ts", "src/d.ts", "../x"}).Draw(t, "file")
	id := rapid.SampledFrom([]string{"", "DEC-001", "DEC-002", "BLK-001", "BLK-002", "T1", "T2", "T1", "T2"}).Draw(t, "id")
	text := rapid.SampledFrom([]string{"", "text", "more text", "text"}).Draw(t, "text")
	// rapid favours the ends of a range: agent reports and changes sit
	// there, stop in the middle.
	switch k := (rapid.IntRange(0, 39).Draw(t, "kind") + 36) % 40; {
	case k < 4:
		return Iterate{Extension: text}
	case k < 12:
		return SetAgent{
			Agent: agent, Status: rapid.SampledFrom([]string{"running", "running", "completed", "completed", "waiting", "failed", "idle", "done"}).Draw(t, "status"),
			Message: text, Error: text, FilesModified: rapid.IntRange(-1, 5).Draw(t, "files"),
		}
	case k < 17:
		return AppendChange{File: name, Action: rapid.SampledFrom([]string{"create", "modify", "delete", "rename"}).Draw(t, "action"), Agent: agent, Description: text}
	case k < 19:
		return RecordTests{
			PassRate: rapid.SampledFrom([]float64{0, 50, 85.5, 100, 101, -1}).Draw(t, "pass"), Coverage: rapid.Float64Range(0, 100).Draw(t, "cov"),
			FailedTests: rapid.SliceOfN(rapid.SampledFrom([]string{"t1", "t2"}), 0, 2).Draw(t, "failed"), TotalTests: rapid.SampledFrom([]int{2, 3, 10, 0, -1}).Draw(t, "total"),
		}
	case k < 21:
		if rapid.Bool().Draw(t, "which") {
			return SetExploration{ArchitectureSummary: text, IdentifiedRisks: []string{text}}
		}
		return SetRequirements{Specification: text, EdgeCases: []string{text}}
	case k < 23:
		return SetPlan{Tasks: []PlanTask{
			{ID: "T1", Description: "a", Effort: "small"},
			{ID: "T2", Description: "b", Effort: rapid.SampledFrom([]string{"large", "large", "huge"}).Draw(t, "effort"), DependsOn: []string{rapid.SampledFrom([]string{"T1", "T1", "T2", "T3"}).Draw(t, "dep")}},
		}}
	case k < 25:
		return SetTask{ID: rapid.SampledFrom([]string{"T1", "T2", "T1", "T9"}).Draw(t, "task"), Status: rapid.SampledFrom(append(TaskStatuses, "x")).Draw(t, "tstatus")}
	case k < 27:
		return AddFeedback{Source: rapid.SampledFrom([]string{"user", "ra", "vas", "zz"}).Draw(t, "src"), Target: agent, Content: text, Type: rapid.SampledFrom(append(FeedbackTypes, "x")).Draw(t, "ftype")}
	case k < 29:
		return ProposeDecision{ID: id, Description: text, Options: rapid.SliceOfN(rapid.SampledFrom([]string{"x", "y", "x", "y", ""}), 0, 3).Draw(t, "options")}
	case k < 31:
		return MakeDecision{ID: id, Choice: rapid.SampledFrom([]string{"x", "y", "z"}).Draw(t, "choice"), MadeBy: agent}
	case k < 32:
		return ImplementDecision{ID: id}
	case k < 34:
		return ReportBlocker{ID: id, Description: text, ReportedBy: agent}
	case k < 36:
		return ResolveBlocker{ID: id, Resolution: text, Workaround: rapid.Bool().Draw(t, "workaround")}
	case k < 38:
		return rapid.SampledFrom([]Op{Pause{}, Resume{}, Complete{}}).Draw(t, "control")
	case k < 39:
		if rapid.IntRange(0, 9).Draw(t, "really stop") == 5 { // rarely: a stop ends the sequence's interest
			return Stop{Reason: text}
		}
		return SetAgent{Agent: agent, Status: "running", Message: text}
	default:
		return AppendChange{File: name, Action: "modify", Agent: "cd"}
	}
}

// TestPropertyRandomOperations applies random operation sequences and
// checks, after every step: an accepted operation yields a valid state that
// CheckTransition accepts, in which the change log and feedback log only
// grew (existing entries unchanged), versions only increased, and the
// signal matches the status; a rejected operation carries a reason code and
// leaves the state exactly as it was; the state survives an encode/decode
// round trip.
func TestPropertyRandomOperations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, err := New(testID, "task", "", rapid.IntRange(1, 4).Draw(t, "max"), t0)
		if err != nil {
			t.Fatal(err)
		}
		now := t0
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			op := genOp(t)
			now = now.Add(time.Duration(rapid.IntRange(0, 120).Draw(t, "dt")) * time.Second)
			before, err := Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			next, ev, err := Apply(s, op, now)
			if err != nil {
				if reason.CodeOf(err) == "" {
					t.Fatalf("%T rejected without a reason code: %v", op, err)
				}
				after, _ := Encode(s)
				got, _ := Encode(next)
				if !bytes.Equal(before, after) || !bytes.Equal(before, got) {
					t.Fatalf("rejected %T changed the state", op)
				}
				continue
			}
			if ev.Type != "cycle."+op.Name() || ev.Summary == "" {
				t.Fatalf("event %+v for %T", ev, op)
			}
			if err := Validate(next); err != nil {
				t.Fatalf("%T produced an invalid state: %v", op, err)
			}
			if err := CheckTransition(s, next); err != nil {
				t.Fatalf("%T broke a history rule: %v", op, err)
			}
			checkGrowth(t, s, next)
			after, _ := Encode(s)
			if !bytes.Equal(before, after) {
				t.Fatalf("accepted %T modified its input", op)
			}
			raw, err := Encode(next)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := Encode(back); !bytes.Equal(raw, again) {
				t.Fatalf("round trip differs:\n%s\n%s", raw, again)
			}
			checkSignal(t, next)
			s = next
		}
	})
}

// checkGrowth re-checks the invariants directly, independently of
// CheckTransition.
func checkGrowth(t *rapid.T, prev, next State) {
	if prev.Changes != nil {
		if next.Changes == nil || len(next.Changes.Changes) < len(prev.Changes.Changes) {
			t.Fatal("the change log shrank")
		}
		for i, c := range prev.Changes.Changes {
			if next.Changes.Changes[i] != c {
				t.Fatalf("change %d was edited", i)
			}
		}
	}
	if len(next.Coordination.FeedbackLog) < len(prev.Coordination.FeedbackLog) || len(next.TaskHistory) < len(prev.TaskHistory) {
		t.Fatal("a log shrank")
	}
	for _, pair := range [][2]string{
		{verOf(prev.Requirements), verOf(next.Requirements)},
		{verOf(prev.Exploration), verOf(next.Exploration)},
		{verOf(prev.Plan), verOf(next.Plan)},
		{verOf(prev.TestResults), verOf(next.TestResults)},
	} {
		if pair[0] == "" {
			continue
		}
		a, _ := ParseVersion(pair[0])
		b, err := ParseVersion(pair[1])
		if err != nil || b.Compare(a) < 0 {
			t.Fatalf("version went from %s to %s", pair[0], pair[1])
		}
	}
	if next.CurrentIteration < prev.CurrentIteration {
		t.Fatal("iteration count went down")
	}
}

func checkSignal(t *rapid.T, s State) {
	sig := CheckSignal(s)
	want := map[string]string{StatusRunning: ActionContinue, StatusPaused: ActionPause, StatusFailed: ActionStop, StatusCreated: ActionUnknown, StatusCompleted: ActionUnknown}[s.Status]
	if sig.Action != want || sig.Continue != (s.Status == StatusRunning) {
		t.Fatalf("status %s gave signal %+v", s.Status, sig)
	}
	// Agents may not act unless the signal says continue.
	if !sig.Continue {
		if _, _, err := Apply(s, AppendChange{File: "z.go", Action: "create", Agent: "cd"}, t0); err == nil {
			t.Fatalf("a change was accepted while the signal says %s", sig.Action)
		}
	}
}
