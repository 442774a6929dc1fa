package progress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
)

// MaxFileBytes bounds a progress file that Parse accepts.
const MaxFileBytes = 16 << 20

func bad(file string, format string, args ...any) error {
	return reason.New(reason.InvalidInput, "%s: %s", file, fmt.Sprintf(format, args...))
}

func checkSize(file string, b []byte) error {
	if len(b) > MaxFileBytes {
		return bad(file, "%d bytes, over the limit of %d", len(b), MaxFileBytes)
	}
	return nil
}

// Parse reads the progress files (keyed as Render keys them; missing files
// are absent) into what cycle.Restore takes. A file that does not parse is
// an INVALID_INPUT error naming it.
func Parse(files map[string][]byte) (cycle.Recovered, error) {
	var r cycle.Recovered
	var err error
	if b, ok := files[RequirementsFile]; ok {
		if r.Requirements, err = ParseRequirements(b); err != nil {
			return r, err
		}
	}
	if b, ok := files[ExplorationFile]; ok {
		r.Exploration = new(cycle.Exploration)
		if err := parseJSON(ExplorationFile, b, r.Exploration); err != nil {
			return r, err
		}
	}
	if b, ok := files[PlanFile]; ok {
		r.Plan = new(cycle.Plan)
		if err := parseJSON(PlanFile, b, r.Plan); err != nil {
			return r, err
		}
	}
	if b, ok := files[ChangesFile]; ok {
		if r.Changes, err = ParseChanges(b); err != nil {
			return r, err
		}
	}
	if b, ok := files[TestResultsFile]; ok {
		r.TestResults = new(cycle.TestResults)
		if err := parseJSON(TestResultsFile, b, r.TestResults); err != nil {
			return r, err
		}
	}
	if b, ok := files[TimelineFile]; ok {
		if r.Timeline, err = ParseTimeline(b); err != nil {
			return r, err
		}
	}
	return r, nil
}

// parseJSON decodes one JSON object, refusing unknown fields and trailing
// data.
func parseJSON(file string, b []byte, v any) error {
	if err := checkSize(file, b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bad(file, "not the expected JSON object: %v", err)
	}
	if dec.More() {
		return bad(file, "trailing data after the JSON object")
	}
	return nil
}

// ParseRequirements reads requirements.md.
func ParseRequirements(b []byte) (*cycle.Requirements, error) {
	const file = RequirementsFile
	if err := checkSize(file, b); err != nil {
		return nil, err
	}
	head, spec, ok := strings.Cut(string(b), "\n## Specification\n\n")
	if !ok {
		return nil, bad(file, `no "## Specification" section`)
	}
	spec = strings.TrimSuffix(spec, "\n")
	lines := strings.Split(head, "\n")
	if len(lines) == 0 || lines[0] != "# Requirements" {
		return nil, bad(file, `does not start with "# Requirements"`)
	}
	r := &cycle.Requirements{Specification: spec, EdgeCases: []string{}}
	inEdges, haveEdges := false, false
	for i, l := range lines[1:] {
		n := i + 2
		switch {
		case l == "## Edge cases":
			inEdges, haveEdges = true, true
		case !inEdges && strings.HasPrefix(l, "- Version: "):
			r.Version = strings.TrimPrefix(l, "- Version: ")
		case !inEdges && strings.HasPrefix(l, "- Last updated: "):
			r.LastUpdated = strings.TrimPrefix(l, "- Last updated: ")
		case !inEdges && l == "":
		case inEdges && (l == "" || l == "(none)"):
		case inEdges && strings.HasPrefix(l, "- "):
			r.EdgeCases = append(r.EdgeCases, l[2:])
		case inEdges && strings.HasPrefix(l, "  ") && len(r.EdgeCases) > 0:
			r.EdgeCases[len(r.EdgeCases)-1] += "\n" + l[2:]
		default:
			return nil, bad(file, "line %d is not part of the format: %q", n, clip(l))
		}
	}
	if r.Version == "" || r.LastUpdated == "" {
		return nil, bad(file, "missing the Version or Last updated line")
	}
	if !haveEdges {
		return nil, bad(file, `no "## Edge cases" section`)
	}
	return r, nil
}

// ParseChanges reads changes.log.
func ParseChanges(b []byte) (*cycle.Changes, error) {
	const file = ChangesFile
	if err := checkSize(file, b); err != nil {
		return nil, err
	}
	c := &cycle.Changes{Changes: []cycle.ChangeLog{}, IterationMarkers: map[int]string{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), MaxFileBytes)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, bad(file, "line %d is not a JSON object: %v", n, err)
		}
		if _, ok := probe["iteration_marker"]; ok {
			var m marker
			if err := strictUnmarshal(line, &m); err != nil {
				return nil, bad(file, "line %d is not an iteration marker: %v", n, err)
			}
			if _, dup := c.IterationMarkers[m.IterationMarker]; dup {
				return nil, bad(file, "line %d repeats the marker of iteration %d", n, m.IterationMarker)
			}
			c.IterationMarkers[m.IterationMarker] = m.Timestamp
			continue
		}
		var ch cycle.ChangeLog
		if err := strictUnmarshal(line, &ch); err != nil {
			return nil, bad(file, "line %d is not a change: %v", n, err)
		}
		c.Changes = append(c.Changes, ch)
	}
	if err := sc.Err(); err != nil {
		return nil, bad(file, "%v", err)
	}
	files := map[string]bool{}
	for _, ch := range c.Changes {
		files[ch.File] = true
	}
	c.TotalFiles = len(files)
	return c, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data")
	}
	return nil
}

// ParseTimeline reads timeline.md: the json fences under its headings.
func ParseTimeline(b []byte) (*cycle.Timeline, error) {
	const file = TimelineFile
	if err := checkSize(file, b); err != nil {
		return nil, err
	}
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	t := &cycle.Timeline{}
	heading, haveHeader := "", false
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "# ") || strings.HasPrefix(l, "## ") {
			heading = l
			continue
		}
		if l != "```json" {
			continue
		}
		if i+2 >= len(lines) || lines[i+2] != "```" {
			return nil, bad(file, "line %d: a json fence must hold exactly one line", i+1)
		}
		body := []byte(lines[i+1])
		i += 2
		switch {
		case strings.HasPrefix(heading, "# Cycle "):
			if haveHeader {
				return nil, bad(file, "line %d: a second cycle header", i-1)
			}
			if err := strictUnmarshal(body, &t.Header); err != nil {
				return nil, bad(file, "line %d: cycle header: %v", i, err)
			}
			haveHeader = true
		case strings.HasPrefix(heading, "## Iteration "):
			var it cycle.IterationRecord
			if err := strictUnmarshal(body, &it); err != nil {
				return nil, bad(file, "line %d: iteration record: %v", i, err)
			}
			t.Iterations = append(t.Iterations, it)
		case heading == "## Cycle completed" || heading == "## Cycle stopped":
			if t.End != nil {
				return nil, bad(file, "line %d: the cycle ends twice", i)
			}
			t.End = new(cycle.TimelineEnd)
			if err := strictUnmarshal(body, t.End); err != nil {
				return nil, bad(file, "line %d: cycle end: %v", i, err)
			}
		default:
			return nil, bad(file, "line %d: a json fence under %q, which is not a timeline heading", i-1, clip(heading))
		}
		heading = ""
	}
	if !haveHeader {
		return nil, bad(file, "no cycle header (a json fence under \"# Cycle <id>\")")
	}
	return t, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
