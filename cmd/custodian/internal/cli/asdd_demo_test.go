package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// The demo's scripted agent reports the score the script gives it for its
// slice and run, with its artifact written and uncertainty below 0.95;
// outside `custodian run` it refuses to act.
func TestDemoAgent(t *testing.T) {
	e := newASDDEnv(t)
	if out := e.want(2, "demo-agent"); !strings.Contains(out, "runs under `custodian run`") {
		t.Errorf("outside the runner: %s", out)
	}
	e.must("init")
	e.must("slice", "add", "SLICE-004", "--name", "Audit Trail")
	t.Setenv("CUSTODIAN_SLICE", "SLICE-004")
	t.Setenv("CUSTODIAN_AGENT", "discovery")
	t.Chdir(e.dir)
	out := e.must("demo-agent")
	var res struct {
		Score       float64
		Artifacts   map[string]string
		Uncertainty []string `json:"uncertainty_factors"`
	}
	line := out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("result line %q: %v", line, err)
	}
	if res.Score != 0.95 || res.Artifacts["intent"] != ".asdd/specs/slice-004/intent.md" || len(res.Uncertainty) != 0 {
		t.Errorf("discovery result %+v", res)
	}
	if !strings.Contains(e.read(res.Artifacts["intent"]), "Audit Trail") {
		t.Error("artifact not written")
	}
	// The implementation agent's first run on SLICE-004 scores 0.71 (seed
	// 000's example), with an uncertainty factor; a sub-agent does its task.
	t.Setenv("CUSTODIAN_AGENT", "implementation")
	first := e.must("demo-agent")
	if !strings.Contains(first, `"score":0.71`) || !strings.Contains(first, "uncertainty_factors") {
		t.Errorf("first implementation run: %s", first)
	}
	t.Setenv("CUSTODIAN_TASK", "T1")
	if out := e.must("demo-agent"); !strings.Contains(out, "task T1 of SLICE-004 done") {
		t.Errorf("sub-agent: %s", out)
	}
}
