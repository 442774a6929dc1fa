package cycle

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/custodian-dev/custodian/reason"
)

// TitleMax is the number of characters of the task kept as the title.
const TitleMax = 100

// DefaultMaxIterations is max_iterations when create is not told otherwise
// (the seed's example).
const DefaultMaxIterations = 5

// Event describes what an applied operation did, for the journal.
type Event struct {
	Type    string `json:"type"`    // "cycle.<op>"
	Summary string `json:"summary"` // one sentence
}

// Op is one operation on a cycle. The operations are the exported types of
// this file; Apply runs them.
type Op interface {
	// Name is the operation's name, as the CLI calls it.
	Name() string
	apply(s *State, now time.Time) (string, error)
}

// New returns the initial state of a new cycle, exactly the seed's "Initial
// State (New Cycle)": task is the task as the user gave it (its first 100
// characters become the title and it is the first entry of task_history);
// description is the full description (the task itself when empty).
func New(id, task, description string, maxIterations int, now time.Time) (State, error) {
	if err := CheckID(id); err != nil {
		return State{}, err
	}
	task = strings.TrimSpace(task)
	if task == "" {
		return State{}, reason.New(reason.InvalidInput, "a cycle needs a task")
	}
	if maxIterations < 1 {
		return State{}, reason.New(reason.InvalidInput, "max iterations is %d; it must be at least 1", maxIterations)
	}
	if strings.TrimSpace(description) == "" {
		description = task
	}
	ts := Stamp(now)
	s := State{
		CycleID:       id,
		Title:         truncate(firstLine(task), TitleMax),
		Description:   description,
		TaskHistory:   []string{task},
		Status:        StatusCreated,
		CreatedAt:     ts,
		UpdatedAt:     ts,
		MaxIterations: maxIterations,
		CurrentPhase:  PhaseInit,
	}
	for _, n := range AgentNames {
		s.Agents.Get(n).Status = AgentIdle
	}
	s.normalize()
	if err := Validate(s); err != nil {
		return State{}, err
	}
	return s, nil
}

// Apply runs op on s at time now and returns the next state and what
// happened. s is not modified. A rejected operation returns s unchanged and
// a *reason.Error. Every accepted result passes Validate and
// CheckTransition(s, next).
func Apply(s State, op Op, now time.Time) (State, Event, error) {
	if s.Status == StatusFailed {
		return s, Event{}, reason.New(reason.InvalidTransition, "cycle %s was stopped (%s); a stopped cycle cannot change", s.CycleID, s.FailureReason)
	}
	next := s.Clone()
	next.normalize()
	summary, err := op.apply(&next, now)
	if err != nil {
		return s, Event{}, err
	}
	next.UpdatedAt = Stamp(now)
	recountIterations(&next)
	next.normalize()
	if err := Validate(next); err != nil {
		return s, Event{}, err
	}
	if err := CheckTransition(s, next); err != nil {
		return s, Event{}, err
	}
	return next, Event{Type: "cycle." + op.Name(), Summary: summary}, nil
}

// recountIterations sets each agent's iterations_completed to the number of
// iterations in which it completed its work.
func recountIterations(s *State) {
	for _, n := range AgentNames {
		c := 0
		for _, it := range s.Iterations {
			if it.AgentResults[n].Status == AgentCompleted {
				c++
			}
		}
		s.Agents.Get(n).IterationsCompleted = c
	}
}

// requireRunning rejects agent work on a cycle that is not running.
func requireRunning(s *State, what string) error {
	switch s.Status {
	case StatusRunning:
		if len(s.Iterations) == 0 {
			return reason.New(reason.InvalidTransition, "cycle %s has no iteration; run an iteration before %s", s.CycleID, what)
		}
		return nil
	case StatusPaused:
		return reason.New(reason.InvalidTransition, "cycle %s is paused; resume it before %s", s.CycleID, what)
	case StatusCreated:
		return reason.New(reason.InvalidTransition, "cycle %s has not started; run an iteration before %s", s.CycleID, what)
	case StatusCompleted:
		return reason.New(reason.InvalidTransition, "cycle %s is completed; start a new iteration before %s", s.CycleID, what)
	}
	return reason.New(reason.InvalidTransition, "cycle %s is %s; %s is not possible", s.CycleID, s.Status, what)
}

