package asdd

import (
	"reflect"
	"testing"
)

// What only the custodian may observe (hashes of artifacts and of the
// slice's files) is dropped before an operation travels to the daemon;
// what the caller names (names, paths) stays.
func TestUnobservedKeepsOnlyWhatTheCallerNames(t *testing.T) {
	a := art("requirements", "S/requirements.md")
	hashes := map[string]string{"S/requirements.md": h("x")}
	for _, tc := range []struct{ in, want Op }{
		{Proposal{Slice: "S", Artifacts: []Artifact{a}, Trace: &Artifact{Name: "trace", Path: "t.md", SHA256: h("t")}, Observed: hashes, To: Spec},
			Proposal{Slice: "S", Artifacts: []Artifact{{Name: a.Name, Path: a.Path}}, Trace: &Artifact{Name: "trace", Path: "t.md"}, To: Spec}},
		{Quick{Description: "typo", Artifacts: []Artifact{a}}, Quick{Description: "typo", Artifacts: []Artifact{{Name: a.Name, Path: a.Path}}}},
		{ReportFailure{Slice: "S", Mode: ModeConflict, Artifacts: []Artifact{a}}, ReportFailure{Slice: "S", Mode: ModeConflict, Artifacts: []Artifact{{Name: a.Name, Path: a.Path}}}},
		{Resolve{Slice: "S", Role: "TL", Hashes: hashes}, Resolve{Slice: "S", Role: "TL"}},
		{Approve{Slice: "S", Role: "TL", Hashes: hashes}, Approve{Slice: "S", Role: "TL"}},
		{ClearReview{Slice: "S", Role: "TL", Hashes: hashes}, ClearReview{Slice: "S", Role: "TL"}},
		{FlagDrift{Slice: "S", Paths: hashes}, FlagDrift{Slice: "S", Paths: hashes}}, // the paths are the caller's; Observe keeps those that drifted
	} {
		o, ok := tc.in.(Observing)
		if !ok {
			t.Fatalf("%T names files but does not observe them", tc.in)
		}
		if got := o.Unobserved(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%T.Unobserved() = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	// An operation that names no file has nothing to observe.
	for _, op := range []Op{Init{}, AddSlice{}, LockSlice{}, UnlockSlice{}, Beat{}, AddTask{}, CompleteTask{}, ClaimTask{}, CorrectAssumption{}, AgentTimeout{}, ClearMarkers{}, AttachBranch{}} {
		if _, ok := op.(Observing); ok {
			t.Errorf("%T observes files, and is not in the table above", op)
		}
	}
}
