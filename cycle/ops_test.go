package cycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/reason"
)

var t0 = time.Date(2026, 1, 22, 2, 0, 0, 0, time.UTC)

const testID = "cycle-v1-20260122T020000-abc123"

// at returns t0 plus m minutes.
func at(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

func newCycle(t *testing.T) State {
	t.Helper()
	s, err := New(testID, "Implement OAuth authentication", "Add OAuth2 login support with Google and GitHub providers", 5, t0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// run applies ops in order, one minute apart, failing the test on a
// rejection.
func run(t *testing.T, s State, ops ...Op) State {
	t.Helper()
	for i, op := range ops {
		var err error
		s, _, err = Apply(s, op, at(i+1))
		if err != nil {
			t.Fatalf("op %d (%T): %v", i, op, err)
		}
	}
	return s
}

func TestNewIsTheSeedsInitialState(t *testing.T) {
	s := newCycle(t)
	got, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	// The seed's "Initial State (New Cycle)", with the times in UTC.
	want := `{
  "cycle_id": "cycle-v1-20260122T020000-abc123",
  "title": "Implement OAuth authentication",
  "description": "Add OAuth2 login support with Google and GitHub providers",
  "task_history": ["Implement OAuth authentication"],
  "status": "created",
  "created_at": "2026-01-22T02:00:00Z",
  "updated_at": "2026-01-22T02:00:00Z",
  "max_iterations": 5,
  "current_iteration": 0,
  "agents": {
    "ra": { "status": "idle", "output_files": [], "iterations_completed": 0 },
    "ep": { "status": "idle", "output_files": [], "iterations_completed": 0 },
    "cd": { "status": "idle", "output_files": [], "iterations_completed": 0 },
    "vas": { "status": "idle", "output_files": [], "iterations_completed": 0 }
  },
  "current_phase": "init",
  "completed_phases": [],
  "phase_errors": [],
  "iterations": [],
  "coordination": {
    "feedback_log": [],
    "pending_decisions": [],
    "blockers": []
  }
}`
	var wantBuf bytes.Buffer
	if err := json.Compact(&wantBuf, []byte(want)); err != nil {
		t.Fatal(err)
	}
	if string(got) != wantBuf.String() {
		t.Errorf("initial state\n got %s\nwant %s", got, wantBuf.String())
	}
}

func TestNewTitleIsFirst100Characters(t *testing.T) {
	task := strings.Repeat("é", 150)
	s, err := New(testID, task, "", 3, t0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != strings.Repeat("é", 100) {
		t.Errorf("title has %d runes, want 100", len([]rune(s.Title)))
	}
	if s.Description != task || s.TaskHistory[0] != task {
		t.Errorf("description or task_history lost the full task")
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name, id, task string
		max            int
	}{
		{"empty task", testID, "  ", 5},
		{"zero iterations", testID, "x", 0},
		{"path in id", "../etc", "x", 5},
		{"slash in id", "a/b", "x", 5},
		{"empty id", "", "x", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.id, tc.task, "", tc.max, t0)
			if reason.CodeOf(err) != reason.InvalidInput {
				t.Fatalf("got %v, want INVALID_INPUT", err)
			}
		})
	}
}

func TestIterationTwoExtendsTheTask(t *testing.T) {
	s := run(t, newCycle(t),
		Iterate{},
		SetAgent{Agent: "ra", Status: "running"},
		SetRequirements{Specification: "spec", EdgeCases: []string{"OAuth timeout handling", "PKCE validation"}},
		SetAgent{Agent: "ra", Status: "completed", FilesModified: 3},
		SetAgent{Agent: "ep", Status: "running"},
		SetPlan{Tasks: []PlanTask{{ID: "TASK-001", Description: "Setup OAuth application credentials", Effort: "small", Files: []string{"src/config/oauth.ts"}}}},
		SetAgent{Agent: "ep", Status: "completed", FilesModified: 2},
		Iterate{Extension: "Also add multi-factor authentication"},
	)
	if s.CurrentIteration != 2 || s.Status != StatusRunning {
		t.Fatalf("iteration %d status %s", s.CurrentIteration, s.Status)
	}
	wantHist := []string{"Implement OAuth authentication", "Also add multi-factor authentication"}
	if diff := cmp.Diff(wantHist, s.TaskHistory); diff != "" {
		t.Errorf("task_history (-want +got):\n%s", diff)
	}
	wantDesc := "Add OAuth2 login support with Google and GitHub providers\n\n--- ITERATION 2 ---\nAlso add multi-factor authentication"
	if s.Description != wantDesc {
		t.Errorf("description %q", s.Description)
	}
	if s.Requirements.Version != "1.1.0" || s.Plan.Version != "1.1.0" {
		t.Errorf("versions: requirements %s plan %s, want 1.1.0", s.Requirements.Version, s.Plan.Version)
	}
	if s.Agents.RA.IterationsCompleted != 1 || s.Agents.CD.IterationsCompleted != 0 {
		t.Errorf("iterations_completed ra=%d cd=%d", s.Agents.RA.IterationsCompleted, s.Agents.CD.IterationsCompleted)
	}
	if s.Iterations[0].CompletedAt != Stamp(at(8)) || s.Iterations[1].Extension != "Also add multi-factor authentication" {
		t.Errorf("iterations %+v", s.Iterations)
	}
	if s.Changes == nil || s.Changes.IterationMarkers[1] != Stamp(at(8)) {
		t.Errorf("iteration 1 marker missing: %+v", s.Changes)
	}
	fb := s.Coordination.FeedbackLog
	if len(fb) != 1 || fb[0].Source != "user" || fb[0].Target != "ra" || fb[0].Type != "requirement_update" {
		t.Errorf("feedback %+v", fb)
	}
	if s.CurrentPhase != PhaseInit || len(s.CompletedPhases) != 0 || s.Agents.RA.Status != AgentIdle {
		t.Errorf("phase %s completed %v ra %s", s.CurrentPhase, s.CompletedPhases, s.Agents.RA.Status)
	}
	// Within the iteration an update bumps the patch version.
	s = run(t, s, SetRequirements{Specification: "spec with MFA"})
	if s.Requirements.Version != "1.1.1" {
		t.Errorf("requirements version %s, want 1.1.1", s.Requirements.Version)
	}
}

func TestAllAgentsCompletedIsAggregation(t *testing.T) {
	s := run(t, newCycle(t), Iterate{})
	for _, a := range AgentNames {
		s = run(t, s, SetAgent{Agent: a, Status: "running"}, SetAgent{Agent: a, Status: "completed", FilesModified: 1})
	}
	if s.CurrentPhase != PhaseAggregation {
		t.Errorf("phase %s, want aggregation", s.CurrentPhase)
	}
	if diff := cmp.Diff([]string{"ra", "ep", "cd", "vas"}, s.CompletedPhases); diff != "" {
		t.Errorf("completed_phases: %s", diff)
	}
	s = run(t, s, Complete{})
	if s.Status != StatusCompleted || s.CurrentPhase != PhaseComplete || s.CompletedAt == "" || !s.Iterations[0].Resolved {
		t.Errorf("after complete: %s %s %q resolved=%v", s.Status, s.CurrentPhase, s.CompletedAt, s.Iterations[0].Resolved)
	}
	// A completed cycle may be extended by a new iteration.
	s = run(t, s, Iterate{Extension: "more"})
	if s.Status != StatusRunning || s.CompletedAt != "" {
		t.Errorf("after extension: %s %q", s.Status, s.CompletedAt)
	}
}

func TestClosingAnIterationRecordsIssues(t *testing.T) {
	s := run(t, newCycle(t),
		Iterate{},
		SetAgent{Agent: "vas", Status: "running"},
		RecordTests{PassRate: 85, Coverage: 78, FailedTests: []string{"test: OAuth timeout retry"}, TotalTests: 20},
		SetAgent{Agent: "vas", Status: "failed", Error: "3 tests fail"},
		ReportBlocker{Description: "no sandbox credentials", ReportedBy: "cd"},
		Complete{},
	)
	want := []string{"failed test: test: OAuth timeout retry", "phase vas error: 3 tests fail", "open blocker BLK-001: no sandbox credentials"}
	if diff := cmp.Diff(want, s.Iterations[0].IssuesFound); diff != "" {
		t.Errorf("issues_found (-want +got):\n%s", diff)
	}
	if s.Iterations[0].Resolved {
		t.Error("an iteration with issues is not resolved")
	}
	if s.Iterations[0].AgentResults["vas"].Status != "failed" {
		t.Errorf("vas result %+v", s.Iterations[0].AgentResults["vas"])
	}
}

// TestRules is the table of operations a rule rejects: each starts from a
// state built by setup and expects a code; the state must come back
// unchanged.
func TestRules(t *testing.T) {
	running := []Op{Iterate{}}
	plan := append(running[:1:1], SetPlan{Tasks: []PlanTask{
		{ID: "T1", Description: "a", Effort: "small"},
		{ID: "T2", Description: "b", Effort: "large", DependsOn: []string{"T1"}},
	}})
	for _, tc := range []struct {
		name  string
		setup []Op
		op    Op
		code  reason.Code
	}{
		{"agent before any iteration", nil, SetAgent{Agent: "ra", Status: "running"}, reason.InvalidTransition},
		{"unknown agent", running, SetAgent{Agent: "qa", Status: "running"}, reason.InvalidInput},
		{"unknown agent status", running, SetAgent{Agent: "ra", Status: "done"}, reason.InvalidInput},
		{"idle to completed", running, SetAgent{Agent: "ra", Status: "completed"}, reason.InvalidTransition},
		{"completed twice", append(running[:1:1], SetAgent{Agent: "ra", Status: "running"}, SetAgent{Agent: "ra", Status: "completed"}), SetAgent{Agent: "ra", Status: "completed"}, reason.InvalidTransition},
		{"failed without error", append(running[:1:1], SetAgent{Agent: "ra", Status: "running"}), SetAgent{Agent: "ra", Status: "failed"}, reason.InvalidInput},
		{"running again without news", append(running[:1:1], SetAgent{Agent: "ra", Status: "running"}), SetAgent{Agent: "ra", Status: "running"}, reason.InvalidTransition},
		{"output file outside project", running, SetAgent{Agent: "ra", Status: "running", OutputFiles: []string{"../x"}}, reason.InvalidInput},
		{"negative files modified", append(running[:1:1], SetAgent{Agent: "ra", Status: "running"}), SetAgent{Agent: "ra", Status: "completed", FilesModified: -1}, reason.InvalidInput},
		{"agent while paused", append(running[:1:1], Pause{}), SetAgent{Agent: "ra", Status: "running"}, reason.InvalidTransition},
		{"change before any iteration", nil, AppendChange{File: "a.go", Action: "create", Agent: "cd"}, reason.InvalidTransition},
		{"change with bad action", running, AppendChange{File: "a.go", Action: "rename", Agent: "cd"}, reason.InvalidInput},
		{"change to absolute path", running, AppendChange{File: "/etc/passwd", Action: "modify", Agent: "cd"}, reason.InvalidInput},
		{"change escaping project", running, AppendChange{File: "src/../../x", Action: "modify", Agent: "cd"}, reason.InvalidInput},
		{"change without agent", running, AppendChange{File: "a.go", Action: "create"}, reason.InvalidInput},
		{"pass rate over 100", running, RecordTests{PassRate: 101, TotalTests: 1}, reason.InvalidInput},
		{"negative coverage", running, RecordTests{Coverage: -1, TotalTests: 1}, reason.InvalidInput},
		{"more failures than tests", running, RecordTests{FailedTests: []string{"a", "b"}, TotalTests: 1}, reason.InvalidInput},
		{"empty specification", running, SetRequirements{Specification: " "}, reason.InvalidInput},
		{"plan with dependency cycle", running, SetPlan{Tasks: []PlanTask{{ID: "A", Effort: "small", DependsOn: []string{"B"}}, {ID: "B", Effort: "small", DependsOn: []string{"A"}}}}, reason.InvalidInput},
		{"plan with unknown dependency", running, SetPlan{Tasks: []PlanTask{{ID: "A", Effort: "small", DependsOn: []string{"Z"}}}}, reason.InvalidInput},
		{"plan with duplicate id", running, SetPlan{Tasks: []PlanTask{{ID: "A", Effort: "small"}, {ID: "A", Effort: "large"}}}, reason.InvalidInput},
		{"plan with bad effort", running, SetPlan{Tasks: []PlanTask{{ID: "A", Effort: "huge"}}}, reason.InvalidInput},
		{"plan with unknown critical path", running, SetPlan{Tasks: []PlanTask{{ID: "A", Effort: "small"}}, CriticalPath: []string{"B"}}, reason.InvalidInput},
		{"task before its dependency", plan, SetTask{ID: "T2", Status: "in_progress"}, reason.InvalidTransition},
		{"unknown task", plan, SetTask{ID: "T9", Status: "completed"}, reason.NotFound},
		{"task without plan", running, SetTask{ID: "T1", Status: "completed"}, reason.NotFound},
		{"bad feedback type", nil, AddFeedback{Source: "user", Target: "ra", Content: "x", Type: "praise"}, reason.InvalidInput},
		{"feedback to nobody", nil, AddFeedback{Source: "user", Target: "qa", Content: "x", Type: "bug_report"}, reason.InvalidInput},
		{"empty feedback", nil, AddFeedback{Source: "user", Target: "ra", Content: "", Type: "bug_report"}, reason.InvalidInput},
		{"decision without options", nil, ProposeDecision{Description: "db"}, reason.InvalidInput},
		{"decision with duplicate option", nil, ProposeDecision{Description: "db", Options: []string{"pg", "pg"}}, reason.InvalidInput},
		{"duplicate decision id", []Op{ProposeDecision{ID: "D", Description: "db", Options: []string{"pg"}}}, ProposeDecision{ID: "D", Description: "again", Options: []string{"x"}}, reason.InvalidInput},
		{"choice not an option", []Op{ProposeDecision{Description: "db", Options: []string{"pg", "sqlite"}}}, MakeDecision{ID: "DEC-001", Choice: "mysql", MadeBy: "ep"}, reason.InvalidInput},
		{"decision made twice", []Op{ProposeDecision{Description: "db", Options: []string{"pg"}}, MakeDecision{ID: "DEC-001", Choice: "pg", MadeBy: "ep"}}, MakeDecision{ID: "DEC-001", Choice: "pg", MadeBy: "cd"}, reason.InvalidTransition},
		{"implement a pending decision", []Op{ProposeDecision{Description: "db", Options: []string{"pg"}}}, ImplementDecision{ID: "DEC-001"}, reason.InvalidTransition},
		{"unknown decision", nil, MakeDecision{ID: "DEC-404", Choice: "x", MadeBy: "ep"}, reason.NotFound},
		{"blocker without reporter", nil, ReportBlocker{Description: "x"}, reason.InvalidInput},
		{"unknown blocker", nil, ResolveBlocker{ID: "BLK-404", Resolution: "x"}, reason.NotFound},
		{"resolve twice", []Op{ReportBlocker{Description: "x", ReportedBy: "cd"}, ResolveBlocker{ID: "BLK-001", Resolution: "done"}}, ResolveBlocker{ID: "BLK-001", Resolution: "again"}, reason.InvalidTransition},
		{"resolve without resolution", []Op{ReportBlocker{Description: "x", ReportedBy: "cd"}}, ResolveBlocker{ID: "BLK-001"}, reason.InvalidInput},
		{"pause a created cycle", nil, Pause{}, reason.InvalidTransition},
		{"pause twice", append(running[:1:1], Pause{}), Pause{}, reason.InvalidTransition},
		{"resume a running cycle", running, Resume{}, reason.InvalidTransition},
		{"iterate while paused", append(running[:1:1], Pause{}), Iterate{}, reason.InvalidTransition},
		{"iterate while an agent runs", append(running[:1:1], SetAgent{Agent: "cd", Status: "running"}), Iterate{}, reason.InvalidTransition},
		{"complete while an agent runs", append(running[:1:1], SetAgent{Agent: "cd", Status: "running"}), Complete{}, reason.InvalidTransition},
		{"complete a created cycle", nil, Complete{}, reason.InvalidTransition},
		{"stop without reason", running, Stop{}, reason.InvalidInput},
		{"stop a completed cycle", append(running[:1:1], Complete{}), Stop{Reason: "x"}, reason.InvalidTransition},
		{"anything after stop", []Op{Stop{Reason: "abandoned"}}, AddFeedback{Source: "user", Target: "ra", Content: "x", Type: "clarification"}, reason.InvalidTransition},
		{"resume after stop", []Op{Stop{Reason: "abandoned"}}, Resume{}, reason.InvalidTransition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := run(t, newCycle(t), tc.setup...)
			before, _ := Encode(s)
			got, _, err := Apply(s, tc.op, at(100))
			if reason.CodeOf(err) != tc.code {
				t.Fatalf("got %v, want %s", err, tc.code)
			}
			if e, _ := reason.As(err); e == nil || e.Message == "" {
				t.Fatalf("rejection without a sentence: %v", err)
			}
			after, _ := Encode(s)
			returned, _ := Encode(got)
			if !bytes.Equal(before, after) || !bytes.Equal(before, returned) {
				t.Fatal("a rejected operation changed the state")
			}
		})
	}
}

func TestMaxIterations(t *testing.T) {
	s, err := New(testID, "t", "", 2, t0)
	if err != nil {
		t.Fatal(err)
	}
	s = run(t, s, Iterate{}, Iterate{Extension: "b"})
	_, _, err = Apply(s, Iterate{Extension: "c"}, at(10))
	if reason.CodeOf(err) != reason.InvalidTransition || !strings.Contains(err.Error(), "2 of its 2") {
		t.Fatalf("third iteration of 2: %v", err)
	}
}

func TestDecisionAndBlockerLifecycles(t *testing.T) {
	s := run(t, newCycle(t),
		ProposeDecision{Description: "token store", Options: []string{"redis", "postgres"}},
		MakeDecision{ID: "DEC-001", Choice: "postgres", MadeBy: "ep"},
		ImplementDecision{ID: "DEC-001"},
		ReportBlocker{Description: "no creds", ReportedBy: "cd"},
		ResolveBlocker{ID: "BLK-001", Resolution: "mock provider", Workaround: true},
		ResolveBlocker{ID: "BLK-001", Resolution: "creds arrived"},
	)
	d := s.Coordination.PendingDecisions[0]
	if d.Status != "implemented" || d.ChosenOption != "postgres" || d.MadeBy != "ep" {
		t.Errorf("decision %+v", d)
	}
	b := s.Coordination.Blockers[0]
	if b.Status != "resolved" || b.Resolution != "creds arrived" {
		t.Errorf("blocker %+v", b)
	}
}

func TestTaskDependencies(t *testing.T) {
	s := run(t, newCycle(t), Iterate{}, SetPlan{Tasks: []PlanTask{
		{ID: "T1", Description: "a", Effort: "small"},
		{ID: "T2", Description: "b", Effort: "large", DependsOn: []string{"T1"}},
	}, CriticalPath: []string{"T1", "T2"}},
		SetTask{ID: "T1", Status: "in_progress", AssignedTo: "cd"},
		SetTask{ID: "T1", Status: "completed"},
		SetTask{ID: "T2", Status: "in_progress"},
	)
	if s.Plan.Version != "1.0.3" || s.Plan.Tasks[1].Status != "in_progress" || s.Plan.Tasks[0].AssignedTo != "cd" {
		t.Errorf("plan %+v", s.Plan)
	}
}

func TestCheckTransition(t *testing.T) {
	base := run(t, newCycle(t),
		Iterate{},
		SetRequirements{Specification: "spec"},
		AppendChange{File: "a.go", Action: "create", Agent: "cd", Description: "first"},
		AppendChange{File: "b.go", Action: "create", Agent: "cd"},
		AddFeedback{Source: "vas", Target: "cd", Content: "bug", Type: "bug_report"},
		ProposeDecision{Description: "d", Options: []string{"x", "y"}},
		MakeDecision{ID: "DEC-001", Choice: "x", MadeBy: "ep"},
		ReportBlocker{Description: "b", ReportedBy: "cd"},
		ResolveBlocker{ID: "BLK-001", Resolution: "r"},
	)
	for _, tc := range []struct {
		name string
		edit func(*State)
		ok   bool
	}{
		{"no change", func(*State) {}, true},
		{"append a change", func(s *State) {
			s.Changes.Changes = append(s.Changes.Changes, ChangeLog{Timestamp: Stamp(t0), File: "c.go", Action: "create", Iteration: 1, Agent: "cd"})
		}, true},
		{"edit a change", func(s *State) { s.Changes.Changes[0].Description = "rewritten" }, false},
		{"reorder changes", func(s *State) { c := s.Changes.Changes; c[0], c[1] = c[1], c[0] }, false},
		{"drop a change", func(s *State) { s.Changes.Changes = s.Changes.Changes[1:] }, false},
		{"drop the change log", func(s *State) { s.Changes = nil }, false},
		{"edit feedback", func(s *State) { s.Coordination.FeedbackLog[0].Content = "no bug" }, false},
		{"edit task history", func(s *State) { s.TaskHistory[0] = "other" }, false},
		{"version down", func(s *State) { s.Requirements.Version = "0.9.0" }, false},
		{"content without version bump", func(s *State) { s.Requirements.Specification = "new" }, false},
		{"content with version bump", func(s *State) { s.Requirements.Specification = "new"; s.Requirements.Version = "1.0.1" }, true},
		{"drop requirements", func(s *State) { s.Requirements = nil }, false},
		{"change the id", func(s *State) { s.CycleID = "other" }, false},
		{"change created_at", func(s *State) { s.CreatedAt = Stamp(at(-1)) }, false},
		{"remake a decision", func(s *State) { s.Coordination.PendingDecisions[0].ChosenOption = "y" }, false},
		{"decision back to pending", func(s *State) { s.Coordination.PendingDecisions[0].Status = "pending" }, false},
		{"remove a decision", func(s *State) { s.Coordination.PendingDecisions = nil }, false},
		{"reopen a blocker", func(s *State) { s.Coordination.Blockers[0].Status = "open" }, false},
		{"iteration count down", func(s *State) { s.CurrentIteration = 0 }, false},
		{"created from running", func(s *State) { s.Status = StatusCreated }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := base.Clone()
			tc.edit(&next)
			err := CheckTransition(base, next)
			if tc.ok && err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if !tc.ok {
				if err == nil {
					t.Fatal("accepted")
				}
				if c := reason.CodeOf(err); c != reason.InvalidTransition && c != reason.InvalidInput {
					t.Fatalf("code %s", c)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	base := run(t, newCycle(t), Iterate{}, AppendChange{File: "a.go", Action: "create", Agent: "cd"})
	for _, tc := range []struct {
		name string
		edit func(*State)
		want string
	}{
		{"bad status", func(s *State) { s.Status = "done" }, "status"},
		{"bad phase", func(s *State) { s.CurrentPhase = "qa" }, "current_phase"},
		{"bad agent status", func(s *State) { s.Agents.CD.Status = "busy" }, "agents.cd.status"},
		{"bad timestamp", func(s *State) { s.UpdatedAt = "yesterday" }, "updated_at"},
		{"iteration beyond max", func(s *State) { s.CurrentIteration = 9 }, "current_iteration"},
		{"iterations out of step", func(s *State) { s.Iterations = nil }, "iterations are recorded"},
		{"failed without reason", func(s *State) { s.Status = StatusFailed }, "failure_reason"},
		{"change in future iteration", func(s *State) { s.Changes.Changes[0].Iteration = 3 }, "iteration"},
		{"bad version", func(s *State) { s.Requirements = &Requirements{Version: "v1", LastUpdated: Stamp(t0)} }, "requirements.version"},
		{"empty title", func(s *State) { s.Title = "" }, "title"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base.Clone()
			tc.edit(&s)
			err := Validate(s)
			if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want INVALID_INPUT about %s", err, tc.want)
			}
		})
	}
	if err := Validate(base); err != nil {
		t.Fatalf("valid state rejected: %v", err)
	}
}

func TestDecodeKeepsUnknownFieldsAndSeedSamples(t *testing.T) {
	s := run(t, newCycle(t), Iterate{})
	raw, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	withExtra := append(raw[:len(raw)-1:len(raw)-1], []byte(`,"x_plugin":{"a":[1,2]},"note":"keep <me>"}`)...)
	d, err := Decode(withExtra)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(again), `"note":"keep <me>"`) || !strings.Contains(string(again), `"x_plugin":{"a":[1,2]}`) {
		t.Errorf("unknown fields lost: %s", again)
	}
	d2, err := Decode(again)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, d2); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
	for _, bad := range []string{``, `[]`, `{"status":3}`, `{"iterations":{}}`, `{"changes":{"iteration_markers":{"x":"y"}}}`} {
		if _, err := Decode([]byte(bad)); reason.CodeOf(err) != reason.CorruptState {
			t.Errorf("Decode(%q) = %v, want CORRUPT_STATE", bad, err)
		}
	}
}

func TestNewID(t *testing.T) {
	id, err := NewID(time.Date(2026, 1, 22, 10, 0, 0, 0, time.FixedZone("CST", 8*3600)), bytes.NewReader([]byte{0, 1, 2, 35, 36, 255}))
	if err != nil {
		t.Fatal(err)
	}
	// 10:00 at UTC+8 is 02:00 UTC.
	if id != "cycle-v1-20260122T020000-abc9ad" {
		t.Errorf("id %s", id)
	}
	if err := CheckID(id); err != nil {
		t.Error(err)
	}
	if _, err := NewID(t0, bytes.NewReader(nil)); err == nil {
		t.Error("short random accepted")
	}
	for _, bad := range []string{"", ".hidden", "a/b", "a..b", "x.progress", "x.json", strings.Repeat("a", 200), "a b"} {
		if CheckID(bad) == nil {
			t.Errorf("CheckID(%q) accepted", bad)
		}
	}
	if id, ok := IDFromKey(Key("cycle-v1-x")); !ok || id != "cycle-v1-x" {
		t.Errorf("IDFromKey: %s %v", id, ok)
	}
	for _, k := range []string{".workflow/.cycle/a.journal.ndjson", ".impl/manifest.json", ".workflow/.cycle/x.progress/ep/plan.json"} {
		if _, ok := IDFromKey(k); ok {
			t.Errorf("IDFromKey(%q) accepted", k)
		}
	}
}

func TestTimestampsAreUTC(t *testing.T) {
	cst := time.FixedZone("CST", 8*3600)
	s, err := New(testID, "t", "", 3, time.Date(2026, 1, 22, 10, 0, 0, 0, cst))
	if err != nil {
		t.Fatal(err)
	}
	if s.CreatedAt != "2026-01-22T02:00:00Z" {
		t.Errorf("created_at %s, want 2026-01-22T02:00:00Z", s.CreatedAt)
	}
}

func TestCheckSignal(t *testing.T) {
	for _, tc := range []struct {
		status, action string
		cont           bool
	}{
		{StatusRunning, ActionContinue, true},
		{StatusPaused, ActionPause, false},
		{StatusFailed, ActionStop, false},
		{StatusCreated, ActionUnknown, false},
		{StatusCompleted, ActionUnknown, false},
	} {
		sig := CheckSignal(State{CycleID: "c", Status: tc.status})
		if sig.Action != tc.action || sig.Continue != tc.cont {
			t.Errorf("%s: %+v", tc.status, sig)
		}
	}
}

func TestVersions(t *testing.T) {
	for _, s := range []string{"1.0", "1.0.0.0", "01.0.0", "a.b.c", "-1.0.0", "", "1..0"} {
		if _, err := ParseVersion(s); err == nil {
			t.Errorf("ParseVersion(%q) accepted", s)
		}
	}
	v, err := ParseVersion("1.2.3")
	if err != nil || v.NextMinor().String() != "1.3.0" || v.NextPatch().String() != "1.2.4" {
		t.Errorf("%v %v", v, err)
	}
	if !errors.Is(reason.New(reason.InvalidInput, "x"), reason.InvalidInput) {
		t.Fatal("reason.Is")
	}
}

func TestDecodeRejectsMiscasedFields(t *testing.T) {
	_, err := Decode([]byte(`{"Cycle_ID":"b","cycle_id":"a"}`))
	if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "Cycle_ID") {
		t.Fatalf("got %v", err)
	}
}

func TestVersionsFollowIterations(t *testing.T) {
	s := run(t, newCycle(t),
		Iterate{},
		RecordTests{PassRate: 50, TotalTests: 2},
		RecordTests{PassRate: 100, TotalTests: 2},
		SetExploration{ArchitectureSummary: "a"},
		Iterate{Extension: "more"},
		RecordTests{PassRate: 100, TotalTests: 3},
		SetExploration{ArchitectureSummary: "b"},
		SetExploration{ArchitectureSummary: "c"},
	)
	if s.TestResults.Version != "1.1.0" || s.Exploration.Version != "1.1.1" {
		t.Errorf("test results %s (want 1.1.0), exploration %s (want 1.1.1)", s.TestResults.Version, s.Exploration.Version)
	}
}