// Iterate starts the next iteration. The open iteration, if any, is closed
// first (see Complete for what closing records). For the second and later
// iterations the requirements and plan versions move to the next minor
// version (1.0.0 → 1.1.0). An extension (the user's feedback for this
// iteration) is appended to task_history and to the description under a
// "--- ITERATION n ---" line, and logged as requirement_update feedback
// from the user to ra. Agents go back to idle and the phase to init.
type Iterate struct {
	Extension string `json:"extension,omitempty"`
}

func (Iterate) Name() string { return "iterate" }

func (o Iterate) apply(s *State, now time.Time) (string, error) {
	switch s.Status {
	case StatusPaused:
		return "", reason.New(reason.InvalidTransition, "cycle %s is paused; resume it before starting an iteration", s.CycleID)
	case StatusCreated, StatusRunning, StatusCompleted:
	default:
		return "", reason.New(reason.InvalidTransition, "cycle %s is %s; no iteration can start", s.CycleID, s.Status)
	}
	if s.CurrentIteration >= s.MaxIterations {
		return "", reason.New(reason.InvalidTransition, "cycle %s has run %d of its %d iterations; no more may start", s.CycleID, s.CurrentIteration, s.MaxIterations)
	}
	if a := runningAgents(s); len(a) > 0 {
		return "", reason.New(reason.InvalidTransition, "agent %s is still running in iteration %d; it must finish before the next iteration starts", strings.Join(a, ", "), s.CurrentIteration)
	}
	ts := Stamp(now)
	closeIteration(s, ts)
	n := s.CurrentIteration + 1
	ext := strings.TrimSpace(o.Extension)
	if n > 1 {
		if r := s.Requirements; r != nil {
			r.Version, r.LastUpdated = bumpMinor(r.Version), ts
		}
		if p := s.Plan; p != nil {
			p.Version, p.LastUpdated = bumpMinor(p.Version), ts
		}
	}
	if ext != "" {
		s.TaskHistory = append(s.TaskHistory, ext)
		s.Description += fmt.Sprintf("\n\n--- ITERATION %d ---\n%s", n, ext)
		s.Coordination.FeedbackLog = append(s.Coordination.FeedbackLog, FeedbackEntry{
			Timestamp: ts, Source: "user", Target: AgentRA, Content: ext, Type: "requirement_update",
		})
	}
	s.Iterations = append(s.Iterations, IterationRecord{
		Number: n, Extension: ext, StartedAt: ts,
		AgentResults: map[string]AgentResult{}, IssuesFound: []string{},
	})
	s.CurrentIteration = n
	s.Status = StatusRunning
	s.CompletedAt = ""
	s.CurrentPhase = PhaseInit
	s.CompletedPhases = []string{}
	for _, name := range AgentNames {
		a := s.Agents.Get(name)
		a.Status, a.StartedAt, a.CompletedAt, a.Error = AgentIdle, "", "", ""
	}
	if ext != "" {
		return fmt.Sprintf("iteration %d started: %s", n, ext), nil
	}
	return fmt.Sprintf("iteration %d started", n), nil
}

func runningAgents(s *State) []string {
	var out []string
	for _, n := range AgentNames {
		if s.Agents.Get(n).Status == AgentRunning {
			out = append(out, n)
		}
	}
	return out
}

// closeIteration finishes the open iteration: completed_at, the issues
// found (failed tests and phase errors recorded during it, blockers still
// open), resolved when there are none, and its marker in the change log.
func closeIteration(s *State, ts string) {
	if len(s.Iterations) == 0 {
		return
	}
	it := &s.Iterations[len(s.Iterations)-1]
	if it.CompletedAt != "" {
		return
	}
	issues := []string{}
	if t := s.TestResults; t != nil && notBefore(t.LastRun, it.StartedAt) {
		for _, f := range t.FailedTests {
			issues = append(issues, "failed test: "+f)
		}
	}
	for _, e := range s.PhaseErrors {
		if notBefore(e.Timestamp, it.StartedAt) {
			issues = append(issues, "phase "+e.Phase+" error: "+e.Error)
		}
	}
	for _, b := range s.Coordination.Blockers {
		if b.Status == "open" {
			issues = append(issues, "open blocker "+b.ID+": "+b.Description)
		}
	}
	it.CompletedAt = ts
	it.IssuesFound = issues
	it.Resolved = len(issues) == 0
	if s.Changes == nil {
		s.Changes = &Changes{Changes: []ChangeLog{}}
	}
	if s.Changes.IterationMarkers == nil {
		s.Changes.IterationMarkers = map[int]string{}
	}
	s.Changes.IterationMarkers[it.Number] = ts
}

