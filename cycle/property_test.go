package cycle

import (
	"bytes"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/reason"
)

// genOp draws a random operation, valid or not, from every kind the domain
// has.
func genOp(t *rapid.T) Op {
	agent := rapid.SampledFrom(append(AgentNames, "qa")).Draw(t, "agent")
	name := rapid.SampledFrom([]string{"a.go", "b.go", "src/c.ts", "../x"}).Draw(t, "file")
	id := rapid.SampledFrom([]string{"", "DEC-001", "DEC-002", "BLK-001", "BLK-002", "T1", "T2"}).Draw(t, "id")
	text := rapid.SampledFrom([]string{"", "text", "more text"}).Draw(t, "text")
	switch rapid.IntRange(0, 17).Draw(t, "kind") {
	case 0:
		return Iterate{Extension: text}
	case 1, 2, 3:
		return SetAgent{
			Agent: agent, Status: rapid.SampledFrom(append(AgentStatuses, "done")).Draw(t, "status"),
			Message: text, Error: text, FilesModified: rapid.IntRange(-1, 5).Draw(t, "files"),
		}
	case 4, 5:
		return AppendChange{File: name, Action: rapid.SampledFrom(append(ChangeActions, "rename")).Draw(t, "action"), Agent: agent, Description: text}
	case 6:
		total := rapid.IntRange(-1, 4).Draw(t, "total")
		return RecordTests{
			PassRate: rapid.Float64Range(-10, 110).Draw(t, "pass"), Coverage: rapid.Float64Range(0, 100).Draw(t, "cov"),
			FailedTests: rapid.SliceOfN(rapid.SampledFrom([]string{"t1", "t2"}), 0, 3).Draw(t, "failed"), TotalTests: total,
		}
	case 7:
		return SetRequirements{Specification: text, EdgeCases: []string{text}}
	case 8:
		return SetPlan{Tasks: []PlanTask{
			{ID: "T1", Description: "a", Effort: "small"},
			{ID: "T2", Description: "b", Effort: rapid.SampledFrom([]string{"large", "huge"}).Draw(t, "effort"), DependsOn: []string{rapid.SampledFrom([]string{"T1", "T2", "T3"}).Draw(t, "dep")}},
		}}
	case 9:
		return SetTask{ID: id, Status: rapid.SampledFrom(append(TaskStatuses, "x")).Draw(t, "tstatus")}
	case 10:
		return AddFeedback{Source: rapid.SampledFrom([]string{"user", "ra", "zz"}).Draw(t, "src"), Target: agent, Content: text, Type: rapid.SampledFrom(append(FeedbackTypes, "x")).Draw(t, "ftype")}
	case 11:
		return ProposeDecision{ID: id, Description: text, Options: rapid.SliceOfN(rapid.SampledFrom([]string{"x", "y", ""}), 0, 3).Draw(t, "options")}
	case 12:
		return MakeDecision{ID: id, Choice: rapid.SampledFrom([]string{"x", "y", "z"}).Draw(t, "choice"), MadeBy: agent}
	case 13:
		return ImplementDecision{ID: id}
	case 14:
		return ReportBlocker{ID: id, Description: text, ReportedBy: agent}
	case 15:
		return ResolveBlocker{ID: id, Resolution: text, Workaround: rapid.Bool().Draw(t, "workaround")}
	case 16:
		return rapid.SampledFrom([]Op{Pause{}, Resume{}, Complete{}}).Draw(t, "control")
	default:
		return Stop{Reason: text}
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
