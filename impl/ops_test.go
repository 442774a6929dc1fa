package impl

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/reason"
)

// tb is what the helpers need from *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
}

func mustNew(t tb) *Manifest {
	t.Helper()
	m, err := New("docs/plans/003.md", "003", "Auth", t0)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func add(t tb, m *Manifest, id string, phase int, deps ...int) {
	t.Helper()
	if err := m.AddTask(NewTask{ID: id, Phase: phase, Description: "task " + id, DependsOn: deps}, t0); err != nil {
		t.Fatal(err)
	}
}

func set(t tb, m *Manifest, id string, s Status) {
	t.Helper()
	if _, err := m.UpdateStatus(StatusUpdate{ID: id, Status: s}, t0); err != nil {
		t.Fatal(err)
	}
}

func TestNewRequiresPlanFields(t *testing.T) {
	for _, args := range [][3]string{{"", "1", "t"}, {"p", "", "t"}, {"p", "1", ""}} {
		if _, err := New(args[0], args[1], args[2], t0); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("New%q: err %v, want INVALID_INPUT", args, err)
		}
	}
}

func TestAddTaskCreatesPhaseOnce(t *testing.T) {
	m := mustNew(t)
	if err := m.AddTask(NewTask{ID: "2.1", Phase: 2, Description: "a", DependsOn: []int{1}, BoundedContexts: []string{"BC-2"}}, t0); err != nil {
		t.Fatal(err)
	}
	// The second task of phase 2 names other dependencies: the phase keeps
	// its first definition, the task keeps its own contexts.
	if err := m.AddTask(NewTask{ID: "2.2", Phase: 2, Description: "b", DependsOn: []int{7}, BoundedContexts: []string{"BC-9"}}, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	want := []Phase{{Number: 2, DependsOn: []int{1}, BoundedContexts: []string{"BC-2"}}}
	if d := cmp.Diff(want, m.Phases); d != "" {
		t.Errorf("phases (-want +got):\n%s", d)
	}
	if got := m.Tasks[1]; !slices.Equal(got.BoundedContexts, []string{"BC-9"}) || got.CreatedAt != "2026-02-22T10:00:01Z" || got.Status != Pending {
		t.Errorf("second task = %+v", got)
	}
}

func TestAddTaskRejects(t *testing.T) {
	m := mustNew(t)
	add(t, m, "1.1", 1)
	cases := []struct {
		name string
		nt   NewTask
		code reason.Code
		msg  string
	}{
		{"duplicate", NewTask{ID: "1.1", Phase: 2, Description: "again"}, reason.InvalidInput, "task 1.1 already exists (phase 1)"},
		{"no id", NewTask{Phase: 1, Description: "x"}, reason.InvalidInput, "requires --task-id"},
		{"no description", NewTask{ID: "1.2", Phase: 1}, reason.InvalidInput, "requires --task-id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := m.AddTask(c.nt, t0)
			if reason.CodeOf(err) != c.code || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("err %v, want %s %q", err, c.code, c.msg)
			}
			if len(m.Tasks) != 1 || len(m.Phases) != 1 {
				t.Fatalf("a rejected add changed the manifest: %d tasks, %d phases", len(m.Tasks), len(m.Phases))
			}
		})
	}
}