// Complete finishes the cycle: the open iteration is closed (completed_at,
// issues found, resolved, the change-log marker), the status becomes
// completed and the phase complete. No agent may be running.
type Complete struct{}

func (Complete) Name() string { return "complete" }

func (Complete) apply(s *State, now time.Time) (string, error) {
	if s.Status != StatusRunning {
		return "", reason.New(reason.InvalidTransition, "cycle %s is %s; only a running cycle can complete", s.CycleID, s.Status)
	}
	if a := runningAgents(s); len(a) > 0 {
		return "", reason.New(reason.InvalidTransition, "agent %s is still running; it must finish before the cycle completes", strings.Join(a, ", "))
	}
	ts := Stamp(now)
	closeIteration(s, ts)
	s.Status, s.CompletedAt, s.CurrentPhase = StatusCompleted, ts, PhaseComplete
	return fmt.Sprintf("cycle completed after %d iterations", s.CurrentIteration), nil
}

// SetAgent records an agent's progress in the current iteration. Allowed
// moves: idle → running or waiting; running → waiting, completed or failed
// (or running again, to post a message); waiting → running or failed;
// completed or failed → running (rework). Running sets started_at and the
// current phase; completed sets completed_at, adds the phase to
// completed_phases and the result to the iteration (with FilesModified);
// failed needs an error and is logged in phase_errors. When all four agents
// have completed the iteration, the phase becomes aggregation.
type SetAgent struct {
	Agent         string   `json:"agent,omitempty"`
	Status        string   `json:"status,omitempty"`
	Message       string   `json:"message,omitempty"`
	Error         string   `json:"error,omitempty"`
	OutputFiles   []string `json:"output_files,omitempty"`
	FilesModified int      `json:"files_modified,omitempty"`
}

func (SetAgent) Name() string { return "agent" }

var agentMoves = map[string][]string{
	AgentIdle:      {AgentRunning, AgentWaiting},
	AgentRunning:   {AgentRunning, AgentWaiting, AgentCompleted, AgentFailed},
	AgentWaiting:   {AgentRunning, AgentFailed},
	AgentCompleted: {AgentRunning},
	AgentFailed:    {AgentRunning},
}

func (o SetAgent) apply(s *State, now time.Time) (string, error) {
	a := s.Agents.Get(o.Agent)
	if a == nil {
		return "", reason.New(reason.InvalidInput, "%q is not an agent; the agents are %s", o.Agent, strings.Join(AgentNames, ", "))
	}
	if !slices.Contains(AgentStatuses, o.Status) {
		return "", reason.New(reason.InvalidInput, "%q is not an agent status; use one of %s", o.Status, strings.Join(AgentStatuses, ", "))
	}
	if err := requireRunning(s, "agent "+o.Agent+" can report"); err != nil {
		return "", err
	}
	if !slices.Contains(agentMoves[a.Status], o.Status) {
		return "", reason.New(reason.InvalidTransition, "agent %s cannot go from %s to %s", o.Agent, a.Status, o.Status)
	}
	if o.Status == AgentRunning && a.Status == AgentRunning && o.Message == "" && len(o.OutputFiles) == 0 {
		return "", reason.New(reason.InvalidTransition, "agent %s is already running; give a message or output files to report progress", o.Agent)
	}
	if o.Status == AgentFailed && strings.TrimSpace(o.Error) == "" {
		return "", reason.New(reason.InvalidInput, "a failed agent must say why (an error message)")
	}
	if o.FilesModified < 0 {
		return "", reason.New(reason.InvalidInput, "files modified is %d; it cannot be negative", o.FilesModified)
	}
	for _, f := range o.OutputFiles {
		if err := CheckRelPath(f); err != nil {
			return "", err
		}
	}
	ts := Stamp(now)
	it := &s.Iterations[len(s.Iterations)-1]
	from := a.Status
	a.Status = o.Status
	if o.Message != "" {
		a.LastMessage = o.Message
	}
	for _, f := range o.OutputFiles {
		if !slices.Contains(a.OutputFiles, f) {
			a.OutputFiles = append(a.OutputFiles, f)
		}
	}
	res := it.AgentResults[o.Agent]
	switch o.Status {
	case AgentRunning:
		if from != AgentRunning {
			a.StartedAt, a.CompletedAt, a.Error = ts, "", ""
		}
		s.CurrentPhase = o.Agent
		res.Status = AgentRunning
	case AgentWaiting:
		res.Status = AgentWaiting
	case AgentCompleted:
		a.CompletedAt = ts
		if !slices.Contains(s.CompletedPhases, o.Agent) {
			s.CompletedPhases = append(s.CompletedPhases, o.Agent)
		}
		res.Status = AgentCompleted
		res.FilesModified += o.FilesModified
	case AgentFailed:
		a.Error = o.Error
		s.PhaseErrors = append(s.PhaseErrors, PhaseError{Phase: o.Agent, Error: o.Error, Timestamp: ts})
		res.Status = AgentFailed
		res.FilesModified += o.FilesModified
	}
	it.AgentResults[o.Agent] = res
	all := true
	for _, n := range AgentNames {
		if it.AgentResults[n].Status != AgentCompleted {
			all = false
		}
	}
	if all {
		s.CurrentPhase = PhaseAggregation
	}
	if from == o.Status {
		return fmt.Sprintf("agent %s: %s", o.Agent, o.Message), nil
	}
	return fmt.Sprintf("agent %s %s → %s", o.Agent, from, o.Status), nil
}

