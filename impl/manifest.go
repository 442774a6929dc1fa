package impl

import (
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Key is the store key (and path relative to the project root) of the
// manifest.
const Key = ".impl/manifest.json"

// Version is the manifest format version the script writes.
const Version = "1.0.0"

// TimeLayout is the timestamp format of the manifest: UTC, whole seconds.
const TimeLayout = "2006-01-02T15:04:05Z"

// Stamp formats t as a manifest timestamp.
func Stamp(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Status is a task's lifecycle status.
type Status string

// The eight statuses of the original schema, in its order.
const (
	Pending    Status = "pending"
	InProgress Status = "in_progress"
	Validating Status = "validating"
	Passed     Status = "passed"
	Failed     Status = "failed"
	Merged     Status = "merged"
	Abandoned  Status = "abandoned"
	Conflict   Status = "conflict"
)

// Statuses lists every status in the order the script reports counts.
var Statuses = []Status{Pending, InProgress, Validating, Passed, Failed, Merged, Abandoned, Conflict}

// ParseStatus validates s as a status.
func ParseStatus(s string) (Status, error) {
	for _, st := range Statuses {
		if string(st) == s {
			return st, nil
		}
	}
	return "", reason.New(reason.InvalidInput, "invalid status '%s'. Valid: pending, in_progress, validating, passed, failed, merged, abandoned, conflict", s)
}

// Terminal reports whether a task in this status is finished for good.
func (s Status) Terminal() bool { return s == Merged || s == Abandoned }

// Manifest is the whole .impl/manifest.json document.
type Manifest struct {
	Version string
	Plan    Plan
	Phases  []Phase
	Tasks   []Task
	Extra   Members
}

// Plan is the plan the manifest was decomposed from.
type Plan struct {
	Path         string
	Number       string
	Title        string
	DecomposedAt string
	// SHA256 is "sha256:<hex>" of the plan document at decomposition
	// (--init), "" when it could not be read then (or in a manifest the
	// original script wrote): a plan modified since makes the tasks stale
	// (seed 001).
	SHA256 string
	Extra  Members
}

// Phase is a group of tasks that may start once the phases it depends on
// are done.
type Phase struct {
	Number          int
	DependsOn       []int
	BoundedContexts []string
	Extra           Members
}

// Task is one unit of work, implemented on its own branch.
type Task struct {
	ID              string
	Phase           int
	Description     string
	BoundedContexts []string
	Status          Status
	Branch          *string
	CheckResults    *string
	Error           *string
	Retries         int
	CreatedAt       string
	UpdatedAt       string
	Extra           Members
}

// Decode parses a manifest. Any error is a CORRUPT_STATE *reason.Error that
// names what is wrong and where.
func Decode(data []byte) (*Manifest, error) {
	m := &Manifest{}
	if err := m.UnmarshalJSON(data); err != nil {
		return nil, reason.New(reason.CorruptState, "manifest at %s is not a valid task manifest: %w", Key, err)
	}
	return m, nil
}

// Encode renders the manifest as compact JSON in the script's field order.
func Encode(m *Manifest) ([]byte, error) { return m.MarshalJSON() }

func nonNilInts(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
