package asdd

import (
	"testing"

	"pgregory.net/rapid"
)

// SliceSurelyValid never vouches for a slice the schema refuses: slices
// drawn from values the schema takes and values it refuses, member by
// member.
func TestSliceSurelyValidImpliesSchema(t *testing.T) {
	// Half the slices draw only values the schema takes (so that the fast
	// path is taken often), half any value.
	var mixed bool
	pick := func(t *rapid.T, name string, good []string, bad ...string) string {
		if mixed {
			good = append(append([]string{}, good...), bad...)
		}
		return rapid.SampledFrom(good).Draw(t, name)
	}
	phases := append([]string{Blocked, Partial, QuickFix, BehaviorCapture, NeedsHumanReview}, Lifecycle...)
	phase := func(t *rapid.T, name string) string { return pick(t, name, phases, "", "NOPE", "discovery") }
	optPhase := func(t *rapid.T, name string) string { return pick(t, name, append([]string{""}, phases...), "NOPE") }
	str := func(t *rapid.T, name string) string { return pick(t, name, []string{"x", "<&>", "\u2028", "é"}, "") }
	score := func(t *rapid.T, name string) float64 {
		v := []float64{0, 0.5, 1}
		if mixed {
			v = append(v, -0.01, 1.01)
		}
		return rapid.SampledFrom(v).Draw(t, name)
	}
	scorePtr := func(t *rapid.T, name string) *float64 {
		if rapid.Bool().Draw(t, name+"?") {
			return nil
		}
		v := score(t, name)
		return &v
	}
	count := func(t *rapid.T, name string) *int {
		if rapid.Bool().Draw(t, name+"?") {
			return nil
		}
		v := rapid.IntRange(0, 2).Draw(t, name)
		if mixed {
			v = rapid.IntRange(-1, 2).Draw(t, name+"-")
		}
		return &v
	}
	intFrom := func(t *rapid.T, name string, lo int) int {
		if mixed {
			lo--
		}
		return rapid.IntRange(lo, 2).Draw(t, name)
	}
	extra := func(t *rapid.T, name string) Extra {
		if mixed && rapid.IntRange(0, 5).Draw(t, name) == 0 {
			return Extra(`{"zz":1}`)
		}
		return nil
	}
	hash := h("content")
	surely := 0
	defer func() {
		if surely == 0 {
			t.Error("no slice drawn was surely valid")
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		mixed = rapid.Bool().Draw(t, "mixed")
		s := &Slice{
			SliceID:             pick(t, "id", []string{"S-1", "SLICE-001", "x.y_z"}, "", "-bad", "a b"),
			Name:                str(t, "name"),
			Status:              phase(t, "status"),
			BlockedAtPhase:      optPhase(t, "blockedAt"),
			LKGPhase:            optPhase(t, "lkg"),
			ResumePhase:         optPhase(t, "resume"),
			BlockReason:         str(t, "blockReason"),
			RollbackTimestamp:   str(t, "rollback"),
			CCS:                 scorePtr(t, "ccs"),
			RequirementsMissing: count(t, "missing"),
			Extra:               extra(t, "sliceExtra"),
		}
		for range rapid.IntRange(0, 2).Draw(t, "chain") {
			e := ChainEntry{Agent: str(t, "agent"), Score: score(t, "score"), Timestamp: str(t, "ts"),
				Attempt: intFrom(t, "attempt", 0), Phase: optPhase(t, "phase"),
				Minimum: scorePtr(t, "minimum"), Outcome: pick(t, "outcome", []string{"", OutcomeAccepted, OutcomeHalted, OutcomeSuperseded}, "maybe"),
				Extra: extra(t, "entryExtra")}
			if rapid.Bool().Draw(t, "history") {
				s.ChainHistory = append(s.ChainHistory, e)
			} else {
				s.ConfidenceChain = append(s.ConfidenceChain, e)
			}
		}
		if rapid.Bool().Draw(t, "signoff") {
			s.SignOffs = []SignOff{{Role: str(t, "role"), At: str(t, "at"), Rationale: str(t, "rationale"), Action: str(t, "action")}}
		}
		if rapid.Bool().Draw(t, "assumption") {
			s.Assumptions = []Assumption{{Text: str(t, "text"), Status: pick(t, "astatus", []string{AssumptionAssumed, AssumptionCorrected}, "", "x")}}
		}
		if rapid.Bool().Draw(t, "hashes") {
			s.ArtifactHashes = map[string]string{"a.md": pick(t, "hash", []string{hash}, "sha256:XY", "", hash+"0")}
		}
		if rapid.Bool().Draw(t, "lock") {
			s.Lock = &Lock{Holder: str(t, "holder"), Acquired: str(t, "acquired"), Expires: str(t, "expires"), Extra: extra(t, "lockExtra")}
		}
		if rapid.Bool().Draw(t, "attempts") {
			s.Attempts = map[string]int{"spec:SPEC": intFrom(t, "attemptCount", 0)}
		}
		if rapid.Bool().Draw(t, "raised") {
			s.RaisedMinimums = map[string]float64{"spec": score(t, "raisedMin")}
		}
		if rapid.Bool().Draw(t, "task") {
			s.Tasks = []Task{{ID: str(t, "taskID"), Wave: intFrom(t, "wave", 1),
				Status: pick(t, "taskStatus", []string{TaskPending, TaskClaimed, TaskDone}, "", "open"), Extra: extra(t, "taskExtra")}}
		}
		if rapid.Bool().Draw(t, "escalation") {
			s.Escalations = []Escalation{{ID: str(t, "escID"), Path: str(t, "escPath"), FailureMode: str(t, "mode"), Phase: str(t, "escPhase"),
				Score: scorePtr(t, "escScore"), CCS: scorePtr(t, "escCCS"), RaisedAt: str(t, "raised"),
				Status: pick(t, "escStatus", []string{EscalationOpen, EscalationResolved}, "", "CLOSED")}}
		}
		b, err := Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := validatePart(partSlice, b, "/slices/0")
		if s.Status == Blocked && !mixed {
			// the block record, present
			s.BlockedAtPhase, s.LKGPhase, s.BlockReason, s.RollbackTimestamp = Design, Spec, "x", "t"
			b, _ = Marshal(s)
			schemaErr = validatePart(partSlice, b, "/slices/0")
		}
		ok := SliceSurelyValid(s)
		if ok {
			surely++
		}
		if !mixed && !ok {
			t.Fatalf("a slice of values the schema takes is not surely valid: %s", b)
		}
		if ok && schemaErr != nil {
			t.Fatalf("SliceSurelyValid passed %s, the schema refused it: %v", b, schemaErr)
		}
	})
}

// The slices the rules write take the fast path: every slice of the
// encoding corpus's manifests made by operations is surely valid.
func TestSliceSurelyValidTakesTheRulesSlices(t *testing.T) {
	for name, m := range opsManifests(t) {
		for _, s := range m.Slices {
			if !SliceSurelyValid(s) {
				b, _ := Marshal(s)
				t.Errorf("%s: slice %s is not surely valid: %s", name, s.SliceID, b)
			}
		}
	}
}
