package cycle

import (
	"fmt"
	"math"
	"path"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Validate checks that s is a well-formed cycle: every enumerated field
// holds one of the seed's values, every timestamp is RFC 3339, numbers are
// in range, iterations are numbered 1..current_iteration, plan tasks have
// unique ids and acyclic dependencies that exist, decisions and blockers
// have unique ids and consistent fields. The first problem found is
// returned as an INVALID_INPUT error naming the field.
func Validate(s State) error {
	v := &validator{}
	v.check(s)
	if v.err != nil {
		return v.err
	}
	return nil
}

type validator struct{ err error }

func (v *validator) fail(format string, args ...any) {
	if v.err == nil {
		v.err = reason.New(reason.InvalidInput, format, args...)
	}
}

func (v *validator) oneOf(field, val string, allowed []string) {
	if !slices.Contains(allowed, val) {
		v.fail("%s is %q, not one of %s", field, val, strings.Join(allowed, ", "))
	}
}

func (v *validator) time(field, val string, optional bool) {
	if val == "" {
		if !optional {
			v.fail("%s is missing", field)
		}
		return
	}
	if _, err := time.Parse(time.RFC3339, val); err != nil {
		v.fail("%s is %q, not an RFC 3339 timestamp", field, val)
	}
}

func (v *validator) version(field, val string) {
	if _, err := ParseVersion(val); err != nil {
		v.fail("%s: %v", field, err)
	}
}

func (v *validator) percent(field string, val float64) {
	if math.IsNaN(val) || val < 0 || val > 100 {
		v.fail("%s is %v, outside 0-100", field, val)
	}
}

func (v *validator) check(s State) {
	if err := CheckID(s.CycleID); err != nil {
		v.fail("cycle_id: %s", err.(*reason.Error).Message)
	}
	if strings.TrimSpace(s.Title) == "" {
		v.fail("title is empty")
	}
	v.oneOf("status", s.Status, Statuses)
	v.time("created_at", s.CreatedAt, false)
	v.time("updated_at", s.UpdatedAt, false)
	v.time("completed_at", s.CompletedAt, true)
	if s.MaxIterations < 1 {
		v.fail("max_iterations is %d; it must be at least 1", s.MaxIterations)
	}
	if s.CurrentIteration < 0 || s.CurrentIteration > s.MaxIterations {
		v.fail("current_iteration is %d, outside 0-%d (max_iterations)", s.CurrentIteration, s.MaxIterations)
	}
	if s.Status == StatusFailed && s.FailureReason == "" {
		v.fail("status is failed but failure_reason is empty")
	}
	for _, n := range AgentNames {
		a := s.Agents.Get(n)
		v.oneOf("agents."+n+".status", a.Status, AgentStatuses)
		v.time("agents."+n+".started_at", a.StartedAt, true)
		v.time("agents."+n+".completed_at", a.CompletedAt, true)
		if a.IterationsCompleted < 0 {
			v.fail("agents.%s.iterations_completed is negative", n)
		}
		for _, f := range a.OutputFiles {
			v.relPath("agents."+n+".output_files", f)
		}
	}
	v.oneOf("current_phase", s.CurrentPhase, Phases)
	for i, p := range s.CompletedPhases {
		v.oneOf(fmt.Sprintf("completed_phases[%d]", i), p, Phases)
	}
	for i, e := range s.PhaseErrors {
		if e.Phase == "" || e.Error == "" {
			v.fail("phase_errors[%d] needs a phase and an error", i)
		}
		v.time(fmt.Sprintf("phase_errors[%d].timestamp", i), e.Timestamp, false)
	}
	if r := s.Requirements; r != nil {
		v.version("requirements.version", r.Version)
		v.time("requirements.last_updated", r.LastUpdated, false)
	}
	if e := s.Exploration; e != nil {
		v.version("exploration.version", e.Version)
		v.time("exploration.last_updated", e.LastUpdated, false)
	}
	if p := s.Plan; p != nil {
		v.version("plan.version", p.Version)
		v.time("plan.last_updated", p.LastUpdated, false)
		if err := CheckPlanTasks(p.Tasks, p.CriticalPath); err != nil && v.err == nil {
			v.err = err
		}
	}
	if c := s.Changes; c != nil {
		if c.TotalFiles < 0 {
			v.fail("changes.total_files is negative")
		}
		for i, e := range c.Changes {
			// Cheap checks first; the field name is built only to report.
			if validTime(e.Timestamp) && CheckRelPath(e.File) == nil && slices.Contains(ChangeActions, e.Action) &&
				e.Iteration >= 1 && e.Iteration <= s.CurrentIteration && e.Agent != "" {
				continue
			}
			f := fmt.Sprintf("changes.changes[%d]", i)
			v.time(f+".timestamp", e.Timestamp, false)
			v.relPath(f+".file", e.File)
			v.oneOf(f+".action", e.Action, ChangeActions)
			if e.Iteration < 1 || e.Iteration > s.CurrentIteration {
				v.fail("%s.iteration is %d, outside 1-%d", f, e.Iteration, s.CurrentIteration)
			}
			if e.Agent == "" {
				v.fail("%s.agent is empty", f)
			}
		}
		for n, ts := range c.IterationMarkers {
			if n < 1 || n > s.CurrentIteration {
				v.fail("changes.iteration_markers has iteration %d, outside 1-%d", n, s.CurrentIteration)
			}
			v.time(fmt.Sprintf("changes.iteration_markers[%d]", n), ts, false)
		}
	}
	if t := s.TestResults; t != nil {
		v.version("test_results.version", t.Version)
		v.percent("test_results.pass_rate", t.PassRate)
		v.percent("test_results.coverage", t.Coverage)
		if t.TotalTests < 0 {
			v.fail("test_results.total_tests is negative")
		}
		if len(t.FailedTests) > t.TotalTests {
			v.fail("test_results lists %d failed tests out of %d in total", len(t.FailedTests), t.TotalTests)
		}
		v.time("test_results.last_run", t.LastRun, false)
	}
	if len(s.Iterations) != s.CurrentIteration {
		v.fail("current_iteration is %d but %d iterations are recorded", s.CurrentIteration, len(s.Iterations))
	}
	for i, it := range s.Iterations {
		f := fmt.Sprintf("iterations[%d]", i)
		if it.Number != i+1 {
			v.fail("%s.number is %d; iterations are numbered from 1 without gaps", f, it.Number)
		}
		v.time(f+".started_at", it.StartedAt, false)
		v.time(f+".completed_at", it.CompletedAt, true)
		if it.CompletedAt == "" && i != len(s.Iterations)-1 {
			v.fail("%s is not completed but a later iteration started", f)
		}
		for a, r := range it.AgentResults {
			if !slices.Contains(AgentNames, a) {
				v.fail("%s.agent_results names %q, not one of %s", f, a, strings.Join(AgentNames, ", "))
			}
			if r.FilesModified < 0 {
				v.fail("%s.agent_results.%s.files_modified is negative", f, a)
			}
		}
	}
	for i, e := range s.Coordination.FeedbackLog {
		if validTime(e.Timestamp) && e.Source != "" && e.Target != "" && slices.Contains(FeedbackTypes, e.Type) {
			continue
		}
		f := fmt.Sprintf("coordination.feedback_log[%d]", i)
		v.time(f+".timestamp", e.Timestamp, false)
		if e.Source == "" || e.Target == "" {
			v.fail("%s needs a source and a target", f)
		}
		v.oneOf(f+".type", e.Type, FeedbackTypes)
	}
	seen := map[string]bool{}
	for i, d := range s.Coordination.PendingDecisions {
		f := fmt.Sprintf("coordination.pending_decisions[%d]", i)
		if d.ID == "" || seen[d.ID] {
			v.fail("%s has an empty or duplicate id %q", f, d.ID)
		}
		seen[d.ID] = true
		v.oneOf(f+".status", d.Status, DecisionStatuses)
		if len(d.Options) == 0 {
			v.fail("%s (%s) has no options", f, d.ID)
		}
		if d.Status != "pending" && (d.ChosenOption == "" || d.MadeBy == "") {
			v.fail("decision %s is %s but has no chosen_option or made_by", d.ID, d.Status)
		}
		if d.ChosenOption != "" && !slices.Contains(d.Options, d.ChosenOption) {
			v.fail("decision %s chose %q, which is not one of its options", d.ID, d.ChosenOption)
		}
	}
	seen = map[string]bool{}
	for i, b := range s.Coordination.Blockers {
		f := fmt.Sprintf("coordination.blockers[%d]", i)
		if b.ID == "" || seen[b.ID] {
			v.fail("%s has an empty or duplicate id %q", f, b.ID)
		}
		seen[b.ID] = true
		v.oneOf(f+".status", b.Status, BlockerStatuses)
		if b.ReportedBy == "" {
			v.fail("blocker %s has no reported_by", b.ID)
		}
		if b.Status != "open" && b.Resolution == "" {
			v.fail("blocker %s is %s but has no resolution", b.ID, b.Status)
		}
	}
}

func validTime(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// relPath rejects a path that is empty, absolute, or leaves the project.
func (v *validator) relPath(field, p string) {
	if err := CheckRelPath(p); err != nil {
		v.fail("%s: %s", field, err.(*reason.Error).Message)
	}
}

// CheckRelPath returns an INVALID_INPUT error unless p is a relative,
// slash-separated path that stays inside the project.
func CheckRelPath(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return reason.New(reason.InvalidInput, "file path is empty")
	case strings.ContainsRune(p, 0):
		return reason.New(reason.InvalidInput, "file path %q contains a NUL byte", p)
	case path.IsAbs(p) || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':'):
		return reason.New(reason.InvalidInput, "file path %q is absolute; give it relative to the project root", p)
	}
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	if c == ".." || strings.HasPrefix(c, "../") {
		return reason.New(reason.InvalidInput, "file path %q leaves the project", p)
	}
	return nil
}

