package asdd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// AddTask adds a task to a slice's plan.
type AddTask struct {
	Slice     string   `json:"slice,omitempty"`
	ID        string   `json:"id,omitempty"`
	Title     string   `json:"title,omitempty"`
	Wave      int      `json:"wave,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	// Requirement is the REQ-NNN the task serves.
	Requirement string `json:"requirement,omitempty"`
	By          string `json:"by,omitempty"`
}

// Actor is who planned the task.
func (o AddTask) Actor() string { return orDefault(o.By, "task_planning") }

func (o AddTask) apply(t *tx) error {
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if o.By != "" {
		if err := t.checkLock(s, o.By); err != nil {
			return err
		}
	}
	if !taskIDRE().MatchString(o.ID) {
		return reason.New(reason.InvalidInput, "task id %q is not valid", o.ID)
	}
	if o.Wave < 1 {
		return reason.New(reason.InvalidInput, "task %s: wave must be 1 or more, got %d", o.ID, o.Wave)
	}
	if findTask(s, o.ID) != nil {
		return reason.New(reason.InvalidInput, "slice %s already has task %s", s.SliceID, o.ID)
	}
	deps := slices.Clone(o.DependsOn)
	slices.Sort(deps)
	deps = slices.Compact(deps)
	for _, d := range deps {
		dt := findTask(s, d)
		if dt == nil {
			return reason.New(reason.InvalidInput, "task %s depends on %s, which slice %s does not have (add dependencies first)", o.ID, d, s.SliceID)
		}
		if dt.Wave > o.Wave {
			return reason.New(reason.InvalidInput, "task %s (wave %d) cannot depend on %s of a later wave %d", o.ID, o.Wave, d, dt.Wave)
		}
	}
	s.Tasks = append(s.Tasks, Task{ID: o.ID, Title: o.Title, Wave: o.Wave, DependsOn: deps, Requirement: o.Requirement, Status: TaskPending})
	t.touch(s)
	t.event("task_added", s.SliceID, o.By, map[string]any{"task": o.ID, "wave": o.Wave})
	t.summary("add task %s (wave %d) to %s", o.ID, o.Wave, s.SliceID)
	return nil
}

func findTask(s *Slice, id string) *Task {
	for i := range s.Tasks {
		if s.Tasks[i].ID == id {
			return &s.Tasks[i]
		}
	}
	return nil
}

// Ready returns the tasks that may start now: pending (not claimed, not
// done), every dependency done, and every task of every earlier wave done
// (wave N starts only after wave N-1 is complete).
func Ready(s *Slice) []Task {
	var out []Task
	for _, tk := range s.Tasks {
		if tk.Status != TaskDone && tk.Status != TaskClaimed && taskBlocker(s, &tk) == "" {
			out = append(out, tk)
		}
	}
	return out
}

// taskBlocker says why tk may not start yet, or "" if it may.
func taskBlocker(s *Slice, tk *Task) string {
	var open []string
	for _, o := range s.Tasks {
		if o.Wave < tk.Wave && o.Status != TaskDone {
			open = append(open, o.ID)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("task %s is in wave %d; earlier waves have open tasks %s", tk.ID, tk.Wave, strings.Join(open, ", "))
	}
	for _, d := range tk.DependsOn {
		if dt := findTask(s, d); dt == nil || dt.Status != TaskDone {
			open = append(open, d)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("task %s waits for %s", tk.ID, strings.Join(open, ", "))
	}
	return ""
}

// CompleteTask marks a ready task done.
type CompleteTask struct {
	Slice string `json:"slice,omitempty"`
	ID    string `json:"id,omitempty"`
	Agent string `json:"agent,omitempty"`
}

// Actor is the agent that did the task.
func (o CompleteTask) Actor() string { return orDefault(o.Agent, "implementation") }

func (o CompleteTask) apply(t *tx) error {
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if err := t.checkLock(s, o.Actor()); err != nil {
		return err
	}
	if s.Status == Blocked {
		return t.haltedError(s, o.Actor())
	}
	tk := findTask(s, o.ID)
	if tk == nil {
		return reason.New(reason.NotFound, "slice %s has no task %s", s.SliceID, o.ID)
	}
	if tk.Status == TaskDone {
		return reason.New(reason.InvalidTransition, "task %s of %s is already done", o.ID, s.SliceID)
	}
	if err := claimedByOther(s, tk, o.Actor()); err != nil {
		return err
	}
	if why := taskBlocker(s, tk); why != "" {
		return reason.New(reason.InvalidTransition, "%s", why)
	}
	tk.Status, tk.Agent, tk.CompletedAt = TaskDone, o.Agent, t.ts
	t.touch(s)
	t.event("task_done", s.SliceID, o.Agent, map[string]any{"task": o.ID, "wave": tk.Wave})
	t.summary("task %s of %s done", o.ID, s.SliceID)
	return nil
}
