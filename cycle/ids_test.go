package cycle

import (
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// Issue 18 item 6: a new plan task id and a change's agent match
// TaskIDPattern; a newline or pipe in one is INVALID_INPUT.
func TestCycleIdentifiersValidated(t *testing.T) {
	s := run(t, newCycle(t), Iterate{})
	for _, op := range []Op{
		SetPlan{Tasks: []PlanTask{{ID: "T1\n- x", Description: "d", Effort: "small"}}},
		SetPlan{Tasks: []PlanTask{{ID: "T|1", Description: "d", Effort: "small"}}},
		AppendChange{File: "src/a.ts", Action: "create", Agent: "cd\n| forged |"},
	} {
		if _, _, err := Apply(s, op, at(9)); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("%T: %v, want INVALID_INPUT", op, err)
		}
	}
	run(t, s, SetPlan{Tasks: []PlanTask{{ID: "TASK-001", Description: "d", Effort: "small"}}},
		AppendChange{File: "src/a.ts", Action: "create", Agent: "cd"})
}