// CheckPlanTasks checks a plan's tasks: unique non-empty ids, the seed's
// efforts and statuses, dependencies that exist and form no cycle, files
// inside the project, and a critical path made of known tasks.
func CheckPlanTasks(tasks []PlanTask, criticalPath []string) error {
	idx := map[string]int{}
	for i, t := range tasks {
		if t.ID == "" {
			return reason.New(reason.InvalidInput, "plan task %d has no id", i+1)
		}
		if _, dup := idx[t.ID]; dup {
			return reason.New(reason.InvalidInput, "plan has two tasks with id %s", t.ID)
		}
		idx[t.ID] = i
		if !slices.Contains(Efforts, t.Effort) {
			return reason.New(reason.InvalidInput, "plan task %s: effort is %q, not one of %s", t.ID, t.Effort, strings.Join(Efforts, ", "))
		}
		if !slices.Contains(TaskStatuses, t.Status) {
			return reason.New(reason.InvalidInput, "plan task %s: status is %q, not one of %s", t.ID, t.Status, strings.Join(TaskStatuses, ", "))
		}
		if t.AssignedTo != "" && !slices.Contains(AgentNames, t.AssignedTo) {
			return reason.New(reason.InvalidInput, "plan task %s: assigned_to is %q, not one of %s", t.ID, t.AssignedTo, strings.Join(AgentNames, ", "))
		}
		for _, f := range t.Files {
			if err := CheckRelPath(f); err != nil {
				return reason.New(reason.InvalidInput, "plan task %s: %s", t.ID, err.(*reason.Error).Message)
			}
		}
	}
	for _, t := range tasks {
		for _, d := range t.DependsOn {
			if _, ok := idx[d]; !ok {
				return reason.New(reason.InvalidInput, "plan task %s depends on %s, which is not in the plan", t.ID, d)
			}
			if d == t.ID {
				return reason.New(reason.InvalidInput, "plan task %s depends on itself", t.ID)
			}
		}
	}
	// Cycle detection: depth-first search with colours.
	const (
		white = iota
		grey
		black
	)
	colour := make([]int, len(tasks))
	var visit func(i int, trail []string) error
	visit = func(i int, trail []string) error {
		colour[i] = grey
		trail = append(trail, tasks[i].ID)
		for _, d := range tasks[i].DependsOn {
			j := idx[d]
			switch colour[j] {
			case grey:
				return reason.New(reason.InvalidInput, "plan tasks depend on each other in a cycle: %s → %s", strings.Join(trail, " → "), d)
			case white:
				if err := visit(j, trail); err != nil {
					return err
				}
			}
		}
		colour[i] = black
		return nil
	}
	for i := range tasks {
		if colour[i] == white {
			if err := visit(i, nil); err != nil {
				return err
			}
		}
	}
	for _, id := range criticalPath {
		if _, ok := idx[id]; !ok {
			return reason.New(reason.InvalidInput, "plan critical_path names %s, which is not in the plan", id)
		}
	}
	return nil
}