func TestUpdateStatus(t *testing.T) {
	later := t0.Add(90 * time.Second)
	cases := []struct {
		name        string
		from        Status
		retries     int
		upd         StatusUpdate
		wantStatus  Status
		wantRetries int
		code        reason.Code
	}{
		{"start", Pending, 0, StatusUpdate{Status: InProgress}, InProgress, 0, ""},
		{"retry counts", Failed, 0, StatusUpdate{Status: InProgress}, InProgress, 1, ""},
		{"second retry", Failed, 1, StatusUpdate{Status: InProgress}, InProgress, 2, ""},
		{"fail does not count", InProgress, 1, StatusUpdate{Status: Failed}, Failed, 1, ""},
		{"skip ahead allowed", Pending, 0, StatusUpdate{Status: Passed}, Passed, 0, ""},
		{"conflict to merged", Conflict, 0, StatusUpdate{Status: Merged}, Merged, 0, ""},
		{"merged stays merged", Merged, 0, StatusUpdate{Status: Merged}, Merged, 0, ""},
		{"out of merged", Merged, 0, StatusUpdate{Status: InProgress}, Merged, 0, reason.InvalidTransition},
		{"out of abandoned", Abandoned, 2, StatusUpdate{Status: Pending}, Abandoned, 2, reason.InvalidTransition},
		{"abandoned to failed", Abandoned, 0, StatusUpdate{Status: Failed}, Abandoned, 0, reason.InvalidTransition},
		{"unknown status", Pending, 0, StatusUpdate{Status: "done"}, Pending, 0, reason.InvalidInput},
		{"unknown task", Pending, 0, StatusUpdate{ID: "9.9", Status: Passed}, Pending, 0, reason.NotFound},
		{"no status", Pending, 0, StatusUpdate{}, Pending, 0, reason.InvalidInput},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustNew(t)
			add(t, m, "1.1", 1)
			m.Tasks[0].Status, m.Tasks[0].Retries = c.from, c.retries
			u := c.upd
			if u.ID == "" && c.name != "no status" {
				u.ID = "1.1"
			}
			tr, err := m.UpdateStatus(u, later)
			if reason.CodeOf(err) != c.code {
				t.Fatalf("err %v, want code %q", err, c.code)
			}
			task := m.Tasks[0]
			if task.Status != c.wantStatus || task.Retries != c.wantRetries {
				t.Fatalf("task status %s retries %d, want %s %d", task.Status, task.Retries, c.wantStatus, c.wantRetries)
			}
			if err != nil {
				if task.UpdatedAt != Stamp(t0) {
					t.Fatalf("a rejected update touched updated_at")
				}
				return
			}
			if task.UpdatedAt != "2026-02-22T10:01:30Z" {
				t.Errorf("updated_at %s", task.UpdatedAt)
			}
			if tr.From != c.from || tr.To != c.wantStatus || tr.Retry != (c.wantRetries > c.retries) {
				t.Errorf("transition %+v", tr)
			}
		})
	}
}

func TestUpdateStatusOptionalFields(t *testing.T) {
	m := mustNew(t)
	add(t, m, "1.1", 1)
	inj := `x" | .status = "merged`
	if _, err := m.UpdateStatus(StatusUpdate{ID: "1.1", Status: Failed, Branch: "impl/003/1.1", CheckResults: "lint: ok\ntest: 2 failed", Error: inj}, t0); err != nil {
		t.Fatal(err)
	}
	task := m.Tasks[0]
	if *task.Branch != "impl/003/1.1" || *task.CheckResults != "lint: ok\ntest: 2 failed" || *task.Error != inj || task.Status != Failed {
		t.Fatalf("task %+v", task)
	}
	// Empty values leave fields alone, as in the script.
	if _, err := m.UpdateStatus(StatusUpdate{ID: "1.1", Status: InProgress}, t0); err != nil {
		t.Fatal(err)
	}
	if task := m.Tasks[0]; task.Branch == nil || *task.Error != inj {
		t.Fatalf("empty flags cleared fields: %+v", task)
	}
}

