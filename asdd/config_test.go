package asdd

import (
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// The defaults are seed 004's table.
func TestDefaultConfigIsTheSeeds(t *testing.T) {
	c := DefaultConfig()
	want := []struct {
		name   string
		min    float64
		action string
	}{
		{"discovery", 0.85, "Status → DRAFT — AWAITING CLARIFICATION; route to PO/TL"},
		{"spec", 0.85, "Flag ambiguous sections; route to TL"},
		{"validation", 0.90, "Block pipeline; require TL sign-off"},
		{"domain", 0.85, "Draft domain model; require TL review"},
		{"design", 0.80, "Draft architecture; require TL review before proceeding"},
		{"task_planning", 0.80, ""},
		{"implementation", 0.75, "Commit to feature branch; require human code review"},
		{"qa", 0.85, ""},
		{"refactor", 0.80, ""},
		{"security", 0.95, "Block deployment; require TL + Security review"},
		{"devops", 0, ""},
		{"observability", 0, ""},
		{"knowledge", 0.80, "Propose steering update; require human approval"},
	}
	if len(c.Agents) != 13 {
		t.Fatalf("%d agents, want 13", len(c.Agents))
	}
	for _, w := range want {
		a, ok := c.Agent(w.name)
		if !ok {
			t.Fatalf("no agent %s", w.name)
		}
		if a.MinConfidence != w.min {
			t.Errorf("%s: min %v, want %v", w.name, a.MinConfidence, w.min)
		}
		if w.action != "" && a.ActionIfBelow != w.action {
			t.Errorf("%s: action %q, want %q", w.name, a.ActionIfBelow, w.action)
		}
	}
	if got := strings.Join(c.CCS.Agents, ","); got != "discovery,spec,validation,design,implementation" {
		t.Errorf("ccs agents %s", got)
	}
	if c.CCS.Floor != 0.65 || c.Gating.Margin != 0.02 || c.Gating.Raise != 0.05 || c.UncertaintyThreshold != 0.95 || c.RefinementLoopLimit != 3 || c.LowConfidenceCascade != 2 {
		t.Errorf("thresholds %+v %+v %v %v %v", c.CCS, c.Gating, c.UncertaintyThreshold, c.RefinementLoopLimit, c.LowConfidenceCascade)
	}
	if c.Heartbeat.Timeout.D() != 15*time.Minute || c.Lock.DefaultTTL.D() != 10*time.Minute {
		t.Errorf("timeouts %v %v", c.Heartbeat.Timeout.D(), c.Lock.DefaultTTL.D())
	}
	if a, _ := c.Agent("discovery"); a.ArtifactMarker() != "DRAFT — AWAITING CLARIFICATION" {
		t.Errorf("discovery marker %q", a.ArtifactMarker())
	}
	if a, _ := c.Agent("design"); a.ArtifactMarker() != "DRAFT — AGENT HALTED" {
		t.Errorf("design marker %q", a.ArtifactMarker())
	}
}

func TestParseConfigKeepsDefaults(t *testing.T) {
	c, err := ParseConfig([]byte("version: 1\nccs:\n  agents: [discovery, spec]\n  floor: 0.7\nheartbeat:\n  timeout: 2m\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.CCS.Floor != 0.7 || len(c.CCS.Agents) != 2 || c.Heartbeat.Timeout.D() != 2*time.Minute {
		t.Fatalf("given values not taken: %+v %v", c.CCS, c.Heartbeat.Timeout.D())
	}
	if len(c.Agents) != 13 || c.Gating.Margin != 0.02 || c.Heartbeat.Retries != 1 || len(c.Steering.Precedence) == 0 {
		t.Fatalf("defaults lost: %d agents, margin %v", len(c.Agents), c.Gating.Margin)
	}
	empty, err := ParseConfig(nil)
	if err != nil || len(empty.Agents) != 13 {
		t.Fatalf("empty config: %v", err)
	}
}

func TestBadConfigNamesTheKey(t *testing.T) {
	for _, c := range []struct{ yaml, key string }{
		{"version: 2", "version"},
		{"ccs:\n  floor: 1.5", "ccs.floor"},
		{"ccs:\n  agents: [discovery, nobody]", "ccs.agents[1]"},
		{"gating:\n  margin: -0.1", "gating.margin"},
		{"uncertainty_threshold: 2", "uncertainty_threshold"},
		{"refinement_loop_limit: 1", "refinement_loop_limit"},
		{"heartbeat:\n  timeout: soon", "soon"},
		{"heartbeat:\n  timeout: -1m", "heartbeat.timeout"},
		{"lock:\n  default_ttl: 0s", "lock.default_ttl"},
		{"colour: blue", "colour"},
		{"agents:\n  - name: spec\n    min_confidence: 1.2\n    phases: [SPEC]\n    route_to: [TL]\n    sign_off: [TL]", "agents[0].min_confidence"},
		{"agents:\n  - name: spec\n    min_confidence: 0.8\n    phases: [CODING]", "agents[0].phases[0]"},
		{"agents:\n  - name: spec\n    min_confidence: 0.8\n    phases: [SPEC]\n    route_to: [CEO]", "CEO"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n  - name: spec\n    phases: [SPEC]", "agents[1].name"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n    completes: [DESIGN]", "agents[0].completes[0]"},
		{"steering:\n  precedence:\n    phase_data.design: [design, ghost]", "steering.precedence.phase_data.design[1]"},
		{"ccs: [1, 2]", "ccs"},
		{"roles: []", "roles"},
		{"heartbeat:\n  retries: 2", "heartbeat.retries"},
		{"pipeline:\n  max_parallel: -1", "pipeline.max_parallel"},
		{"pipeline:\n  max_parallel: 5000", "pipeline.max_parallel"},
		{"pipeline:\n  parallel: 3", "parallel"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n    command: ['']", "agents[0].command[0]"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n    command: claude", "agents[0].command"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n    timeout: -5s", "agents[0].timeout"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n    timeout: long", "long"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n    env: {BAD-NAME: x}", "agents[0].env.BAD-NAME"},
		{"agents:\n  - name: spec\n    phases: [SPEC]\n    env: {CUSTODIAN_SLICE: x}", "agents[0].env.CUSTODIAN_SLICE"},
	} {
		_, err := ParseConfig([]byte(c.yaml))
		if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%q: error %v, want INVALID_INPUT naming %q", c.yaml, err, c.key)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(DefaultConfigYAML)
	f.Add([]byte("version: 1\nccs:\n  floor: 0.7\n"))
	f.Add([]byte("agents: [{name: a, phases: ['*']}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			if reason.CodeOf(err) != reason.InvalidInput {
				t.Fatalf("config error without INVALID_INPUT: %v", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted config fails validation: %v", err)
		}
	})
}

// The runner's keys: an agent's command, timeout and env, and the
// pipeline's max_parallel; RunTimeout falls back to the heartbeat timeout.
func TestRunnerConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`version: 1
heartbeat:
  timeout: 3m
pipeline:
  max_parallel: 6
ccs:
  agents: [spec]
  floor: 0.65
steering:
  precedence: {}
agents:
  - name: spec
    phases: [SPEC]
    completes: [SPEC]
    command: [claude, -p, "write the spec"]
    timeout: 90s
    env: {MODEL: opus}
  - name: validation
    phases: [VALIDATION]
    command: [./validate.sh]
`))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := c.Agent("spec")
	val, _ := c.Agent("validation")
	if c.Pipeline.MaxParallel != 6 || strings.Join(spec.Command, "|") != "claude|-p|write the spec" || spec.Env["MODEL"] != "opus" {
		t.Errorf("parsed %+v %+v", c.Pipeline, spec)
	}
	if c.RunTimeout(spec) != 90*time.Second || c.RunTimeout(val) != 3*time.Minute {
		t.Errorf("run timeouts %v %v", c.RunTimeout(spec), c.RunTimeout(val))
	}
	if d := DefaultConfig(); d.Pipeline.MaxParallel != 4 || d.Heartbeat.Retries != 1 {
		t.Errorf("defaults %+v %+v", d.Pipeline, d.Heartbeat)
	}
}

// agent_defaults gives every agent (the thirteen default ones here) the
// command, timeout and env it does not set, with {agent} replaced by its
// name; an agent's own keys win.
func TestAgentDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		agent      string
		command    string
		timeout    time.Duration
		env        map[string]string
		err        string
	}{
		{"default agents get the command", "version: 1\nagent_defaults:\n  command: [./agents/run.sh, \"{agent}\"]\n", "design", "./agents/run.sh|design", 0, nil, ""},
		{"placeholder inside an argument", "version: 1\nagent_defaults:\n  command: [claude, -p, \"You are the {agent} agent ({agent}).\"]\n", "spec", "claude|-p|You are the spec agent (spec).", 0, nil, ""},
		{"timeout and env", "version: 1\nagent_defaults:\n  command: [x]\n  timeout: 2m\n  env: {ROLE: \"{agent}\", MODEL: opus}\n", "qa", "x", 2 * time.Minute, map[string]string{"ROLE": "qa", "MODEL": "opus"}, ""},
		{"the agent's own keys win", `version: 1
agent_defaults:
  command: [default-cmd]
  timeout: 2m
  env: {MODEL: opus, ROLE: "{agent}"}
agents:
  - name: spec
    phases: [SPEC]
    command: [own-cmd]
    timeout: 5m
    env: {MODEL: sonnet}
  - name: design
    phases: [DESIGN]
ccs: {agents: [spec], floor: 0.65}
steering: {precedence: {}}
`, "spec", "own-cmd", 5 * time.Minute, map[string]string{"MODEL": "sonnet", "ROLE": "spec"}, ""},
		{"empty program", "version: 1\nagent_defaults:\n  command: [\"\"]\n", "", "", 0, nil, "agent_defaults.command[0]: the program to run is empty"},
		{"runner variable", "version: 1\nagent_defaults:\n  env: {CUSTODIAN_AGENT: x}\n", "", "", 0, nil, "agent_defaults.env.CUSTODIAN_AGENT: is set by the runner"},
		{"unknown key", "version: 1\nagent_defaults:\n  cmd: [x]\n", "", "", 0, nil, "unknown key cmd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || reason.CodeOf(err) != reason.InvalidInput {
					t.Fatalf("err %v, want INVALID_INPUT with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, ok := c.Agent(tc.agent)
			if !ok {
				t.Fatalf("no agent %s", tc.agent)
			}
			if got := strings.Join(a.Command, "|"); got != tc.command {
				t.Errorf("command %q, want %q", got, tc.command)
			}
			if a.Timeout.D() != tc.timeout {
				t.Errorf("timeout %v, want %v", a.Timeout.D(), tc.timeout)
			}
			if len(a.Env) != len(tc.env) {
				t.Errorf("env %v, want %v", a.Env, tc.env)
			}
			for k, v := range tc.env {
				if a.Env[k] != v {
					t.Errorf("env %v, want %v", a.Env, tc.env)
				}
			}
			if tc.agent == "design" && len(c.Agents) == 13 {
				for _, a := range c.Agents {
					if len(a.Command) == 0 {
						t.Errorf("agent %s has no command", a.Name)
					}
				}
			}
		})
	}
	// The defaults themselves are left as they were.
	if d := DefaultConfig(); len(d.Agents[0].Command) != 0 {
		t.Errorf("the default config was changed: %v", d.Agents[0].Command)
	}
}
