package cycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Recovered is what the progress files hold, parsed: the input of Restore.
// Any part may be missing (nil).
type Recovered struct {
	// Timeline is the metadata of coordination/timeline.md.
	Timeline     *Timeline
	Requirements *Requirements
	Exploration  *Exploration
	Plan         *Plan
	Changes      *Changes
	TestResults  *TestResults
}

// Timeline is what coordination/timeline.md records: the cycle's metadata,
// its iterations, and how it ended.
type Timeline struct {
	Header     TimelineHeader
	Iterations []IterationRecord
	End        *TimelineEnd
}

// TimelineHeader is the cycle metadata at the top of the timeline.
type TimelineHeader struct {
	CycleID       string   `json:"cycle_id"`
	Title         string   `json:"title"`
	Description   string   `json:"description"`
	TaskHistory   []string `json:"task_history"`
	CreatedAt     string   `json:"created_at"`
	MaxIterations int      `json:"max_iterations"`
}

// TimelineEnd records a cycle that completed or was stopped.
type TimelineEnd struct {
	Status        string `json:"status"`
	CompletedAt   string `json:"completed_at,omitempty"`
	FailureReason string `json:"failure_reason,omitempty"`
}

// RebuildBlockerID is the id of the blocker Restore opens.
const RebuildBlockerID = "BLK-REBUILD"

// Restore rebuilds a cycle from its progress files (the seed's
// rebuildState). The shared context (requirements, exploration, plan,
// changes, test results) comes back as the files hold it; metadata and
// iterations come from the timeline. Agent states, phase errors, feedback
// and decisions are in none of the files and start empty. Since what was
// lost cannot be known, a cycle that had not completed or stopped comes
// back paused, with an open blocker saying so: agents checking signals wait
// until a human has looked and resumed it.
//
// Without a timeline the title is "Cycle <id>", creation time comes from
// the id (cycle-v1-<stamp>-…) or else the earliest timestamp found, and
// iterations are reconstructed from the change log's iteration numbers and
// markers.
func Restore(id string, r Recovered, now time.Time) (State, error) {
	if err := CheckID(id); err != nil {
		return State{}, err
	}
	if r.Timeline == nil && r.Requirements == nil && r.Exploration == nil && r.Plan == nil && r.Changes == nil && r.TestResults == nil {
		return State{}, reason.New(reason.NotFound, "cycle %s has no progress files to rebuild from (looked in %s)", id, ProgressDir(id))
	}
	ts := Stamp(now)
	s := State{
		CycleID:      id,
		Status:       StatusCreated,
		UpdatedAt:    ts,
		CurrentPhase: PhaseInit,
		Requirements: r.Requirements,
		Exploration:  r.Exploration,
		Plan:         r.Plan,
		Changes:      r.Changes,
		TestResults:  r.TestResults,
	}
	for _, n := range AgentNames {
		s.Agents.Get(n).Status = AgentIdle
	}
	if tl := r.Timeline; tl != nil {
		h := tl.Header
		if h.CycleID != "" && h.CycleID != id {
			return State{}, reason.New(reason.InvalidInput, "the timeline in %s is for cycle %s, not %s", ProgressDir(id), h.CycleID, id)
		}
		s.Title, s.Description, s.TaskHistory = h.Title, h.Description, slices.Clone(h.TaskHistory)
		s.CreatedAt, s.MaxIterations = h.CreatedAt, h.MaxIterations
		s.Iterations = slices.Clone(tl.Iterations)
	} else {
		s.Title = "Cycle " + id
		s.CreatedAt = createdFromID(id)
		if s.CreatedAt == "" {
			s.CreatedAt = earliest(r, ts)
		}
		s.Iterations = synthesizeIterations(r.Changes, s.CreatedAt)
	}
	if s.Title == "" {
		s.Title = "Cycle " + id
	}
	if s.Description == "" {
		s.Description = s.Title
	}
	if len(s.TaskHistory) == 0 {
		s.TaskHistory = []string{s.Title}
	}
	s.CurrentIteration = len(s.Iterations)
	if s.MaxIterations < max(s.CurrentIteration, 1) {
		s.MaxIterations = max(s.CurrentIteration, DefaultMaxIterations)
	}
	if s.Changes != nil {
		files := map[string]bool{}
		for _, c := range s.Changes.Changes {
			files[c.File] = true
		}
		s.Changes.TotalFiles = len(files)
	}
	switch end := r.Timeline; {
	case end != nil && end.End != nil && end.End.Status == StatusCompleted:
		s.Status, s.CompletedAt, s.CurrentPhase = StatusCompleted, end.End.CompletedAt, PhaseComplete
	case end != nil && end.End != nil && end.End.Status == StatusFailed:
		s.Status, s.FailureReason = StatusFailed, end.End.FailureReason
	case s.CurrentIteration > 0:
		s.Status = StatusPaused
		s.Coordination.Blockers = []Blocker{{
			ID:          RebuildBlockerID,
			Description: fmt.Sprintf("state rebuilt from %s at %s: agent states, phase errors, feedback, decisions and blockers are not in those files and were lost; review, then resume", ProgressDir(id), ts),
			ReportedBy:  "custodian",
			Status:      "open",
		}}
	}
	recountIterations(&s)
	s.normalize()
	if err := Validate(s); err != nil {
		return State{}, reason.New(reason.InvalidInput, "the progress files of %s do not make a valid cycle: %s", id, messageOf(err))
	}
	return s, nil
}

