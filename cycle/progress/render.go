package progress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/custodian-dev/custodian/cycle"
)

// The files' paths, relative to the cycle's progress directory.
const (
	RequirementsFile = "ra/requirements.md"
	ExplorationFile  = "ep/exploration.json"
	PlanFile         = "ep/plan.json"
	ChangesFile      = "cd/changes.log"
	TestResultsFile  = "vas/test-results.json"
	TimelineFile     = "coordination/timeline.md"
)

// Files lists the progress files in a fixed order.
var Files = []string{RequirementsFile, ExplorationFile, PlanFile, ChangesFile, TestResultsFile, TimelineFile}

// Render returns the progress files of s, keyed by their path relative to
// the progress directory. Parts s does not have yet have no file.
func Render(s cycle.State) (map[string][]byte, error) {
	out := map[string][]byte{}
	if s.Requirements != nil {
		out[RequirementsFile] = RenderRequirements(*s.Requirements)
	}
	if s.Exploration != nil {
		b, err := indentJSON(s.Exploration)
		if err != nil {
			return nil, err
		}
		out[ExplorationFile] = b
	}
	if s.Plan != nil {
		b, err := indentJSON(s.Plan)
		if err != nil {
			return nil, err
		}
		out[PlanFile] = b
	}
	if s.Changes != nil {
		b, err := RenderChanges(*s.Changes)
		if err != nil {
			return nil, err
		}
		out[ChangesFile] = b
	}
	if s.TestResults != nil {
		b, err := indentJSON(s.TestResults)
		if err != nil {
			return nil, err
		}
		out[TestResultsFile] = b
	}
	b, err := RenderTimeline(s)
	if err != nil {
		return nil, err
	}
	out[TimelineFile] = b
	return out, nil
}

func indentJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("progress file: %w", err)
	}
	return buf.Bytes(), nil
}

func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("progress file: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// RenderRequirements writes requirements.md.
func RenderRequirements(r cycle.Requirements) []byte {
	var b strings.Builder
	b.WriteString("# Requirements\n\n")
	fmt.Fprintf(&b, "- Version: %s\n", oneLine(r.Version))
	fmt.Fprintf(&b, "- Last updated: %s\n", oneLine(r.LastUpdated))
	b.WriteString("\n## Edge cases\n\n")
	if len(r.EdgeCases) == 0 {
		b.WriteString("(none)\n")
	}
	for _, e := range r.EdgeCases {
		lines := strings.Split(e, "\n")
		b.WriteString("- " + lines[0] + "\n")
		for _, l := range lines[1:] {
			b.WriteString("  " + l + "\n")
		}
	}
	b.WriteString("\n## Specification\n\n")
	b.WriteString(r.Specification)
	b.WriteString("\n")
	return []byte(b.String())
}

// oneLine keeps a header value on its line.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

type marker struct {
	IterationMarker int    `json:"iteration_marker"`
	Timestamp       string `json:"timestamp"`
}

// RenderChanges writes changes.log: one change per line, each iteration's
// marker after its last change.
func RenderChanges(c cycle.Changes) ([]byte, error) {
	marks := make([]int, 0, len(c.IterationMarkers))
	for n := range c.IterationMarkers {
		marks = append(marks, n)
	}
	sort.Ints(marks)
	var buf bytes.Buffer
	emit := func(v any) error {
		b, err := compactJSON(v)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
		return nil
	}
	for _, ch := range c.Changes {
		for len(marks) > 0 && marks[0] < ch.Iteration {
			if err := emit(marker{marks[0], c.IterationMarkers[marks[0]]}); err != nil {
				return nil, err
			}
			marks = marks[1:]
		}
		if err := emit(ch); err != nil {
			return nil, err
		}
	}
	for _, n := range marks {
		if err := emit(marker{n, c.IterationMarkers[n]}); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// RenderTimeline writes timeline.md.
func RenderTimeline(s cycle.State) ([]byte, error) {
	var b strings.Builder
	fence := func(v any) error {
		j, err := compactJSON(v)
		if err != nil {
			return err
		}
		b.WriteString("```json\n")
		b.Write(j)
		b.WriteString("\n```\n")
		return nil
	}
	fmt.Fprintf(&b, "# Cycle %s\n\n", s.CycleID)
	fmt.Fprintf(&b, "Task: %s\n\nCreated %s, at most %d iterations.\n\n", oneLine(s.Title), s.CreatedAt, s.MaxIterations)
	if err := fence(cycle.TimelineHeader{
		CycleID: s.CycleID, Title: s.Title, Description: s.Description, TaskHistory: s.TaskHistory,
		CreatedAt: s.CreatedAt, MaxIterations: s.MaxIterations,
	}); err != nil {
		return nil, err
	}
	for _, it := range s.Iterations {
		fmt.Fprintf(&b, "\n## Iteration %d\n\n", it.Number)
		if it.CompletedAt == "" {
			fmt.Fprintf(&b, "Started %s, in progress.\n", it.StartedAt)
		} else {
			fmt.Fprintf(&b, "Started %s, completed %s.\n", it.StartedAt, it.CompletedAt)
		}
		if it.Extension != "" {
			fmt.Fprintf(&b, "Extension: %s\n", oneLine(it.Extension))
		}
		if len(it.AgentResults) > 0 {
			b.WriteString("\n| agent | status | files modified |\n| --- | --- | --- |\n")
			for _, a := range cycle.AgentNames {
				if r, ok := it.AgentResults[a]; ok {
					fmt.Fprintf(&b, "| %s | %s | %d |\n", a, oneLine(r.Status), r.FilesModified)
				}
			}
		}
		if it.CompletedAt != "" {
			if len(it.IssuesFound) == 0 {
				b.WriteString("\nResolved: no issues found.\n")
			} else {
				b.WriteString("\nIssues found:\n")
				for _, i := range it.IssuesFound {
					fmt.Fprintf(&b, "- %s\n", oneLine(i))
				}
			}
		}
		b.WriteString("\n")
		if err := fence(it); err != nil {
			return nil, err
		}
	}
	switch s.Status {
	case cycle.StatusCompleted:
		fmt.Fprintf(&b, "\n## Cycle completed\n\nCompleted %s.\n\n", s.CompletedAt)
		if err := fence(cycle.TimelineEnd{Status: s.Status, CompletedAt: s.CompletedAt}); err != nil {
			return nil, err
		}
	case cycle.StatusFailed:
		fmt.Fprintf(&b, "\n## Cycle stopped\n\nReason: %s\n\n", oneLine(s.FailureReason))
		if err := fence(cycle.TimelineEnd{Status: s.Status, FailureReason: s.FailureReason}); err != nil {
			return nil, err
		}
	}
	return []byte(b.String()), nil
}
