package impl

import (
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// A generic write of the manifest (PUT /v1/doc, rollback) keeps
// update-status's rule: a task in a final status stays in it.
func TestGenericWritesKeepFinalStatuses(t *testing.T) {
	base := func(t *testing.T) *Manifest {
		m := mustNew(t)
		add(t, m, "T-1", 1)
		add(t, m, "T-2", 1)
		add(t, m, "T-3", 1)
		set(t, m, "T-1", InProgress)
		set(t, m, "T-2", Merged)
		set(t, m, "T-3", Abandoned)
		return m
	}
	for _, tc := range []struct {
		name   string
		change func(m *Manifest)
		want   reason.Code // "" when allowed
	}{
		{"unchanged", func(m *Manifest) {}, ""},
		{"an open task moves", func(m *Manifest) { m.Tasks[0].Status = Failed }, ""},
		{"an open task is removed", func(m *Manifest) { m.Tasks = m.Tasks[1:] }, ""},
		{"a task is added", func(m *Manifest) {
			add(t, m, "T-4", 2)
		}, ""},
		{"a merged task moves back", func(m *Manifest) { m.Tasks[1].Status = Pending }, reason.InvalidTransition},
		{"an abandoned task is reopened", func(m *Manifest) { m.Tasks[2].Status = InProgress }, reason.InvalidTransition},
		{"a merged task is removed", func(m *Manifest) { m.Tasks = append(m.Tasks[:1], m.Tasks[2:]...) }, reason.InvalidTransition},
		{"a merged task's other fields change", func(m *Manifest) { m.Tasks[1].Retries = 3 }, ""},
		{"a new start with no tasks (--init --force)", func(m *Manifest) { m.Tasks = nil }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prev, err := Encode(base(t))
			if err != nil {
				t.Fatal(err)
			}
			m := base(t)
			tc.change(m)
			next, err := Encode(m)
			if err != nil {
				t.Fatal(err)
			}
			err = ValidateWrite(Key, prev, next)
			if got := reason.CodeOf(err); got != tc.want {
				t.Fatalf("Validate: %v (code %q), want code %q", err, got, tc.want)
			}
			// A new manifest is bound by nothing before it.
			if err := ValidateWrite(Key, nil, next); err != nil {
				t.Fatalf("Validate of a new manifest: %v", err)
			}
		})
	}
}
