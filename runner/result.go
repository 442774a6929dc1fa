package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// Result is what an agent may print as the last thing on its standard
// output instead of running `custodian propose` itself; the runner
// proposes it on the agent's behalf.
//
//	{"score": 0.91,
//	 "artifacts": {"requirements": ".asdd/specs/auth/requirements.md"},
//	 "uncertainty_factors": ["NFR latency target not specified"],
//	 "trace": ".asdd/traces/SLICE-001-spec.md",
//	 "assumptions": ["We use PostgreSQL"],
//	 "to": "PARTIAL",
//	 "tasks": [{"id": "T1", "title": "migrations", "wave": 1, "requirement": "REQ-001"}],
//	 "halt": {"mode": "HALLUCINATED_SPEC_SECTION", "reason": "…", "flag": ["REQ-004"]}}
//
// score is required unless halt is given. tasks (from the planning agent)
// are added to the slice's plan before the proposal; halt reports a failure
// the agent detected instead of proposing.
type Result struct {
	Score       *float64          `json:"score"`
	Artifacts   map[string]string `json:"artifacts,omitempty"`
	Uncertainty []string          `json:"uncertainty_factors,omitempty"`
	Trace       string            `json:"trace,omitempty"`
	Assumptions []string          `json:"assumptions,omitempty"`
	To          string            `json:"to,omitempty"`
	Tasks       []ResultTask      `json:"tasks,omitempty"`
	Halt        *ResultHalt       `json:"halt,omitempty"`
}

// ResultTask is a task the planning agent adds to the slice's plan.
type ResultTask struct {
	ID          string   `json:"id"`
	Title       string   `json:"title,omitempty"`
	Wave        int      `json:"wave"`
	DependsOn   []string `json:"depends_on,omitempty"`
	Requirement string   `json:"requirement,omitempty"`
}

// ResultHalt is a failure the agent detected (asdd.ReportFailure).
type ResultHalt struct {
	Mode   string   `json:"mode"`
	Reason string   `json:"reason"`
	Flag   []string `json:"flag,omitempty"`
}

// maxResult bounds the standard output kept for the result.
const maxResult = 1 << 20

// ParseResult finds the agent's result in its standard output: the whole
// output if it is one JSON object, else the last line that is one. ok is
// false when there is none (the agent printed no result); an object that
// is there but wrong is an INVALID_INPUT error naming the problem.
func ParseResult(out []byte) (r *Result, ok bool, err error) {
	trimmed := bytes.TrimSpace(out)
	candidates := [][]byte{}
	if len(trimmed) > 0 && trimmed[0] == '{' {
		candidates = append(candidates, trimmed)
	}
	lines := bytes.Split(trimmed, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) > 0 && l[0] == '{' {
			candidates = append(candidates, l)
			break
		}
	}
	var firstErr error
	for _, c := range candidates {
		var res Result
		dec := json.NewDecoder(bytes.NewReader(c))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&res); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if dec.More() {
			continue
		}
		if err := res.check(); err != nil {
			return nil, true, err
		}
		return &res, true, nil
	}
	if firstErr != nil && len(candidates) > 0 && looksLikeResult(candidates[len(candidates)-1]) {
		return nil, true, reason.New(reason.InvalidInput, "the agent's result is not valid: %v", firstErr)
	}
	return nil, false, nil
}

// looksLikeResult tells a broken result apart from other JSON output.
func looksLikeResult(b []byte) bool {
	return bytes.Contains(b, []byte(`"score"`)) || bytes.Contains(b, []byte(`"halt"`))
}

func (r *Result) check() error {
	bad := func(format string, args ...any) error {
		return reason.New(reason.InvalidInput, "the agent's result: "+format, args...)
	}
	if r.Halt != nil {
		if strings.TrimSpace(r.Halt.Mode) == "" || strings.TrimSpace(r.Halt.Reason) == "" {
			return bad("halt needs a mode and a reason")
		}
		return nil
	}
	if r.Score == nil {
		return bad("no score")
	}
	if v := *r.Score; math.IsNaN(v) || v < 0 || v > 1 {
		return bad("score %v is outside [0, 1]", v)
	}
	seen := map[string]bool{}
	for i, t := range r.Tasks {
		if strings.TrimSpace(t.ID) == "" {
			return bad("tasks[%d] has no id", i)
		}
		if seen[t.ID] {
			return bad("task %s given twice", t.ID)
		}
		seen[t.ID] = true
		if t.Wave < 1 {
			return bad("task %s: wave %d (waves count from 1)", t.ID, t.Wave)
		}
		if slices.Contains(t.DependsOn, t.ID) {
			return bad("task %s depends on itself", t.ID)
		}
	}
	for name, path := range r.Artifacts {
		if name == "" || path == "" {
			return bad("artifact %q=%q: want a name and a path", name, path)
		}
	}
	return nil
}

// String is the result in one line, for the progress output.
func (r *Result) String() string {
	if r.Halt != nil {
		return fmt.Sprintf("halt %s", r.Halt.Mode)
	}
	return fmt.Sprintf("score %.2f", *r.Score)
}
