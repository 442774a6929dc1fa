package asdd

import "github.com/custodian-dev/custodian/reason"

// TaskClaimed is the status of a task an agent has claimed (ClaimTask) and
// not yet completed.
const TaskClaimed = "claimed"

// ClaimTask gives a ready task to one agent: of any number of agents that
// claim the same task, the first commit wins and every other claim is a
// CONFLICT (the rule runs again on the value a concurrent commit made, so
// a claim that lost the race sees the winner's). Once claimed, only its
// claimer may complete it (CompleteTask).
type ClaimTask struct {
	Slice string `json:"slice,omitempty"`
	ID    string `json:"id,omitempty"`
	Agent string `json:"agent,omitempty"`
}

// Actor is the claiming agent.
func (o ClaimTask) Actor() string { return o.Agent }

func (o ClaimTask) apply(t *tx) error {
	if o.Agent == "" {
		return reason.New(reason.InvalidInput, "a claim needs the claiming agent")
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if err := t.checkLock(s, o.Agent); err != nil {
		return err
	}
	if s.Status == Blocked {
		return t.haltedError(s, o.Agent)
	}
	tk := findTask(s, o.ID)
	if tk == nil {
		return reason.New(reason.NotFound, "slice %s has no task %s", s.SliceID, o.ID)
	}
	switch tk.Status {
	case TaskDone:
		return reason.New(reason.InvalidTransition, "task %s of %s is already done", o.ID, s.SliceID)
	case TaskClaimed:
		return reason.New(reason.Conflict, "task %s of %s is already claimed by %s (at %s)", o.ID, s.SliceID, tk.Agent, tk.ClaimedAt).
			With("holder", tk.Agent).With("claimed_at", tk.ClaimedAt)
	}
	if why := taskBlocker(s, tk); why != "" {
		return reason.New(reason.InvalidTransition, "%s", why)
	}
	tk.Status, tk.Agent, tk.ClaimedAt = TaskClaimed, o.Agent, t.ts
	t.touch(s)
	t.event("task_claimed", s.SliceID, o.Agent, map[string]any{"task": o.ID, "wave": tk.Wave})
	t.summary("task %s of %s claimed by %s", o.ID, s.SliceID, o.Agent)
	return nil
}

// claimedByOther refuses to let who complete a task another agent claimed.
func claimedByOther(s *Slice, tk *Task, who string) error {
	if tk.Status != TaskClaimed || tk.Agent == who || HeartbeatKey(tk.Agent) == HeartbeatKey(who) {
		return nil
	}
	return reason.New(reason.Conflict, "task %s of %s is claimed by %s", tk.ID, s.SliceID, tk.Agent).With("holder", tk.Agent)
}