// AppendChange appends an entry to the change log (which is append-only)
// for the current iteration, and recounts total_files (distinct files).
type AppendChange struct {
	File        string `json:"file,omitempty"`
	Action      string `json:"action,omitempty"`
	Agent       string `json:"agent,omitempty"`
	Description string `json:"description,omitempty"`
}

func (AppendChange) Name() string { return "change" }

func (o AppendChange) apply(s *State, now time.Time) (string, error) {
	if err := CheckRelPath(o.File); err != nil {
		return "", err
	}
	if !slices.Contains(ChangeActions, o.Action) {
		return "", reason.New(reason.InvalidInput, "%q is not a change action; use one of %s", o.Action, strings.Join(ChangeActions, ", "))
	}
	if strings.TrimSpace(o.Agent) == "" {
		return "", reason.New(reason.InvalidInput, "a change must name the agent that made it")
	}
	if err := checkIdent("change agent", o.Agent); err != nil {
		return "", err
	}
	if err := requireRunning(s, "changes are logged"); err != nil {
		return "", err
	}
	if s.Changes == nil {
		s.Changes = &Changes{Changes: []ChangeLog{}, IterationMarkers: map[int]string{}}
	}
	s.Changes.Changes = append(s.Changes.Changes, ChangeLog{
		Timestamp: Stamp(now), File: o.File, Action: o.Action,
		Iteration: s.CurrentIteration, Agent: o.Agent, Description: o.Description,
	})
	files := map[string]bool{}
	for _, c := range s.Changes.Changes {
		files[c.File] = true
	}
	s.Changes.TotalFiles = len(files)
	return fmt.Sprintf("%s %s %s (iteration %d)", o.Agent, pastTense(o.Action), o.File, s.CurrentIteration), nil
}

func pastTense(action string) string {
	switch action {
	case "create":
		return "created"
	case "modify":
		return "modified"
	case "delete":
		return "deleted"
	}
	return action
}

// RecordTests records a test run: version 1.0.0 for the first, the next
// patch version after that; last_run is now.
type RecordTests struct {
	PassRate    float64  `json:"pass_rate,omitempty"`
	Coverage    float64  `json:"coverage,omitempty"`
	FailedTests []string `json:"failed_tests,omitempty"`
	TotalTests  int      `json:"total_tests,omitempty"`
}

func (RecordTests) Name() string { return "test-results" }

func (o RecordTests) apply(s *State, now time.Time) (string, error) {
	if err := requireRunning(s, "test results are recorded"); err != nil {
		return "", err
	}
	prev, last := "", ""
	if s.TestResults != nil {
		prev, last = s.TestResults.Version, s.TestResults.LastRun
	}
	s.TestResults = &TestResults{
		Version: nextVersion(s, prev, last), PassRate: o.PassRate, Coverage: o.Coverage,
		FailedTests: slices.Clone(o.FailedTests), TotalTests: o.TotalTests, LastRun: Stamp(now),
	}
	return fmt.Sprintf("test results %s: %g%% of %d passed, coverage %g%%", s.TestResults.Version, o.PassRate, o.TotalTests, o.Coverage), nil
}

