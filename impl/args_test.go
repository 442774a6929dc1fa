package impl

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/reason"
)

func TestParseArgs(t *testing.T) {
	cases := []struct {
		name string
		argv []string
		want Args
		err  string
	}{
		{name: "init", argv: []string{"--init", "--plan-path", "p.md", "--plan-number", "003", "--plan-title", "T T", "--force"},
			want: Args{Op: OpInit, PlanPath: "p.md", PlanNumber: "003", PlanTitle: "T T", Force: true, DependsOn: "none"}},
		{name: "options before op", argv: []string{"--task-id", "1.1", "--get-task"},
			want: Args{Op: OpGetTask, TaskID: "1.1", DependsOn: "none"}},
		{name: "last op wins", argv: []string{"--summary", "--list-tasks", "--status", "failed"},
			want: Args{Op: OpListTasks, Status: "failed", DependsOn: "none"}},
		{name: "later value wins", argv: []string{"--get-task", "--task-id", "1", "--task-id", "2"},
			want: Args{Op: OpGetTask, TaskID: "2", DependsOn: "none"}},
		{name: "equals form", argv: []string{"--update-status", "--task-id=1.1", "--status=passed", "--error=a=b"},
			want: Args{Op: OpUpdateStatus, TaskID: "1.1", Status: "passed", Error: "a=b", DependsOn: "none"}},
		{name: "value that looks like a flag", argv: []string{"--add-task", "--description", "--force", "--task-id", "x"},
			want: Args{Op: OpAddTask, Description: "--force", TaskID: "x", DependsOn: "none"}},
		{name: "globals", argv: []string{"-C", "/tmp/p", "--stale", "--base", "main", "--json"},
			want: Args{Op: OpStale, Dir: "/tmp/p", Base: "main", JSON: true, DependsOn: "none"}},
		{name: "empty value", argv: []string{"--add-task", "--depends-on", ""},
			want: Args{Op: OpAddTask, DependsOn: ""}},
		{name: "unknown", argv: []string{"--summary", "--verbose"}, err: "Unknown argument: --verbose"},
		{name: "positional", argv: []string{"summary"}, err: "Unknown argument: summary"},
		{name: "missing value", argv: []string{"--get-task", "--task-id"}, err: "--task-id needs a value"},
		{name: "no op", argv: []string{"--task-id", "1"}, err: "an operation is required"},
		{name: "nothing", argv: nil, err: "an operation is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseArgs(c.argv)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || reason.CodeOf(err) != reason.InvalidInput {
					t.Fatalf("err %v, want INVALID_INPUT %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestParseValues(t *testing.T) {
	for in, want := range map[string][]int{"none": {}, "": {}, "1": {1}, "1,2": {1, 2}, " 1, 02 ": {1, 2}} {
		got, err := ParseDependsOn(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseDependsOn(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"1,", "a", "1;2", "1.5"} {
		if _, err := ParseDependsOn(bad); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("ParseDependsOn(%q) err %v", bad, err)
		}
	}
	for in, want := range map[string][]string{"": {}, "A": {"A"}, "A, B": {"A", " B"}, "A,,B,": {"A", "", "B", ""}} {
		if got := ParseBoundedContexts(in); !slices.Equal(got, want) {
			t.Errorf("ParseBoundedContexts(%q) = %q", in, got)
		}
	}
	if n, err := ParsePhase(" 07 "); n != 7 || err != nil {
		t.Errorf("ParsePhase = %d %v", n, err)
	}
	for _, bad := range []string{"", "x", "1.5", "1e3"} {
		if _, err := ParsePhase(bad); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("ParsePhase(%q) err %v", bad, err)
		}
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("--init\x00--plan-path\x00p\x00--plan-number\x001\x00--plan-title\x00t")
	f.Add("--update-status\x00--task-id=1\x00--status\x00failed\x00--error\x00x\"y")
	f.Add("--list-tasks\x00--phase\x00-1\x00-C")
	f.Add("--add-task\x00--depends-on\x001,2\x00--bounded-contexts\x00A,,B")
	f.Fuzz(func(t *testing.T, line string) {
		argv := strings.Split(line, "\x00")
		a, err := ParseArgs(argv)
		if err != nil {
			if reason.CodeOf(err) != reason.InvalidInput {
				t.Fatalf("error without INVALID_INPUT: %v", err)
			}
			return
		}
		if a.Op == "" {
			t.Fatal("parsed without an operation")
		}
		if _, known := opNames[a.Op]; !known {
			t.Fatalf("unknown op %q", a.Op)
		}
		if deps, err := ParseDependsOn(a.DependsOn); err == nil && deps == nil {
			t.Fatal("nil dependencies without error")
		}
		bcs := ParseBoundedContexts(a.BoundedContexts)
		if strings.Join(bcs, ",") != a.BoundedContexts {
			t.Fatalf("contexts %q do not join back to %q", bcs, a.BoundedContexts)
		}
	})
}

var opNames = func() map[Op]bool {
	m := map[Op]bool{}
	for _, op := range ops {
		m[op] = true
	}
	return m
}()