// CheckTransition checks that next may follow prev: what is history stays
// as it was. The change log, feedback log, phase errors and task history
// only grow (existing entries are never edited or removed); finished
// iterations never change; current_iteration never decreases; decisions and
// blockers are never removed and never go back to an earlier status; the
// version of each piece of shared context never decreases, and rises
// whenever its content changes; the cycle's id and creation time never
// change; the status moves only along the allowed transitions, and a
// stopped (failed) cycle never changes again. A violation is an
// INVALID_TRANSITION error.
func CheckTransition(prev, next State) error {
	bad := func(format string, args ...any) error {
		return reason.New(reason.InvalidTransition, format, args...)
	}
	if next.CycleID != prev.CycleID {
		return bad("the cycle id cannot change (%s → %s)", prev.CycleID, next.CycleID)
	}
	if next.CreatedAt != prev.CreatedAt {
		return bad("created_at cannot change")
	}
	if prev.Status == StatusFailed {
		return bad("cycle %s was stopped (%s); a stopped cycle cannot change", prev.CycleID, prev.FailureReason)
	}
	if prev.Status != next.Status && !statusMoves[prev.Status][next.Status] {
		return bad("the cycle cannot go from %s to %s", prev.Status, next.Status)
	}
	if !isPrefix(prev.TaskHistory, next.TaskHistory) {
		return bad("task_history is append-only: an existing entry was edited or removed")
	}
	if !isPrefix(prev.PhaseErrors, next.PhaseErrors) {
		return bad("phase_errors is append-only: an existing entry was edited or removed")
	}
	if !isPrefix(prev.Coordination.FeedbackLog, next.Coordination.FeedbackLog) {
		return bad("the feedback log is append-only: an existing entry was edited or removed")
	}
	if prev.Changes != nil {
		if next.Changes == nil {
			return bad("the change log cannot be removed")
		}
		for i, e := range prev.Changes.Changes {
			if i >= len(next.Changes.Changes) {
				return bad("the change log is append-only: entry %d (%s %s) was removed", i+1, e.Action, e.File)
			}
			if next.Changes.Changes[i] != e {
				return bad("the change log is append-only: entry %d (%s %s) was edited", i+1, e.Action, e.File)
			}
		}
		for n, ts := range prev.Changes.IterationMarkers {
			if next.Changes.IterationMarkers[n] != ts {
				return bad("the marker of iteration %d in the change log cannot change", n)
			}
		}
	}
	if next.CurrentIteration < prev.CurrentIteration {
		return bad("current_iteration cannot go down (%d → %d)", prev.CurrentIteration, next.CurrentIteration)
	}
	for i, it := range prev.Iterations {
		if i >= len(next.Iterations) {
			return bad("iteration %d was removed", it.Number)
		}
		if it.CompletedAt != "" && !reflect.DeepEqual(it, next.Iterations[i]) {
			return bad("iteration %d is finished and cannot change", it.Number)
		}
	}
	if err := versionMoves("requirements", verOf(prev.Requirements), verOf(next.Requirements), !reflect.DeepEqual(prev.Requirements, next.Requirements)); err != nil {
		return err
	}
	if err := versionMoves("exploration", verOf(prev.Exploration), verOf(next.Exploration), !reflect.DeepEqual(prev.Exploration, next.Exploration)); err != nil {
		return err
	}
	if err := versionMoves("plan", verOf(prev.Plan), verOf(next.Plan), !reflect.DeepEqual(prev.Plan, next.Plan)); err != nil {
		return err
	}
	if err := versionMoves("test_results", verOf(prev.TestResults), verOf(next.TestResults), !reflect.DeepEqual(prev.TestResults, next.TestResults)); err != nil {
		return err
	}
	for _, d := range prev.Coordination.PendingDecisions {
		n, ok := findDecision(next.Coordination.PendingDecisions, d.ID)
		if !ok {
			return bad("decision %s cannot be removed", d.ID)
		}
		if rank(DecisionStatuses, n.Status) < rank(DecisionStatuses, d.Status) {
			return bad("decision %s cannot go back from %s to %s", d.ID, d.Status, n.Status)
		}
		if d.Status != "pending" && (n.ChosenOption != d.ChosenOption || n.MadeBy != d.MadeBy) {
			return bad("decision %s was made (%s by %s) and cannot be changed", d.ID, d.ChosenOption, d.MadeBy)
		}
	}
	for _, b := range prev.Coordination.Blockers {
		n, ok := findBlocker(next.Coordination.Blockers, b.ID)
		if !ok {
			return bad("blocker %s cannot be removed", b.ID)
		}
		if b.Status == "resolved" && n != b {
			return bad("blocker %s is resolved and cannot change", b.ID)
		}
		if b.Status == "workaround" && n.Status == "open" {
			return bad("blocker %s cannot go back from workaround to open", b.ID)
		}
	}
	return nil
}