// SetRequirements replaces the requirements: version 1.0.0 for the first,
// the next patch version after that.
type SetRequirements struct {
	Specification string   `json:"specification,omitempty"`
	EdgeCases     []string `json:"edge_cases,omitempty"`
}

func (SetRequirements) Name() string { return "requirements" }

func (o SetRequirements) apply(s *State, now time.Time) (string, error) {
	if err := requireRunning(s, "requirements are updated"); err != nil {
		return "", err
	}
	if strings.TrimSpace(o.Specification) == "" {
		return "", reason.New(reason.InvalidInput, "requirements need a specification")
	}
	prev, last := "", ""
	if s.Requirements != nil {
		prev, last = s.Requirements.Version, s.Requirements.LastUpdated
	}
	s.Requirements = &Requirements{
		Version: nextVersion(s, prev, last), Specification: o.Specification,
		EdgeCases: slices.Clone(o.EdgeCases), LastUpdated: Stamp(now),
	}
	return "requirements " + s.Requirements.Version, nil
}

// SetExploration replaces the exploration findings (versioned like the
// requirements).
type SetExploration struct {
	ArchitectureSummary string   `json:"architecture_summary,omitempty"`
	IntegrationPoints   []string `json:"integration_points,omitempty"`
	IdentifiedRisks     []string `json:"identified_risks,omitempty"`
}

func (SetExploration) Name() string { return "exploration" }

func (o SetExploration) apply(s *State, now time.Time) (string, error) {
	if err := requireRunning(s, "exploration is updated"); err != nil {
		return "", err
	}
	prev, last := "", ""
	if s.Exploration != nil {
		prev, last = s.Exploration.Version, s.Exploration.LastUpdated
	}
	s.Exploration = &Exploration{
		Version: nextVersion(s, prev, last), ArchitectureSummary: o.ArchitectureSummary,
		IntegrationPoints: slices.Clone(o.IntegrationPoints), IdentifiedRisks: slices.Clone(o.IdentifiedRisks),
		LastUpdated: Stamp(now),
	}
	return "exploration " + s.Exploration.Version, nil
}

// SetPlan replaces the plan (versioned like the requirements). The tasks
// must pass CheckPlanTasks.
type SetPlan struct {
	Tasks                []PlanTask `json:"tasks,omitempty"`
	TotalEstimatedEffort string     `json:"total_estimated_effort,omitempty"`
	CriticalPath         []string   `json:"critical_path,omitempty"`
}

func (SetPlan) Name() string { return "plan" }

func (o SetPlan) apply(s *State, now time.Time) (string, error) {
	if err := requireRunning(s, "the plan is updated"); err != nil {
		return "", err
	}
	tasks := slices.Clone(o.Tasks)
	for i := range tasks {
		tasks[i].DependsOn = slices.Clone(tasks[i].DependsOn)
		tasks[i].Files = slices.Clone(tasks[i].Files)
		if tasks[i].Status == "" {
			tasks[i].Status = "pending"
		}
	}
	for _, t := range tasks {
		if err := checkIdent("plan task id", t.ID); err != nil {
			return "", err
		}
	}
	if err := CheckPlanTasks(tasks, o.CriticalPath); err != nil {
		return "", err
	}
	prev, last := "", ""
	if s.Plan != nil {
		prev, last = s.Plan.Version, s.Plan.LastUpdated
	}
	s.Plan = &Plan{
		Version: nextVersion(s, prev, last), Tasks: tasks, TotalEstimatedEffort: o.TotalEstimatedEffort,
		CriticalPath: slices.Clone(o.CriticalPath), LastUpdated: Stamp(now),
	}
	return fmt.Sprintf("plan %s: %d tasks", s.Plan.Version, len(tasks)), nil
}

// SetTask changes one plan task's status (and, if given, its assignee),
// bumping the plan's patch version. A task may start or complete only when
// every task it depends on is completed.
type SetTask struct {
	ID         string `json:"id,omitempty"`
	Status     string `json:"status,omitempty"`
	AssignedTo string `json:"assigned_to,omitempty"`
}

func (SetTask) Name() string { return "task" }

