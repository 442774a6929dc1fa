package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
)

func TestNext(t *testing.T) {
	cfg := testConfig(0)
	noSpec := testConfig(0)
	a, _ := noSpec.Agent("spec")
	a.Command = nil
	noDomain := testConfig(0)
	a, _ = noDomain.Agent("domain")
	a.Command = nil
	noSecurity := testConfig(0)
	a, _ = noSecurity.Agent("security")
	a.Command = nil
	acc := func(agent, phase string) asdd.ChainEntry {
		return asdd.ChainEntry{Agent: agent, Phase: phase, Outcome: asdd.OutcomeAccepted}
	}
	for _, c := range []struct {
		name    string
		cfg     *asdd.Config
		s       asdd.Slice
		until   string
		kind    StepKind
		agent   string
		why     string
		skipped string
	}{
		{"first agent", cfg, asdd.Slice{Status: asdd.Discovery}, "", StepAgent, "discovery", "", ""},
		{"done", cfg, asdd.Slice{Status: asdd.Done}, "", StepDone, "", "DONE", ""},
		{"halted", cfg, asdd.Slice{Status: asdd.Blocked, FailureMode: asdd.ModeCCSFloor, BlockedAtPhase: asdd.Design}, "", StepHalted, "", "Cascading Confidence Failure", ""},
		{"review", cfg, asdd.Slice{Status: asdd.Spec, NeedsHumanReview: []string{"name"}}, "", StepStop, "", "NEEDS_HUMAN_REVIEW", ""},
		{"until reached", cfg, asdd.Slice{Status: asdd.Design}, asdd.Design, StepStop, "", "--until", ""},
		{"until later", cfg, asdd.Slice{Status: asdd.Spec}, asdd.Design, StepAgent, "spec", "", ""},
		{"design: domain first", cfg, asdd.Slice{Status: asdd.Design}, "", StepAgent, "domain", "", ""},
		{"design: domain ran", cfg, asdd.Slice{Status: asdd.Design, ConfidenceChain: []asdd.ChainEntry{acc("domain", asdd.Design)}}, "", StepAgent, "design", "", ""},
		{"halted entry runs again", cfg, asdd.Slice{Status: asdd.Design, ConfidenceChain: []asdd.ChainEntry{{Agent: "domain", Phase: asdd.Design, Outcome: asdd.OutcomeHalted}}}, "", StepAgent, "domain", "", ""},
		{"superseded entry runs again", cfg, asdd.Slice{Status: asdd.Spec, ConfidenceChain: []asdd.ChainEntry{{Agent: "spec", Phase: asdd.Spec, Outcome: asdd.OutcomeSuperseded}}}, "", StepAgent, "spec", "", ""},
		{"no command for a completer", noSpec, asdd.Slice{Status: asdd.Spec}, "", StepStop, "spec", "has no command", ""},
		{"no command: skipped", noDomain, asdd.Slice{Status: asdd.Design}, "", StepAgent, "design", "", "domain"},
		{"implementation: planning first", cfg, asdd.Slice{Status: asdd.Implementation}, "", StepAgent, "task_planning", "", ""},
		{"implementation: tasks", cfg, asdd.Slice{Status: asdd.Implementation, ConfidenceChain: []asdd.ChainEntry{acc("task_planning", asdd.Implementation)},
			Tasks: []asdd.Task{{ID: "T1", Wave: 1, Status: asdd.TaskPending}}}, "", StepTasks, "implementation", "", ""},
		{"implementation: tasks done, refactor (a gate) next", cfg, asdd.Slice{Status: asdd.Implementation, ConfidenceChain: []asdd.ChainEntry{acc("task_planning", asdd.Implementation)},
			Tasks: []asdd.Task{{ID: "T1", Wave: 1, Status: asdd.TaskDone}}}, "", StepAgent, "refactor", "", ""},
		{"implementation: refactor ran", cfg, asdd.Slice{Status: asdd.Implementation, ConfidenceChain: []asdd.ChainEntry{acc("task_planning", asdd.Implementation), acc("refactor", asdd.Implementation)},
			Tasks: []asdd.Task{{ID: "T1", Wave: 1, Status: asdd.TaskDone}}}, "", StepAgent, "implementation", "", ""},
		{"no command for a gate", noSecurity, asdd.Slice{Status: asdd.CICD, ConfidenceChain: []asdd.ChainEntry{acc("qa", asdd.CICD)}}, "", StepStop, "security", "phase_gates", ""},
		{"ci: security, devops", cfg, asdd.Slice{Status: asdd.CICD, ConfidenceChain: []asdd.ChainEntry{acc("qa", asdd.CICD), acc("security", asdd.CICD)}}, "", StepAgent, "devops", "", ""},
		{"ci: qa first", cfg, asdd.Slice{Status: asdd.CICD}, "", StepAgent, "qa", "", ""},
		{"quick fix", cfg, asdd.Slice{Status: asdd.QuickFix}, "", StepAgent, "implementation", "", ""},
		{"quick fix: qa", cfg, asdd.Slice{Status: asdd.QuickFix, ConfidenceChain: []asdd.ChainEntry{acc("implementation", asdd.QuickFix)}}, "", StepAgent, "qa", "", ""},
		{"quick fix logged", cfg, asdd.Slice{Status: asdd.QuickFix, ConfidenceChain: []asdd.ChainEntry{acc("implementation", asdd.QuickFix), acc("qa", asdd.QuickFix)}}, "", StepDone, "", "QUICK_FIX", ""},
		{"retro spec", cfg, asdd.Slice{Status: asdd.BehaviorCapture}, "", StepAgent, "spec", "", ""},
		{"partial", cfg, asdd.Slice{Status: asdd.Partial}, "", StepAgent, "validation", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := Next(&c.s, c.cfg, c.until)
			if st.Kind != c.kind || st.Agent != c.agent || !strings.Contains(st.Why, c.why) || strings.Join(st.Skipped, ",") != c.skipped {
				t.Errorf("Next = %+v, want %s %s %q skipped %q", st, c.kind, c.agent, c.why, c.skipped)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	cfg := testConfig(0)
	a, _ := cfg.Agent("task_planning")
	a.Command = nil
	s := &asdd.Slice{SliceID: "S", Status: asdd.Design, Tasks: []asdd.Task{
		{ID: "T1", Wave: 1, Status: asdd.TaskDone}, {ID: "T2", Wave: 1}, {ID: "T3", Wave: 3}, {ID: "T4", Wave: 3}}}
	p := Plan(s, cfg, "")
	var got []string
	for _, r := range p.Runs {
		e := r.Phase + ":" + r.Agent
		if r.Skipped {
			e += "(skipped)"
		}
		if len(r.Tasks) > 0 {
			for _, w := range r.Tasks {
				e += fmt.Sprintf("[%d: %s]", w.Wave, strings.Join(w.Tasks, " "))
			}
		}
		got = append(got, e)
	}
	want := "DESIGN:domain DESIGN:design IMPLEMENTATION:task_planning(skipped) IMPLEMENTATION:implementation[1: T2][3: T3 T4] IMPLEMENTATION:refactor IMPLEMENTATION:implementation CI_CD:qa CI_CD:security CI_CD:devops OBSERVABILITY:observability"
	if strings.Join(got, " ") != want || p.End != "DONE" {
		t.Errorf("plan\n got %s (end %s)\nwant %s", strings.Join(got, " "), p.End, want)
	}
	if s.Tasks[1].Status != "" || len(s.ConfidenceChain) != 0 {
		t.Error("Plan changed the slice")
	}
	if p := Plan(s, cfg, asdd.CICD); p.End != "reached CI_CD (--until)" || len(p.Runs) != 6 {
		t.Errorf("until: %+v", p)
	}
	// A gate agent without a command stops the plan where the domain would
	// refuse to complete the phase.
	sec, _ := cfg.Agent("security")
	sec.Command = nil
	if p := Plan(s, cfg, ""); !strings.Contains(p.End, "the security agent, whose accepted result CI_CD needs") {
		t.Errorf("plan without security: %+v", p)
	}
}
