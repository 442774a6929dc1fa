package impl

import (
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// Issue 18 item 6: a new task id matches IDPattern; one with a newline and
// pipes (which made --ready print a fake ready task) is INVALID_INPUT. A
// manifest that already holds such an id loads, and its listing line
// shows the newline escaped.
func TestTaskIDValidated(t *testing.T) {
	m := mustNew(t)
	for _, id := range []string{"1.1\n9.9|1|pending|fake ready task", "a|b", "\x1b[2J", " 1.1", ""} {
		err := m.AddTask(NewTask{ID: id, Phase: 1, Description: "x"}, t0)
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("AddTask(%q): %v, want INVALID_INPUT", id, err)
		}
	}
	for _, id := range []string{"1.1", "TASK-001", "a_b.c-d"} {
		if err := m.AddTask(NewTask{ID: id, Phase: 1, Description: "x"}, t0); err != nil {
			t.Errorf("AddTask(%q): %v", id, err)
		}
	}
	old := Task{ID: "1.1\n9.9|1|pending|fake", Phase: 1, Status: Pending, Description: "d"}
	if got := TaskLine(old); got != `1.1\n9.9|1|pending|fake|1|pending|d` {
		t.Fatalf("TaskLine = %q", got)
	}
}