func TestListAndCounts(t *testing.T) {
	m := mustNew(t)
	add(t, m, "1.1", 1)
	add(t, m, "1.2", 1)
	add(t, m, "2.1", 2, 1)
	set(t, m, "1.2", Merged)
	one := 1
	ids := func(ts []Task) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	if got := ids(m.List(Filter{Phase: &one})); !slices.Equal(got, []string{"1.1", "1.2"}) {
		t.Errorf("phase 1: %v", got)
	}
	if got := ids(m.List(Filter{Status: Pending})); !slices.Equal(got, []string{"1.1", "2.1"}) {
		t.Errorf("pending: %v", got)
	}
	if got := ids(m.List(Filter{Phase: &one, Status: Merged})); !slices.Equal(got, []string{"1.2"}) {
		t.Errorf("phase 1 merged: %v", got)
	}
	want := []string{"phase=1", "total=2", "pending=1", "in_progress=0", "validating=0", "passed=0", "failed=0", "merged=1", "abandoned=0", "conflict=0"}
	if d := cmp.Diff(want, PhaseStatusLines(m.PhaseStatus(1))); d != "" {
		t.Errorf("phase status (-want +got):\n%s", d)
	}
	want = []string{"plan_title=Auth", "plan_number=003", "total_phases=2", "total_tasks=3", "pending=2", "in_progress=0", "validating=0", "passed=0", "failed=0", "merged=1", "abandoned=0", "conflict=0"}
	if d := cmp.Diff(want, SummaryLines(m.Summary())); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
}

func TestTaskLines(t *testing.T) {
	m, err := Decode([]byte(original))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"id=1.1", "phase=1", `description=Add "login" endpoint`, `bounded_contexts=["BC-1"]`,
		"status=pending", "branch=null", "check_results=null", "error=null", "retries=0",
		"created_at=2026-02-22T10:00:00Z", "updated_at=2026-02-22T10:00:00Z",
		`acceptance_criteria=[{"description":"401 on missing auth","verified":false}]`,
	}
	if d := cmp.Diff(want, TaskLines(m.Tasks[0])); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	empty := Task{ID: "x", Branch: ptr("b<1>")}
	if got := TaskLines(empty); got[3] != "bounded_contexts=[]" || got[5] != "branch=b<1>" {
		t.Errorf("got %q", got)
	}
}

// TestStatusMachine drives random updates and checks the invariants of the
// lifecycle: terminal statuses are never left, retries only ever grow and
// only by failed -> in_progress, rejected updates change nothing.
func TestStatusMachine(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := mustNew(rt)
		n := rapid.IntRange(1, 4).Draw(rt, "tasks")
		ids := make([]string, n)
		for i := range ids {
			ids[i] = string(rune('a' + i))
			add(rt, m, ids[i], 1)
		}
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for range steps {
			id := rapid.SampledFrom(append(ids, "ghost")).Draw(rt, "id")
			st := rapid.SampledFrom(append(slices.Clone(Statuses), "bogus")).Draw(rt, "status")
			before, _ := Encode(m)
			var prev *Task
			if p, _ := m.find(id); p != nil {
				c := *p
				prev = &c
			}
			tr, err := m.UpdateStatus(StatusUpdate{ID: id, Status: st}, t0.Add(time.Minute))
			after, _ := Encode(m)
			switch {
			case st == "bogus": // the status is checked first, as in the script
				if !errors.Is(err, reason.InvalidInput) {
					rt.Fatalf("bogus status: %v", err)
				}
			case prev == nil:
				if !errors.Is(err, reason.NotFound) {
					rt.Fatalf("update of unknown task: %v", err)
				}
			case prev.Status.Terminal() && st != prev.Status:
				if !errors.Is(err, reason.InvalidTransition) {
					rt.Fatalf("left terminal %s for %s: %v", prev.Status, st, err)
				}
			default:
				if err != nil {
					rt.Fatalf("valid update rejected: %v", err)
				}
				cur, _ := m.find(id)
				wantRetries := prev.Retries
				if prev.Status == Failed && st == InProgress {
					wantRetries++
				}
				if cur.Retries != wantRetries || tr.Retries != wantRetries || cur.Status != st {
					rt.Fatalf("%s -> %s: retries %d (want %d), status %s", prev.Status, st, cur.Retries, wantRetries, cur.Status)
				}
			}
			if err != nil && string(before) != string(after) {
				rt.Fatalf("rejected update changed the manifest")
			}
		}
	})
}
