package impl

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"

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

// Manifest is the whole .impl/manifest.json document. The JSON names and
// their order are the script's (codec.go); Extra, in each of the four
// object types, holds the members the script does not write, in file
// order, written back after the known ones.
type Manifest struct {
	Version string         `json:"version"`
	Plan    Plan           `json:"plan"`
	Phases  []Phase        `json:"phases"`
	Tasks   []Task         `json:"tasks"`
	Extra   jsontext.Value `json:",inline"`
}

// Plan is the plan the manifest was decomposed from.
type Plan struct {
	Path         string `json:"path"`
	Number       string `json:"number"`
	Title        string `json:"title"`
	DecomposedAt string `json:"decomposed_at"`
	// SHA256 is "sha256:<hex>" of the plan document at decomposition
	// (--init), "" when it could not be read then (or in a manifest the
	// original script wrote): a plan modified since makes the tasks stale
	// (seed 001).
	SHA256 string         `json:"sha256,omitempty"`
	Extra  jsontext.Value `json:",inline"`
}

// Phase is a group of tasks that may start once the phases it depends on
// are done.
type Phase struct {
	Number          int            `json:"number"`
	DependsOn       []int          `json:"depends_on"`
	BoundedContexts []string       `json:"bounded_contexts"`
	Extra           jsontext.Value `json:",inline"`
}

// Task is one unit of work, implemented on its own branch.
type Task struct {
	ID              string         `json:"id"`
	Phase           int            `json:"phase"`
	Description     string         `json:"description"`
	BoundedContexts []string       `json:"bounded_contexts"`
	Status          Status         `json:"status"`
	Branch          *string        `json:"branch"`
	CheckResults    *string        `json:"check_results"`
	Error           *string        `json:"error"`
	Retries         int            `json:"retries"`
	CreatedAt       string         `json:"created_at"`
	UpdatedAt       string         `json:"updated_at"`
	Extra           jsontext.Value `json:",inline"`
}

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
