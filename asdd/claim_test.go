package asdd

import (
	"slices"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

func TestClaimTask(t *testing.T) {
	// Each case starts from slice S in IMPLEMENTATION with tasks a, b
	// (wave 1) and c (wave 2, depends on a), runs setup, then the claim.
	cases := []struct {
		name  string
		setup []Op
		claim ClaimTask
		want  reason.Code // "" = accepted
	}{
		{"ready task", nil, ClaimTask{Slice: "S", ID: "a", Agent: "impl-1"}, ""},
		{"claimed by another", []Op{ClaimTask{Slice: "S", ID: "a", Agent: "impl-1"}}, ClaimTask{Slice: "S", ID: "a", Agent: "impl-2"}, reason.Conflict},
		{"claimed again by its claimer", []Op{ClaimTask{Slice: "S", ID: "a", Agent: "impl-1"}}, ClaimTask{Slice: "S", ID: "a", Agent: "impl-1"}, reason.Conflict},
		{"done", []Op{CompleteTask{Slice: "S", ID: "a", Agent: "impl-1"}}, ClaimTask{Slice: "S", ID: "a", Agent: "impl-2"}, reason.InvalidTransition},
		{"earlier wave open", nil, ClaimTask{Slice: "S", ID: "c", Agent: "impl-1"}, reason.InvalidTransition},
		{"unknown task", nil, ClaimTask{Slice: "S", ID: "ghost", Agent: "impl-1"}, reason.NotFound},
		{"unknown slice", nil, ClaimTask{Slice: "NOPE", ID: "a", Agent: "impl-1"}, reason.NotFound},
		{"no agent", nil, ClaimTask{Slice: "S", ID: "a"}, reason.InvalidInput},
		{"slice locked by another", []Op{LockSlice{Slice: "S", Holder: "design"}}, ClaimTask{Slice: "S", ID: "a", Agent: "impl-1"}, reason.SliceLocked},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.drive("S", Implementation)
			w.do(AddTask{Slice: "S", ID: "a", Wave: 1})
			w.do(AddTask{Slice: "S", ID: "b", Wave: 1})
			w.do(AddTask{Slice: "S", ID: "c", Wave: 2, DependsOn: []string{"a"}})
			for _, op := range tc.setup {
				w.do(op)
			}
			if tc.want != "" {
				w.reject(tc.claim, tc.want)
				return
			}
			out := w.do(tc.claim)
			tk := findTask(w.slice("S"), tc.claim.ID)
			if tk.Status != TaskClaimed || tk.Agent != tc.claim.Agent || tk.ClaimedAt != Timestamp(w.now) {
				t.Fatalf("task after claim: %+v", tk)
			}
			if len(out.Events) != 1 || out.Events[0].Type != "task_claimed" || out.Events[0].Agent != tc.claim.Agent {
				t.Fatalf("events %+v", out.Events)
			}
		})
	}
}

func TestClaimedTaskLifecycle(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Implementation)
	w.do(AddTask{Slice: "S", ID: "a", Wave: 1})
	w.do(AddTask{Slice: "S", ID: "b", Wave: 1})
	w.do(ClaimTask{Slice: "S", ID: "a", Agent: "impl-1"})
	var ready []string
	for _, tk := range Ready(w.slice("S")) {
		ready = append(ready, tk.ID)
	}
	if !slices.Equal(ready, []string{"b"}) {
		t.Fatalf("ready %v: a claimed task is not ready for others", ready)
	}
	// only its claimer completes it
	w.reject(CompleteTask{Slice: "S", ID: "a", Agent: "impl-2"}, reason.Conflict)
	w.do(CompleteTask{Slice: "S", ID: "a", Agent: "impl-1"})
	if tk := findTask(w.slice("S"), "a"); tk.Status != TaskDone || tk.Agent != "impl-1" {
		t.Fatalf("task after completion: %+v", tk)
	}
	// an unclaimed task is completed as before
	w.do(CompleteTask{Slice: "S", ID: "b", Agent: "impl-2"})
}
