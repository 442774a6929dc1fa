package impl

import (
	"slices"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// New returns a fresh manifest for a plan, decomposed at now.
func New(planPath, planNumber, planTitle string, now time.Time) (*Manifest, error) {
	if planPath == "" || planNumber == "" || planTitle == "" {
		return nil, reason.New(reason.InvalidInput, "--init requires --plan-path, --plan-number, and --plan-title")
	}
	return &Manifest{
		Version: Version,
		Plan:    Plan{Path: planPath, Number: planNumber, Title: planTitle, DecomposedAt: Stamp(now)},
		Phases:  []Phase{},
		Tasks:   []Task{},
	}, nil
}

// NewTask is what --add-task proposes.
type NewTask struct {
	ID          string
	Phase       int
	Description string
	// DependsOn and BoundedContexts describe the phase; they are used only
	// when this task is the phase's first (the phase is created then).
	DependsOn       []int
	BoundedContexts []string
}

// AddTask appends a pending task, creating its phase on first use. A task id
// that already exists is rejected.
func (m *Manifest) AddTask(nt NewTask, now time.Time) error {
	if nt.ID == "" || nt.Description == "" {
		return reason.New(reason.InvalidInput, "--add-task requires --task-id, --phase, and --description")
	}
	if err := CheckID(nt.ID); err != nil {
		return err
	}
	if _, i := m.find(nt.ID); i >= 0 {
		return reason.New(reason.InvalidInput, "task %s already exists (phase %d)", nt.ID, m.Tasks[i].Phase)
	}
	if m.Phase(nt.Phase) == nil {
		m.Phases = append(m.Phases, Phase{
			Number:          nt.Phase,
			DependsOn:       slices.Clone(nonNilInts(nt.DependsOn)),
			BoundedContexts: slices.Clone(nonNilStrings(nt.BoundedContexts)),
		})
	}
	ts := Stamp(now)
	m.Tasks = append(m.Tasks, Task{
		ID:              nt.ID,
		Phase:           nt.Phase,
		Description:     nt.Description,
		BoundedContexts: slices.Clone(nonNilStrings(nt.BoundedContexts)),
		Status:          Pending,
		Retries:         0,
		CreatedAt:       ts,
		UpdatedAt:       ts,
	})
	return nil
}

// Phase returns the phase with the given number, or nil.
func (m *Manifest) Phase(n int) *Phase {
	for i := range m.Phases {
		if m.Phases[i].Number == n {
			return &m.Phases[i]
		}
	}
	return nil
}

func (m *Manifest) find(id string) (*Task, int) {
	for i := range m.Tasks {
		if m.Tasks[i].ID == id {
			return &m.Tasks[i], i
		}
	}
	return nil, -1
}

// Task returns the task with the given id, or a NOT_FOUND error.
func (m *Manifest) Task(id string) (*Task, error) {
	if id == "" {
		return nil, reason.New(reason.InvalidInput, "a task id is required (--task-id)")
	}
	t, _ := m.find(id)
	if t == nil {
		return nil, reason.New(reason.NotFound, "task %s not found", id)
	}
	return t, nil
}

// StatusUpdate is what --update-status proposes. Empty Branch, CheckResults
// and Error leave those fields as they are, as the script does.
type StatusUpdate struct {
	ID           string
	Status       Status
	Branch       string
	CheckResults string
	Error        string
}

// Transition is the outcome of an accepted status update.
type Transition struct {
	ID      string `json:"id"`
	From    Status `json:"from"`
	To      Status `json:"to"`
	Retries int    `json:"retries"`
	Retry   bool   `json:"retry"`
}

// UpdateStatus moves a task to a new status at now. The task must exist and
// must not be leaving a terminal status (merged, abandoned); failed ->
// in_progress counts a retry. Re-setting the current status is allowed and
// refreshes updated_at (and the optional fields).
func (m *Manifest) UpdateStatus(u StatusUpdate, now time.Time) (Transition, error) {
	if u.ID == "" || u.Status == "" {
		return Transition{}, reason.New(reason.InvalidInput, "--update-status requires --task-id and --status")
	}
	if _, err := ParseStatus(string(u.Status)); err != nil {
		return Transition{}, err
	}
	t, err := m.Task(u.ID)
	if err != nil {
		return Transition{}, err
	}
	from := t.Status
	if from.Terminal() && u.Status != from {
		return Transition{}, reason.New(reason.InvalidTransition, "task %s is %s, a final status: it cannot move to %s", u.ID, from, u.Status).
			With("task", u.ID).With("from", string(from)).With("to", string(u.Status))
	}
	t.Status = u.Status
	t.UpdatedAt = Stamp(now)
	if u.Branch != "" {
		t.Branch = ptr(u.Branch)
	}
	if u.CheckResults != "" {
		t.CheckResults = ptr(u.CheckResults)
	}
	if u.Error != "" {
		t.Error = ptr(u.Error)
	}
	retry := from == Failed && u.Status == InProgress
	if retry {
		t.Retries++
	}
	return Transition{ID: u.ID, From: from, To: u.Status, Retries: t.Retries, Retry: retry}, nil
}

func ptr(s string) *string { return &s }

// Filter selects tasks for --list-tasks; zero fields select everything.
type Filter struct {
	Phase  *int
	Status Status
}

// List returns the tasks that pass the filter, in manifest order.
func (m *Manifest) List(f Filter) []Task {
	out := []Task{}
	for _, t := range m.Tasks {
		if f.Phase != nil && t.Phase != *f.Phase {
			continue
		}
		if f.Status != "" && t.Status != f.Status {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Count is the number of tasks in one status.
type Count struct {
	Status Status
	N      int
}

// Counts returns one count per status, in Statuses order, over tasks.
func Counts(tasks []Task) []Count {
	out := make([]Count, len(Statuses))
	for i, s := range Statuses {
		out[i].Status = s
		for _, t := range tasks {
			if t.Status == s {
				out[i].N++
			}
		}
	}
	return out
}

// PhaseStatus is what --phase-status reports.
type PhaseStatus struct {
	Phase  int
	Total  int
	Counts []Count
}

// PhaseStatus counts the tasks of phase n (a phase with no tasks counts 0).
func (m *Manifest) PhaseStatus(n int) PhaseStatus {
	tasks := m.List(Filter{Phase: &n})
	return PhaseStatus{Phase: n, Total: len(tasks), Counts: Counts(tasks)}
}

// Summary is what --summary reports.
type Summary struct {
	PlanTitle   string
	PlanNumber  string
	TotalPhases int
	TotalTasks  int
	Counts      []Count
}

// Summary counts the whole manifest.
func (m *Manifest) Summary() Summary {
	return Summary{
		PlanTitle:   m.Plan.Title,
		PlanNumber:  m.Plan.Number,
		TotalPhases: len(m.Phases),
		TotalTasks:  len(m.Tasks),
		Counts:      Counts(m.Tasks),
	}
}
