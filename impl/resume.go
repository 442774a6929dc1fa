package impl

import (
	"slices"
)

// MaxRetries is how many times a failed task may be retried before the
// orchestrator abandons it (the plugin's task lifecycle: three attempts).
const MaxRetries = 2

// ResumeState says what --continue found.
type ResumeState string

// The outcomes of Continue.
const (
	// ResumeReady: the phase has tasks that may start now.
	ResumeReady ResumeState = "ready"
	// ResumeWaiting: the phase's unfinished tasks are all in flight
	// (in_progress, validating, passed), in conflict or out of retries.
	ResumeWaiting ResumeState = "waiting"
	// ResumeComplete: every task is merged or abandoned.
	ResumeComplete ResumeState = "complete"
	// ResumeBlocked: no phase with unfinished tasks has its dependency
	// phases done (the dependencies form a cycle).
	ResumeBlocked ResumeState = "blocked"
)

// Resume is where an interrupted orchestration picks up.
type Resume struct {
	Phase     *int        `json:"phase"`
	State     ResumeState `json:"status"`
	WaitingOn []int       `json:"waiting_on,omitempty"`
	Tasks     []Task      `json:"tasks"`
	// PlanStale is set when the plan document changed since decomposition.
	PlanStale *PlanChange `json:"plan_stale,omitempty"`
}

// Runnable reports whether a task may be spawned now, its phase permitting:
// it is pending, or it failed and has retries left.
func Runnable(t Task) bool {
	return t.Status == Pending || (t.Status == Failed && t.Retries < MaxRetries)
}

// PhaseNumbers returns every phase number the manifest mentions (declared
// phases and the phases of tasks), ascending.
func (m *Manifest) PhaseNumbers() []int {
	var ns []int
	for _, p := range m.Phases {
		ns = append(ns, p.Number)
	}
	for _, t := range m.Tasks {
		ns = append(ns, t.Phase)
	}
	slices.Sort(ns)
	return slices.Compact(ns)
}

// PhaseDone reports whether every task of phase n is merged or abandoned
// (a phase without tasks is done).
func (m *Manifest) PhaseDone(n int) bool {
	for _, t := range m.Tasks {
		if t.Phase == n && !t.Status.Terminal() {
			return false
		}
	}
	return true
}

// pendingDeps returns the dependency phases of phase n that are not done.
func (m *Manifest) pendingDeps(n int) []int {
	p := m.Phase(n)
	if p == nil {
		return nil
	}
	var out []int
	for _, d := range p.DependsOn {
		if d != n && !m.PhaseDone(d) && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// Continue finds where to resume: the first phase, in number order, with
// unfinished tasks whose dependency phases are all done, and its runnable
// tasks.
func (m *Manifest) Continue() Resume {
	var firstBlocked *int
	var blockedOn []int
	for _, n := range m.PhaseNumbers() {
		if m.PhaseDone(n) {
			continue
		}
		if deps := m.pendingDeps(n); len(deps) > 0 {
			if firstBlocked == nil {
				firstBlocked, blockedOn = &n, deps
			}
			continue
		}
		r := Resume{Phase: &n, State: ResumeWaiting, Tasks: []Task{}}
		for _, t := range m.Tasks {
			if t.Phase == n && Runnable(t) {
				r.Tasks = append(r.Tasks, t)
			}
		}
		if len(r.Tasks) > 0 {
			r.State = ResumeReady
		}
		return r
	}
	if firstBlocked != nil {
		return Resume{Phase: firstBlocked, State: ResumeBlocked, WaitingOn: blockedOn, Tasks: []Task{}}
	}
	return Resume{State: ResumeComplete, Tasks: []Task{}}
}

// Ready returns every task that may start now, in manifest order: runnable
// tasks whose phase's dependency phases are all done.
func (m *Manifest) Ready() []Task {
	out := []Task{}
	ok := map[int]bool{}
	for _, n := range m.PhaseNumbers() {
		ok[n] = len(m.pendingDeps(n)) == 0
	}
	for _, t := range m.Tasks {
		if ok[t.Phase] && Runnable(t) {
			out = append(out, t)
		}
	}
	return out
}