func messageOf(err error) string {
	if e, ok := reason.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// createdFromID reads the creation time out of a cycle-v1-<stamp>-… id.
func createdFromID(id string) string {
	rest, ok := strings.CutPrefix(id, "cycle-v1-")
	if !ok || len(rest) < len(idStamp) {
		return ""
	}
	t, err := time.Parse(idStamp, rest[:len(idStamp)])
	if err != nil {
		return ""
	}
	return Stamp(t)
}

// earliest returns the earliest timestamp in the recovered files, or def.
func earliest(r Recovered, def string) string {
	best := ""
	consider := func(ts string) {
		if _, err := time.Parse(time.RFC3339, ts); err == nil && (best == "" || !notBefore(ts, best)) {
			best = ts
		}
	}
	if r.Changes != nil {
		for _, c := range r.Changes.Changes {
			consider(c.Timestamp)
		}
	}
	if r.Requirements != nil {
		consider(r.Requirements.LastUpdated)
	}
	if r.Exploration != nil {
		consider(r.Exploration.LastUpdated)
	}
	if r.Plan != nil {
		consider(r.Plan.LastUpdated)
	}
	if r.TestResults != nil {
		consider(r.TestResults.LastRun)
	}
	if best == "" {
		return def
	}
	return best
}

// synthesizeIterations makes iteration records 1..n, n the highest
// iteration the change log names: each starts at its first change (or the
// creation time) and, but for the last, completes at its marker (or at the
// next one's start).
func synthesizeIterations(c *Changes, created string) []IterationRecord {
	if c == nil {
		return nil
	}
	n := 0
	first := map[int]string{}
	for _, ch := range c.Changes {
		n = max(n, ch.Iteration)
		if _, ok := first[ch.Iteration]; !ok {
			first[ch.Iteration] = ch.Timestamp
		}
	}
	for k := range c.IterationMarkers {
		n = max(n, k)
	}
	its := make([]IterationRecord, n)
	for i := range its {
		start := first[i+1]
		if start == "" {
			start = created
		}
		its[i] = IterationRecord{Number: i + 1, StartedAt: start, AgentResults: map[string]AgentResult{}, IssuesFound: []string{}}
	}
	for i := range its {
		if m, ok := c.IterationMarkers[i+1]; ok {
			its[i].CompletedAt = m
		} else if i < n-1 {
			its[i].CompletedAt = its[i+1].StartedAt
		}
	}
	return its
}