func (o SetTask) apply(s *State, now time.Time) (string, error) {
	if err := requireRunning(s, "plan tasks are updated"); err != nil {
		return "", err
	}
	if s.Plan == nil {
		return "", reason.New(reason.NotFound, "cycle %s has no plan yet", s.CycleID)
	}
	if !slices.Contains(TaskStatuses, o.Status) {
		return "", reason.New(reason.InvalidInput, "%q is not a task status; use one of %s", o.Status, strings.Join(TaskStatuses, ", "))
	}
	i := slices.IndexFunc(s.Plan.Tasks, func(t PlanTask) bool { return t.ID == o.ID })
	if i < 0 {
		return "", reason.New(reason.NotFound, "the plan has no task %s", o.ID)
	}
	t := &s.Plan.Tasks[i]
	if o.Status == "in_progress" || o.Status == "completed" {
		for _, d := range t.DependsOn {
			j := slices.IndexFunc(s.Plan.Tasks, func(t PlanTask) bool { return t.ID == d })
			if s.Plan.Tasks[j].Status != "completed" {
				return "", reason.New(reason.InvalidTransition, "task %s depends on %s, which is %s, not completed", o.ID, d, s.Plan.Tasks[j].Status)
			}
		}
	}
	from := t.Status
	if from == o.Status && (o.AssignedTo == "" || o.AssignedTo == t.AssignedTo) {
		return "", reason.New(reason.InvalidTransition, "task %s is already %s", o.ID, o.Status)
	}
	t.Status = o.Status
	if o.AssignedTo != "" {
		t.AssignedTo = o.AssignedTo
	}
	s.Plan.Version, s.Plan.LastUpdated = nextVersion(s, s.Plan.Version, s.Plan.LastUpdated), Stamp(now)
	return fmt.Sprintf("task %s %s → %s (plan %s)", o.ID, from, o.Status, s.Plan.Version), nil
}

// AddFeedback appends to the feedback log (append-only). The source is an
// agent or "user"; the target is an agent or "user".
type AddFeedback struct {
	Source  string `json:"source,omitempty"`
	Target  string `json:"target,omitempty"`
	Content string `json:"content,omitempty"`
	Type    string `json:"type,omitempty"`
}

func (AddFeedback) Name() string { return "feedback" }

func (o AddFeedback) apply(s *State, now time.Time) (string, error) {
	parties := append(slices.Clone(AgentNames), "user")
	if !slices.Contains(parties, o.Source) {
		return "", reason.New(reason.InvalidInput, "feedback source %q is not one of %s", o.Source, strings.Join(parties, ", "))
	}
	if !slices.Contains(parties, o.Target) {
		return "", reason.New(reason.InvalidInput, "feedback target %q is not one of %s", o.Target, strings.Join(parties, ", "))
	}
	if !slices.Contains(FeedbackTypes, o.Type) {
		return "", reason.New(reason.InvalidInput, "%q is not a feedback type; use one of %s", o.Type, strings.Join(FeedbackTypes, ", "))
	}
	if strings.TrimSpace(o.Content) == "" {
		return "", reason.New(reason.InvalidInput, "feedback needs content")
	}
	s.Coordination.FeedbackLog = append(s.Coordination.FeedbackLog, FeedbackEntry{
		Timestamp: Stamp(now), Source: o.Source, Target: o.Target, Content: o.Content, Type: o.Type,
	})
	return fmt.Sprintf("%s from %s to %s", o.Type, o.Source, o.Target), nil
}

// ProposeDecision records a pending decision. Without an id it gets the
// next DEC-nnn.
type ProposeDecision struct {
	ID          string   `json:"id,omitempty"`
	Description string   `json:"description,omitempty"`
	Options     []string `json:"options,omitempty"`
}

func (ProposeDecision) Name() string { return "decide" }

func (o ProposeDecision) apply(s *State, _ time.Time) (string, error) {
	if strings.TrimSpace(o.Description) == "" {
		return "", reason.New(reason.InvalidInput, "a decision needs a description")
	}
	if len(o.Options) == 0 {
		return "", reason.New(reason.InvalidInput, "a decision needs at least one option")
	}
	for i, opt := range o.Options {
		if strings.TrimSpace(opt) == "" {
			return "", reason.New(reason.InvalidInput, "decision option %d is empty", i+1)
		}
		if slices.Contains(o.Options[:i], opt) {
			return "", reason.New(reason.InvalidInput, "decision option %q is given twice", opt)
		}
	}
	id := o.ID
	if id == "" {
		id = nextID("DEC", len(s.Coordination.PendingDecisions), func(id string) bool {
			_, ok := findDecision(s.Coordination.PendingDecisions, id)
			return ok
		})
	} else if _, dup := findDecision(s.Coordination.PendingDecisions, id); dup {
		return "", reason.New(reason.InvalidInput, "decision %s already exists", id)
	}
	s.Coordination.PendingDecisions = append(s.Coordination.PendingDecisions, Decision{
		ID: id, Description: o.Description, Options: slices.Clone(o.Options), Status: "pending",
	})
	return fmt.Sprintf("decision %s proposed: %s", id, o.Description), nil
}

