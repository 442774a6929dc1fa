package progress

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var t0 = time.Date(2026, 1, 22, 2, 0, 0, 0, time.UTC)

const id = "cycle-v1-20260122T020000-abc123"

// sample builds the seed's OAuth cycle through two iterations.
func sample(t testing.TB) cycle.State {
	t.Helper()
	s, err := cycle.New(id, "Implement OAuth authentication", "Add OAuth2 login support with Google and GitHub providers", 5, t0)
	if err != nil {
		t.Fatal(err)
	}
	ops := []cycle.Op{
		cycle.Iterate{},
		cycle.SetAgent{Agent: "ra", Status: "running"},
		cycle.SetRequirements{Specification: "# OAuth\n\nUsers sign in with Google or GitHub.\n", EdgeCases: []string{"OAuth timeout handling", "PKCE validation\nfor public clients"}},
		cycle.SetAgent{Agent: "ra", Status: "completed", FilesModified: 3, OutputFiles: []string{"docs/requirements.md"}},
		cycle.SetAgent{Agent: "ep", Status: "running"},
		cycle.SetExploration{ArchitectureSummary: "Express app with passport", IntegrationPoints: []string{"src/auth"}, IdentifiedRisks: []string{"token refresh"}},
		cycle.SetPlan{Tasks: []cycle.PlanTask{{ID: "TASK-001", Description: "Setup OAuth application credentials", Effort: "small", Files: []string{"src/config/oauth.ts"}}}, TotalEstimatedEffort: "2d", CriticalPath: []string{"TASK-001"}},
		cycle.SetAgent{Agent: "ep", Status: "completed", FilesModified: 2},
		cycle.SetAgent{Agent: "cd", Status: "running"},
		cycle.AppendChange{File: "src/config/oauth.ts", Action: "create", Agent: "cd", Description: "OAuth config"},
		cycle.AppendChange{File: "src/auth/google.ts", Action: "create", Agent: "cd", Description: "Google provider"},
		cycle.SetAgent{Agent: "cd", Status: "completed", FilesModified: 2},
		cycle.SetAgent{Agent: "vas", Status: "running"},
		cycle.RecordTests{PassRate: 85, Coverage: 78, FailedTests: []string{"test: OAuth timeout retry"}, TotalTests: 20},
		cycle.SetAgent{Agent: "vas", Status: "completed"},
		cycle.Iterate{Extension: "Also add multi-factor authentication"},
		cycle.SetAgent{Agent: "cd", Status: "running"},
		cycle.AppendChange{File: "src/auth/google.ts", Action: "modify", Agent: "cd", Description: "MFA hook"},
	}
	for i, op := range ops {
		var err error
		if s, _, err = cycle.Apply(s, op, t0.Add(time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
	}
	return s
}

func TestRenderGolden(t *testing.T) {
	files, err := Render(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Files {
		golden := filepath.Join("testdata", strings.ReplaceAll(name, "/", "_")+".golden")
		got := files[name]
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s:\n%s", name, golden, cmp.Diff(string(want), string(got)))
		}
	}
}

func TestRoundTripRestore(t *testing.T) {
	s := sample(t)
	files, err := Render(s)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Hour)
	got, err := cycle.Restore(id, rec, now)
	if err != nil {
		t.Fatal(err)
	}
	// What the files hold comes back exactly.
	for name, pair := range map[string][2]any{
		"requirements": {s.Requirements, got.Requirements},
		"exploration":  {s.Exploration, got.Exploration},
		"plan":         {s.Plan, got.Plan},
		"changes":      {s.Changes, got.Changes},
		"test_results": {s.TestResults, got.TestResults},
		"iterations":   {s.Iterations, got.Iterations},
		"task_history": {s.TaskHistory, got.TaskHistory},
		"description":  {s.Description, got.Description},
		"created_at":   {s.CreatedAt, got.CreatedAt},
		"iteration":    {s.CurrentIteration, got.CurrentIteration},
		"ra done":      {s.Agents.RA.IterationsCompleted, got.Agents.RA.IterationsCompleted},
	} {
		if diff := cmp.Diff(pair[0], pair[1]); diff != "" {
			t.Errorf("%s (-before +rebuilt):\n%s", name, diff)
		}
	}
	// What they do not hold is flagged: the cycle waits for a human.
	if got.Status != cycle.StatusPaused || len(got.Coordination.Blockers) != 1 || got.Coordination.Blockers[0].ID != cycle.RebuildBlockerID {
		t.Errorf("rebuilt cycle: status %s blockers %+v", got.Status, got.Coordination.Blockers)
	}
	if sig := cycle.CheckSignal(got); sig.Continue {
		t.Error("agents may continue on a rebuilt cycle before review")
	}
	// The rebuilt state renders the same shared-context files.
	again, err := Render(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{RequirementsFile, ExplorationFile, PlanFile, ChangesFile, TestResultsFile} {
		if !bytes.Equal(files[name], again[name]) {
			t.Errorf("%s differs after rebuild", name)
		}
	}
}

func TestRestoreEnds(t *testing.T) {
	s := sample(t)
	done, _, err := cycle.Apply(s, cycle.SetAgent{Agent: "cd", Status: "completed"}, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	done, _, err = cycle.Apply(done, cycle.Complete{}, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	stopped, _, err := cycle.Apply(s, cycle.Stop{Reason: "budget"}, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    cycle.State
		want string
	}{{done, cycle.StatusCompleted}, {stopped, cycle.StatusFailed}} {
		files, err := Render(tc.s)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := Parse(files)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cycle.Restore(id, rec, t0.Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != tc.want || got.CompletedAt != tc.s.CompletedAt || got.FailureReason != tc.s.FailureReason {
			t.Errorf("rebuilt %s as %s %q %q", tc.want, got.Status, got.CompletedAt, got.FailureReason)
		}
	}
}

func TestRestoreWithoutTimeline(t *testing.T) {
	files, err := Render(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	delete(files, TimelineFile)
	rec, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cycle.Restore(id, rec, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt != "2026-01-22T02:00:00Z" || got.CurrentIteration != 2 || got.Iterations[0].CompletedAt == "" || got.Title != "Cycle "+id {
		t.Errorf("synthesized: created %s iteration %d %+v title %q", got.CreatedAt, got.CurrentIteration, got.Iterations, got.Title)
	}
}

func TestRestoreRejects(t *testing.T) {
	if _, err := cycle.Restore(id, cycle.Recovered{}, t0); reason.CodeOf(err) != reason.NotFound {
		t.Errorf("no files: %v", err)
	}
	files, _ := Render(sample(t))
	rec, _ := Parse(files)
	if _, err := cycle.Restore("cycle-v1-20260122T020000-other1", rec, t0); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("timeline of another cycle: %v", err)
	}
	rec.TestResults.PassRate = 300
	if _, err := cycle.Restore(id, rec, t0); reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "pass_rate") {
		t.Errorf("bad test results: %v", err)
	}
}

func TestParseRejects(t *testing.T) {
	good, _ := Render(sample(t))
	for _, tc := range []struct {
		name, file, content string
	}{
		{"requirements without header", RequirementsFile, "no header\n"},
		{"requirements without spec", RequirementsFile, "# Requirements\n\n- Version: 1.0.0\n- Last updated: x\n\n## Edge cases\n\n"},
		{"requirements with stray line", RequirementsFile, "# Requirements\n\nstray\n- Version: 1.0.0\n- Last updated: x\n\n## Edge cases\n\n\n## Specification\n\nS\n"},
		{"requirements without version", RequirementsFile, "# Requirements\n\n## Edge cases\n\n\n## Specification\n\nS\n"},
		{"plan not JSON", PlanFile, "{"},
		{"plan unknown field", PlanFile, `{"version":"1.0.0","tasks":[],"bogus":1}`},
		{"plan trailing data", PlanFile, `{"version":"1.0.0"} {}`},
		{"test results wrong type", TestResultsFile, `{"pass_rate":"high"}`},
		{"changes not JSON", ChangesFile, "not json\n"},
		{"changes unknown field", ChangesFile, `{"file":"a","colour":"red"}` + "\n"},
		{"changes duplicate marker", ChangesFile, `{"iteration_marker":1,"timestamp":"x"}` + "\n" + `{"iteration_marker":1,"timestamp":"y"}` + "\n"},
		{"timeline without header", TimelineFile, "# Cycle x\n\nnothing\n"},
		{"timeline open fence", TimelineFile, "# Cycle x\n\n```json\n{}\n"},
		{"timeline fence under other heading", TimelineFile, "# Notes\n\n```json\n{}\n```\n"},
		{"timeline bad iteration", TimelineFile, "# Cycle x\n\n```json\n{}\n```\n## Iteration 1\n\n```json\n{\"number\":\"one\"}\n```\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range good {
				files[k] = v
			}
			files[tc.file] = []byte(tc.content)
			_, err := Parse(files)
			if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), tc.file) {
				t.Fatalf("got %v, want INVALID_INPUT naming %s", err, tc.file)
			}
		})
	}
}

func TestSyncAndRead(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	s := sample(t)
	wrote, err := Sync(root, id, func() (uint64, cycle.State, error) { return 7, s, nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(wrote) != len(Files) {
		t.Errorf("wrote %v", wrote)
	}
	// Nothing changed: nothing is written again.
	wrote, err = Sync(root, id, func() (uint64, cycle.State, error) { return 7, s, nil })
	if err != nil || len(wrote) != 0 {
		t.Errorf("second sync wrote %v (%v)", wrote, err)
	}
	// An older revision never overwrites a newer one.
	old, err := cycle.New(id, "old", "", 5, t0)
	if err != nil {
		t.Fatal(err)
	}
	wrote, err = Sync(root, id, func() (uint64, cycle.State, error) { return 3, old, nil })
	if err != nil || len(wrote) != 0 {
		t.Errorf("stale sync wrote %v (%v)", wrote, err)
	}
	files, err := Read(root, id)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Render(s)
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, ".workflow/.cycle", id+".progress", "ra", "requirements.md")); err != nil {
		t.Errorf("requirements.md not where the seed puts it: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, ".workflow/.cycle", id+".progress", "*", "*.tmp"))
	if len(matches) > 0 {
		t.Errorf("temp files left: %v", matches)
	}
}

func TestReadRefusesEscapesAndOversizedFiles(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "plan.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	pd := filepath.Join(dir, ".workflow/.cycle", id+".progress")
	if err := os.MkdirAll(pd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(pd, "ep")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := Read(root, id); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("symlink out of the project: %v", err)
	}
	if _, err := Sync(root, id, func() (uint64, cycle.State, error) { return 1, sample(t), nil }); err == nil {
		t.Error("sync wrote through a symlink out of the project")
	}
	if _, err := os.Stat(filepath.Join(outside, "plan.json.tmp")); err == nil {
		t.Error("a temp file was created outside the project")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "plan.json")); string(b) != "{}" {
		t.Error("a file outside the project was overwritten")
	}
	if err := os.Remove(filepath.Join(pd, "ep")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(pd, "vas"), 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(pd, "vas", "test-results.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(root, id); reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("oversized file: %v", err)
	}
	if _, err := Read(root, "../x"); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("bad id: %v", err)
	}
}