// statusMoves are the allowed status transitions. A completed cycle may
// start a new iteration (the user extends the task).
var statusMoves = map[string]map[string]bool{
	StatusCreated:   {StatusRunning: true, StatusFailed: true},
	StatusRunning:   {StatusPaused: true, StatusCompleted: true, StatusFailed: true},
	StatusPaused:    {StatusRunning: true, StatusFailed: true},
	StatusCompleted: {StatusRunning: true},
	StatusFailed:    {},
}

type versioned interface {
	*Requirements | *Exploration | *Plan | *TestResults
}

func verOf[T versioned](p T) string {
	switch v := any(p).(type) {
	case *Requirements:
		if v != nil {
			return v.Version
		}
	case *Exploration:
		if v != nil {
			return v.Version
		}
	case *Plan:
		if v != nil {
			return v.Version
		}
	case *TestResults:
		if v != nil {
			return v.Version
		}
	}
	return ""
}

func versionMoves(what, prev, next string, changed bool) error {
	if prev == "" {
		return nil
	}
	if next == "" {
		return reason.New(reason.InvalidTransition, "%s (version %s) cannot be removed", what, prev)
	}
	pv, err1 := ParseVersion(prev)
	nv, err2 := ParseVersion(next)
	if err1 != nil || err2 != nil {
		return reason.New(reason.InvalidInput, "%s version %q → %q is not MAJOR.MINOR.PATCH", what, prev, next)
	}
	switch c := nv.Compare(pv); {
	case c < 0:
		return reason.New(reason.InvalidTransition, "%s version cannot go down (%s → %s)", what, prev, next)
	case c == 0 && changed:
		return reason.New(reason.InvalidTransition, "%s changed but its version stayed %s; every update bumps the version", what, prev)
	}
	return nil
}

func isPrefix[T comparable](prefix, s []T) bool {
	return len(prefix) <= len(s) && slices.Equal(prefix, s[:len(prefix)])
}

func rank(order []string, v string) int { return slices.Index(order, v) }

func findDecision(ds []Decision, id string) (Decision, bool) {
	for _, d := range ds {
		if d.ID == id {
			return d, true
		}
	}
	return Decision{}, false
}

func findBlocker(bs []Blocker, id string) (Blocker, bool) {
	for _, b := range bs {
		if b.ID == id {
			return b, true
		}
	}
	return Blocker{}, false
}