// MakeDecision chooses one of a pending decision's options.
type MakeDecision struct {
	ID     string `json:"id,omitempty"`
	Choice string `json:"choice,omitempty"`
	MadeBy string `json:"made_by,omitempty"`
}

func (MakeDecision) Name() string { return "decide" }

func (o MakeDecision) apply(s *State, _ time.Time) (string, error) {
	d, err := decision(s, o.ID)
	if err != nil {
		return "", err
	}
	if d.Status != "pending" {
		return "", reason.New(reason.InvalidTransition, "decision %s is already %s (%s by %s)", d.ID, d.Status, d.ChosenOption, d.MadeBy)
	}
	if !slices.Contains(d.Options, o.Choice) {
		return "", reason.New(reason.InvalidInput, "%q is not an option of decision %s; choose one of %s", o.Choice, d.ID, strings.Join(d.Options, ", "))
	}
	if strings.TrimSpace(o.MadeBy) == "" {
		return "", reason.New(reason.InvalidInput, "a decision must say who made it")
	}
	d.Status, d.ChosenOption, d.MadeBy = "made", o.Choice, o.MadeBy
	return fmt.Sprintf("decision %s made by %s: %s", d.ID, o.MadeBy, o.Choice), nil
}

// ImplementDecision marks a made decision implemented.
type ImplementDecision struct {
	ID string `json:"id,omitempty"`
}

func (ImplementDecision) Name() string { return "decide" }

func (o ImplementDecision) apply(s *State, _ time.Time) (string, error) {
	d, err := decision(s, o.ID)
	if err != nil {
		return "", err
	}
	if d.Status != "made" {
		return "", reason.New(reason.InvalidTransition, "decision %s is %s; only a made decision can be implemented", d.ID, d.Status)
	}
	d.Status = "implemented"
	return fmt.Sprintf("decision %s implemented", d.ID), nil
}

func decision(s *State, id string) (*Decision, error) {
	for i := range s.Coordination.PendingDecisions {
		if s.Coordination.PendingDecisions[i].ID == id {
			return &s.Coordination.PendingDecisions[i], nil
		}
	}
	return nil, reason.New(reason.NotFound, "cycle %s has no decision %s", s.CycleID, id)
}

// ReportBlocker records an open blocker. Without an id it gets the next
// BLK-nnn.
type ReportBlocker struct {
	ID          string `json:"id,omitempty"`
	Description string `json:"description,omitempty"`
	ReportedBy  string `json:"reported_by,omitempty"`
}

func (ReportBlocker) Name() string { return "block" }

func (o ReportBlocker) apply(s *State, _ time.Time) (string, error) {
	if strings.TrimSpace(o.Description) == "" {
		return "", reason.New(reason.InvalidInput, "a blocker needs a description")
	}
	if strings.TrimSpace(o.ReportedBy) == "" {
		return "", reason.New(reason.InvalidInput, "a blocker must say who reported it")
	}
	id := o.ID
	if id == "" {
		id = nextID("BLK", len(s.Coordination.Blockers), func(id string) bool {
			_, ok := findBlocker(s.Coordination.Blockers, id)
			return ok
		})
	} else if _, dup := findBlocker(s.Coordination.Blockers, id); dup {
		return "", reason.New(reason.InvalidInput, "blocker %s already exists", id)
	}
	s.Coordination.Blockers = append(s.Coordination.Blockers, Blocker{
		ID: id, Description: o.Description, ReportedBy: o.ReportedBy, Status: "open",
	})
	return fmt.Sprintf("blocker %s reported by %s: %s", id, o.ReportedBy, o.Description), nil
}

// ResolveBlocker resolves a blocker, or records a workaround for it: open →
// resolved or workaround, workaround → resolved.
type ResolveBlocker struct {
	ID         string `json:"id,omitempty"`
	Resolution string `json:"resolution,omitempty"`
	Workaround bool   `json:"workaround,omitempty"`
}

func (ResolveBlocker) Name() string { return "block" }

func (o ResolveBlocker) apply(s *State, _ time.Time) (string, error) {
	var b *Blocker
	for i := range s.Coordination.Blockers {
		if s.Coordination.Blockers[i].ID == o.ID {
			b = &s.Coordination.Blockers[i]
		}
	}
	if b == nil {
		return "", reason.New(reason.NotFound, "cycle %s has no blocker %s", s.CycleID, o.ID)
	}
	if strings.TrimSpace(o.Resolution) == "" {
		return "", reason.New(reason.InvalidInput, "say how blocker %s was resolved or worked around", o.ID)
	}
	to := "resolved"
	if o.Workaround {
		to = "workaround"
	}
	if b.Status == "resolved" || b.Status == to {
		return "", reason.New(reason.InvalidTransition, "blocker %s is already %s", o.ID, b.Status)
	}
	b.Status, b.Resolution = to, o.Resolution
	return fmt.Sprintf("blocker %s %s: %s", o.ID, to, o.Resolution), nil
}

// Pause pauses a running cycle: agents checking signals get "pause". The
// reason, if any, goes to the journal.
type Pause struct {
	Reason string `json:"reason,omitempty"`
}

func (Pause) Name() string { return "pause" }

func (o Pause) apply(s *State, _ time.Time) (string, error) {
	if s.Status != StatusRunning {
		return "", reason.New(reason.InvalidTransition, "cycle %s is %s; only a running cycle can be paused", s.CycleID, s.Status)
	}
	s.Status = StatusPaused
	return withReason("cycle paused", o.Reason), nil
}

// Resume resumes a paused cycle.
type Resume struct {
	Reason string `json:"reason,omitempty"`
}

func (Resume) Name() string { return "resume" }

func (o Resume) apply(s *State, _ time.Time) (string, error) {
	if s.Status != StatusPaused {
		return "", reason.New(reason.InvalidTransition, "cycle %s is %s; only a paused cycle can be resumed", s.CycleID, s.Status)
	}
	s.Status = StatusRunning
	return withReason("cycle resumed", o.Reason), nil
}

func withReason(s, why string) string {
	if why = strings.TrimSpace(why); why != "" {
		return s + ": " + why
	}
	return s
}

// nextVersion is the version of an update of shared context whose current
// version is cur (last updated at last): 1.0.0 for the first; the next
// minor for the first update in a new iteration (so that test results and
// exploration, like requirements and plan, move 1.0.x → 1.1.0 with the
// iterations); the next patch for another update in the same iteration.
func nextVersion(s *State, cur, last string) string {
	if cur == "" {
		return FirstVersion.String()
	}
	if n := len(s.Iterations); n > 0 && !notBefore(last, s.Iterations[n-1].StartedAt) {
		return bumpMinor(cur)
	}
	return bumpPatch(cur)
}

// notBefore reports whether timestamp a is at or after timestamp b.
func notBefore(a, b string) bool {
	ta, err1 := time.Parse(time.RFC3339, a)
	tb, err2 := time.Parse(time.RFC3339, b)
	if err1 != nil || err2 != nil {
		return a >= b
	}
	return !ta.Before(tb)
}

// Stop stops a cycle for good: status failed with the reason as
// failure_reason; agents checking signals get "stop". A completed cycle has
// nothing to stop.
type Stop struct {
	Reason string `json:"reason,omitempty"`
}

func (Stop) Name() string { return "stop" }

func (o Stop) apply(s *State, _ time.Time) (string, error) {
	if strings.TrimSpace(o.Reason) == "" {
		return "", reason.New(reason.InvalidInput, "stopping a cycle needs a reason")
	}
	switch s.Status {
	case StatusCreated, StatusRunning, StatusPaused:
	default:
		return "", reason.New(reason.InvalidTransition, "cycle %s is %s; there is nothing to stop", s.CycleID, s.Status)
	}
	s.Status, s.FailureReason = StatusFailed, o.Reason
	return "cycle stopped: " + o.Reason, nil
}

func nextID(prefix string, n int, taken func(string) bool) string {
	for i := n + 1; ; i++ {
		id := fmt.Sprintf("%s-%03d", prefix, i)
		if !taken(id) {
			return id
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return strings.TrimSpace(s[:i])
	}
	return s
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
