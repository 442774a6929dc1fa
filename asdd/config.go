package asdd

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/custodian-dev/custodian/reason"
)

// ConfigPath is where the project's configuration lives, relative to the root.
const ConfigPath = ".asdd/config.yaml"

// DefaultConfigYAML is the configuration `custodian init` writes: seed 004's
// agents, thresholds and actions, with comments.
//
//go:embed config.default.yaml
var DefaultConfigYAML []byte

// Config is .asdd/config.yaml.
type Config struct {
	// source is the SHA-256 of the bytes the configuration was read from
	// ("sha256:<hex>"; ParseConfig, DefaultConfig), "" for one built by
	// hand (SHA256).
	source string

	Version              int          `yaml:"version"`
	Agents               []Agent      `yaml:"agents"`
	CCS                  CCSConfig    `yaml:"ccs"`
	Gating               Gating       `yaml:"gating"`
	UncertaintyThreshold float64      `yaml:"uncertainty_threshold"`
	RefinementLoopLimit  int          `yaml:"refinement_loop_limit"`
	LowConfidenceCascade int          `yaml:"low_confidence_cascade"`
	Escalation           Routing      `yaml:"escalation"`
	Roles                []string     `yaml:"roles"`
	Heartbeat            HeartbeatCfg `yaml:"heartbeat"`
	Lock                 LockCfg      `yaml:"lock"`
	Steering             Steering     `yaml:"steering"`
	// Store selects the state backend, e.g. etcd://host:2379/prefix; empty
	// means the embedded file store. --store and $CUSTODIAN_STORE override it.
	Store string `yaml:"store,omitempty"`
	// Pipeline configures `custodian run`.
	Pipeline Pipeline `yaml:"pipeline,omitempty"`
	// DirectEdits is what becomes of a state file edited behind the
	// custodian's back: "adopt" (the default) commits a valid edit as
	// actor direct-edit, "reject" keeps every edit aside (docs/store.md).
	DirectEdits string `yaml:"direct_edits,omitempty"`
	// PhaseGates maps a phase to the agents whose accepted result the
	// slice needs before the phase completes (seed 004: QA and Security
	// before deployment).
	PhaseGates map[string][]string `yaml:"phase_gates"`
	// Quick is quick mode (/asdd:quick): its gates and its boundary.
	Quick QuickCfg `yaml:"quick"`
	// AgentDefaults gives every agent the command, timeout and env it does
	// not set itself (ParseConfig applies it to Agents).
	AgentDefaults AgentDefaults `yaml:"agent_defaults,omitempty"`
}

// AgentDefaults is agent_defaults: what `custodian run` uses for an agent
// that does not say. In command and env values, {agent} stands for the
// agent's name: command: [./agents/run.sh, "{agent}"].
type AgentDefaults struct {
	Command []string          `yaml:"command,omitempty"`
	Timeout Duration          `yaml:"timeout,omitempty"`
	Env     map[string]string `yaml:"env,omitempty"`
}

// AgentPlaceholder is replaced by the agent's name in agent_defaults.
const AgentPlaceholder = "{agent}"

// applyAgentDefaults fills each agent's command, timeout and env from
// agent_defaults where the agent sets none (env: the agent's own variables
// win over the defaults').
func (c *Config) applyAgentDefaults() {
	d := c.AgentDefaults
	if len(d.Command) == 0 && d.Timeout == 0 && len(d.Env) == 0 {
		return
	}
	agents := make([]Agent, len(c.Agents))
	for i, a := range c.Agents {
		if len(a.Command) == 0 && len(d.Command) > 0 {
			a.Command = make([]string, len(d.Command))
			for j, arg := range d.Command {
				a.Command[j] = strings.ReplaceAll(arg, AgentPlaceholder, a.Name)
			}
		}
		if a.Timeout == 0 {
			a.Timeout = d.Timeout
		}
		if len(d.Env) > 0 {
			env := make(map[string]string, len(d.Env)+len(a.Env))
			for k, v := range d.Env {
				env[k] = strings.ReplaceAll(v, AgentPlaceholder, a.Name)
			}
			maps.Copy(env, a.Env)
			a.Env = env
		}
		agents[i] = a
	}
	c.Agents = agents
}

// QuickCfg configures quick mode.
type QuickCfg struct {
	// Gates are the agents whose accepted result a quick fix needs before
	// it is DONE (seed 004: "QA Agent verifies against codebase").
	Gates []string `yaml:"gates"`
	// Boundary is what a quick fix may touch ("zero architectural impact;
	// the Tech Lead defines the boundary").
	Boundary QuickBoundary `yaml:"boundary"`
}

// QuickBoundary limits the artifacts of a quick fix: by kind (the
// phase_data name) and by path (globs with ** for any depth). An empty
// allow list allows any kind or path not excluded.
type QuickBoundary struct {
	AllowedArtifacts  []string `yaml:"allowed_artifacts"`
	ExcludedArtifacts []string `yaml:"excluded_artifacts"`
	AllowedPaths      []string `yaml:"allowed_paths"`
	ExcludedPaths     []string `yaml:"excluded_paths"`
}

// Check refuses an artifact outside the boundary.
func (b QuickBoundary) Check(a Artifact) error {
	if slices.Contains(b.ExcludedArtifacts, a.Name) {
		return reason.New(reason.OutsideQuickBoundary, "a quick fix may not touch the %s artifact (%s): quick.boundary.excluded_artifacts in %s; run it through the pipeline instead", a.Name, a.Path, ConfigPath).
			With("artifact", a.Name).With("path", a.Path)
	}
	if len(b.AllowedArtifacts) > 0 && !slices.Contains(b.AllowedArtifacts, a.Name) {
		return reason.New(reason.OutsideQuickBoundary, "a quick fix may touch only the artifacts %s, not %s (%s): quick.boundary.allowed_artifacts in %s", strings.Join(b.AllowedArtifacts, ", "), a.Name, a.Path, ConfigPath).
			With("artifact", a.Name).With("path", a.Path)
	}
	for _, g := range b.ExcludedPaths {
		if ok, _ := doublestar.Match(g, a.Path); ok {
			return reason.New(reason.OutsideQuickBoundary, "a quick fix may not touch %s (it matches %q, quick.boundary.excluded_paths in %s)", a.Path, g, ConfigPath).
				With("artifact", a.Name).With("path", a.Path)
		}
	}
	if len(b.AllowedPaths) > 0 && !slices.ContainsFunc(b.AllowedPaths, func(g string) bool { ok, _ := doublestar.Match(g, a.Path); return ok }) {
		return reason.New(reason.OutsideQuickBoundary, "a quick fix may touch only paths matching %s, not %s (quick.boundary.allowed_paths in %s)", strings.Join(b.AllowedPaths, ", "), a.Path, ConfigPath).
			With("artifact", a.Name).With("path", a.Path)
	}
	return nil
}

// Gates returns the agents gating the completion of phase.
func (c *Config) Gates(phase string) []string { return c.PhaseGates[phase] }

// Pipeline is how `custodian run` drives the agents.
type Pipeline struct {
	// MaxParallel bounds how many agents (and implementation sub-agents
	// within a wave) run at once; 0 means the runner's default.
	MaxParallel int `yaml:"max_parallel,omitempty"`
}

// Agent is one pipeline agent's gate.
type Agent struct {
	Name              string   `yaml:"name"`
	MinConfidence     float64  `yaml:"min_confidence"`
	ActionIfBelow     string   `yaml:"action_if_below"`
	Marker            string   `yaml:"marker,omitempty"`
	RouteTo           []string `yaml:"route_to"`
	SignOff           []string `yaml:"sign_off"`
	Phases            []string `yaml:"phases"`
	Completes         []string `yaml:"completes,omitempty"`
	RequiredArtifacts []string `yaml:"required_artifacts,omitempty"`
	// Command runs the agent for `custodian run` (argv; the first element is
	// the program). Empty: the runner cannot start this agent.
	Command []string `yaml:"command,omitempty"`
	// Timeout is how long one run of the agent may take before its process
	// group is killed and the run retried once (heartbeat.retries), then
	// escalated; 0 means the heartbeat timeout.
	Timeout Duration `yaml:"timeout,omitempty"`
	// Env is added to the agent process's environment (the CUSTODIAN_*
	// variables the runner sets cannot be overridden).
	Env map[string]string `yaml:"env,omitempty"`
	// BelowAction is what a halt below the agent's minimum does besides
	// blocking the slice: feature_branch (the agent's work goes to a git
	// branch named in the block record, for a human code review),
	// steering_update (its proposal is written as a steering-update
	// proposal awaiting approval) or none. Unset: the default agent's of
	// the same name.
	BelowAction string `yaml:"below_action,omitempty"`
}

// Below actions.
const (
	BelowFeatureBranch  = "feature_branch"
	BelowSteeringUpdate = "steering_update"
	BelowNone           = "none"
)

// DefaultMarker is what a halted phase artifact is marked with (seed 004).
const DefaultMarker = "DRAFT — AGENT HALTED"

// ArtifactMarker returns the marker for the agent's halted artifacts.
func (a *Agent) ArtifactMarker() string {
	if a.Marker != "" {
		return a.Marker
	}
	return DefaultMarker
}

// Works reports whether the agent may propose while a slice is in status.
func (a *Agent) Works(status string) bool {
	return slices.Contains(a.Phases, "*") || slices.Contains(a.Phases, status)
}

// CompletesPhase reports whether the agent's accepted proposal moves a
// slice in status on to the next phase.
func (a *Agent) CompletesPhase(status string) bool { return slices.Contains(a.Completes, status) }

// CCSConfig is the Cumulative Confidence Score setup.
type CCSConfig struct {
	Agents []string `yaml:"agents"`
	Floor  float64  `yaml:"floor"`
}

// Gating is dynamic gating.
type Gating struct {
	Margin float64 `yaml:"margin"`
	Raise  float64 `yaml:"raise"`
}

// Routing names who is told about a halt and who must sign it off.
type Routing struct {
	RouteTo []string `yaml:"route_to"`
	SignOff []string `yaml:"sign_off"`
}

// HeartbeatCfg configures heartbeat timeouts.
type HeartbeatCfg struct {
	Timeout Duration `yaml:"timeout"`
	Retries int      `yaml:"retries"`
}

// LockCfg configures slice leases.
type LockCfg struct {
	DefaultTTL Duration `yaml:"default_ttl"`
}

// Steering holds the steering rules.
type Steering struct {
	// Precedence maps a slice field ("phase_data.design") to agents in
	// order of authority.
	Precedence map[string][]string `yaml:"precedence"`
}

// Duration is a time.Duration written as "15m" in YAML.
type Duration time.Duration

// UnmarshalYAML parses a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration such as 15m", n.Line, s)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes the duration as a string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// D returns the time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// DefaultConfig returns the seed's defaults.
func DefaultConfig() *Config {
	c := defaultConfig()
	c.source = defaultSum()
	return c
}

// defaultSum is the defaults' SHA256: that of DefaultConfigYAML read as a
// file, so that a project without the file and one with the file init
// wrote pin the same rules.
var defaultSum = sync.OnceValue(func() string {
	c, err := ParseConfig(DefaultConfigYAML)
	if err != nil {
		panic(fmt.Sprintf("asdd: default config: %v", err))
	}
	return c.source
})

// defaultConfig is DefaultConfig before its sum (ParseConfig starts from it).
func defaultConfig() *Config {
	var c Config
	if err := decodeConfig(DefaultConfigYAML, &c); err != nil {
		panic(fmt.Sprintf("asdd: default config: %v", err))
	}
	if err := c.Validate(); err != nil {
		panic(fmt.Sprintf("asdd: default config: %v", err))
	}
	return &c
}

// ParseConfig reads a configuration. Keys left out keep the defaults of
// DefaultConfigYAML (a list or map given replaces the default one). Unknown
// keys, wrong types and out-of-range values are INVALID_INPUT errors naming
// the key.
func ParseConfig(data []byte) (*Config, error) {
	def := defaultConfig()
	c := *def
	c.Agents = nil
	c.Steering.Precedence = nil
	c.PhaseGates = nil
	c.Quick = QuickCfg{Gates: nil, Boundary: QuickBoundary{}}
	quickSet := quickKeys(data)
	if err := decodeConfig(data, &c); err != nil {
		return nil, err
	}
	if c.Agents == nil {
		c.Agents = def.Agents
	}
	// The default gates hold for the agents the configuration defines
	// (a configuration with its own agent list keeps those of them it has).
	if c.PhaseGates == nil && !quickSet["phase_gates"] {
		for phase, agents := range def.PhaseGates {
			for _, n := range agents {
				if a, ok := c.Agent(n); ok && a.Works(phase) {
					if c.PhaseGates == nil {
						c.PhaseGates = map[string][]string{}
					}
					c.PhaseGates[phase] = append(c.PhaseGates[phase], n)
				}
			}
		}
	}
	if !quickSet["quick.gates"] {
		for _, n := range def.Quick.Gates {
			if a, ok := c.Agent(n); ok && a.Works(QuickFix) {
				c.Quick.Gates = append(c.Quick.Gates, n)
			}
		}
	}
	if !quickSet["quick.boundary"] {
		c.Quick.Boundary = def.Quick.Boundary
	}
	for i := range c.Agents {
		if d, ok := def.Agent(c.Agents[i].Name); ok && c.Agents[i].BelowAction == "" {
			c.Agents[i].BelowAction = d.BelowAction
		}
	}
	if c.Steering.Precedence == nil {
		c.Steering.Precedence = def.Steering.Precedence
	}
	if err := c.validateAgentDefaults(); err != nil {
		return nil, err
	}
	c.applyAgentDefaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c.source = c.rulesSum()
	return &c, nil
}

// SHA256 is the SHA-256 ("sha256:<hex>") of what the configuration
// decides for the rules (rulesSum), "" for a Config built by hand. The
// manifest pins it (ProjectContext.ConfigSHA256).
func (c *Config) SHA256() string { return c.source }

// rulesSum hashes the parsed configuration (JSON of the struct: comments,
// layout and defaults written out or left implicit do not count) without
// what only `custodian run` and the monitor read — the agents' command,
// timeout and environment, agent_defaults, pipeline, the heartbeat
// timeouts — and the state backend (store): giving agents a command
// changes no rule, lowering a minimum does.
func (c *Config) rulesSum() string {
	v := *c
	v.source, v.Store, v.Pipeline, v.AgentDefaults, v.Heartbeat = "", "", Pipeline{}, AgentDefaults{}, HeartbeatCfg{}
	v.Agents = slices.Clone(c.Agents)
	for i := range v.Agents {
		v.Agents[i].Command, v.Agents[i].Timeout, v.Agents[i].Env = nil, 0, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("asdd: config rules: %v", err)) // plain data: cannot fail
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// validateAgentDefaults checks agent_defaults as an agent's command,
// timeout and env are checked, naming agent_defaults in the error.
func (c *Config) validateAgentDefaults() error {
	bad := func(key, format string, args ...any) error {
		return reason.New(reason.InvalidInput, "%s: %s: %s", ConfigPath, key, fmt.Sprintf(format, args...))
	}
	d := Agent{Command: c.AgentDefaults.Command, Timeout: c.AgentDefaults.Timeout, Env: c.AgentDefaults.Env}
	return d.validateRun("agent_defaults", bad)
}

// quickKeys reports which of phase_gates, quick.gates and quick.boundary
// the configuration sets (an empty value set on purpose is kept: no gates).
func quickKeys(data []byte) map[string]bool {
	var raw struct {
		PhaseGates *yaml.Node `yaml:"phase_gates"`
		Quick      *struct {
			Gates    *yaml.Node `yaml:"gates"`
			Boundary *yaml.Node `yaml:"boundary"`
		} `yaml:"quick"`
	}
	out := map[string]bool{}
	if yaml.Unmarshal(data, &raw) != nil {
		return out
	}
	out["phase_gates"] = raw.PhaseGates != nil
	if raw.Quick != nil {
		out["quick.gates"] = raw.Quick.Gates != nil
		out["quick.boundary"] = raw.Quick.Boundary != nil
	}
	return out
}

func decodeConfig(data []byte, c *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		var root yaml.Node
		_ = yaml.Unmarshal(data, &root)
		return reason.New(reason.InvalidInput, "%s: %s", ConfigPath, explainYAMLError(err, &root))
	}
	return nil
}

var (
	yamlFieldRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`field (\S+) not found in type \S+`) })
	yamlLineRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })
)

// explainYAMLError rewrites the YAML library's messages so that each names
// the key it is about ("ccs (line 3): cannot unmarshal !!seq …").
func explainYAMLError(err error, root *yaml.Node) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	var parts []string
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line = yamlFieldRE().ReplaceAllString(line, "unknown key $1")
		if m := yamlLineRE().FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if key := keyAtLine(root, n, ""); key != "" && !strings.Contains(m[2], "unknown key") {
				line = fmt.Sprintf("%s (line %d): %s", key, n, m[2])
			}
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

// keyAtLine returns the dotted path of the deepest key whose value starts
// on line n.
func keyAtLine(n *yaml.Node, line int, path string) string {
	if n == nil {
		return ""
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if k := keyAtLine(c, line, path); k != "" {
				return k
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if deeper := keyAtLine(v, line, p); deeper != "" {
				return deeper
			}
			if v.Line == line || k.Line == line {
				return p
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if k := keyAtLine(c, line, fmt.Sprintf("%s[%d]", path, i)); k != "" {
				return k
			}
		}
	}
	return ""
}

// Validate checks every value, naming the offending key.
func (c *Config) Validate() error {
	bad := func(key, format string, args ...any) error {
		return reason.New(reason.InvalidInput, "%s: %s: %s", ConfigPath, key, fmt.Sprintf(format, args...))
	}
	unit := func(key string, v float64) error {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return bad(key, "%v is outside [0, 1]", v)
		}
		return nil
	}
	if c.Version != 1 {
		return bad("version", "unsupported version %d (want 1)", c.Version)
	}
	switch c.DirectEdits {
	case "", "adopt", "reject":
	default:
		return bad("direct_edits", "%q: want adopt or reject", c.DirectEdits)
	}
	if len(c.Agents) == 0 {
		return bad("agents", "no agents defined")
	}
	names := map[string]bool{}
	for i, a := range c.Agents {
		key := fmt.Sprintf("agents[%d]", i)
		if !agentNameRE().MatchString(a.Name) {
			return bad(key+".name", "%q is not an agent name (lower case letters, digits, _)", a.Name)
		}
		if names[a.Name] {
			return bad(key+".name", "agent %q defined twice", a.Name)
		}
		names[a.Name] = true
		if err := unit(key+".min_confidence", a.MinConfidence); err != nil {
			return err
		}
		if len(a.Phases) == 0 {
			return bad(key+".phases", "agent %q works in no phase", a.Name)
		}
		for j, p := range a.Phases {
			if p != "*" && !IsStatus(p) {
				return bad(fmt.Sprintf("%s.phases[%d]", key, j), "unknown phase %q", p)
			}
		}
		for j, p := range a.Completes {
			if !slices.Contains(a.Phases, p) || Next(p) == "" {
				return bad(fmt.Sprintf("%s.completes[%d]", key, j), "%q is not a phase the agent works in and can complete", p)
			}
		}
		for j, r := range append(slices.Clone(a.RouteTo), a.SignOff...) {
			if !slices.Contains(c.Roles, r) {
				return bad(fmt.Sprintf("%s.route_to/sign_off[%d]", key, j), "unknown role %q (roles: %s)", r, strings.Join(c.Roles, ", "))
			}
		}
		if err := a.validateRun(key, bad); err != nil {
			return err
		}
		switch a.BelowAction {
		case "", BelowNone, BelowFeatureBranch, BelowSteeringUpdate:
		default:
			return bad(key+".below_action", "%q is not one of feature_branch, steering_update, none", a.BelowAction)
		}
	}
	for i, n := range c.CCS.Agents {
		if !names[n] {
			return bad(fmt.Sprintf("ccs.agents[%d]", i), "unknown agent %q", n)
		}
	}
	if err := unit("ccs.floor", c.CCS.Floor); err != nil {
		return err
	}
	if err := unit("gating.margin", c.Gating.Margin); err != nil {
		return err
	}
	if err := unit("gating.raise", c.Gating.Raise); err != nil {
		return err
	}
	if err := unit("uncertainty_threshold", c.UncertaintyThreshold); err != nil {
		return err
	}
	if c.RefinementLoopLimit < 2 {
		return bad("refinement_loop_limit", "%d is below 2", c.RefinementLoopLimit)
	}
	if c.LowConfidenceCascade < 2 {
		return bad("low_confidence_cascade", "%d is below 2", c.LowConfidenceCascade)
	}
	if len(c.Roles) == 0 {
		return bad("roles", "no roles defined")
	}
	for j, r := range append(slices.Clone(c.Escalation.RouteTo), c.Escalation.SignOff...) {
		if !slices.Contains(c.Roles, r) {
			return bad(fmt.Sprintf("escalation.route_to/sign_off[%d]", j), "unknown role %q", r)
		}
	}
	if len(c.Escalation.SignOff) == 0 {
		return bad("escalation.sign_off", "no role may sign off a halt")
	}
	if c.Heartbeat.Timeout <= 0 {
		return bad("heartbeat.timeout", "must be positive")
	}
	if c.Heartbeat.Retries < 0 || c.Heartbeat.Retries > 1 {
		return bad("heartbeat.retries", "%d: must be 0 or 1 (seed 004: retry once, then escalate)", c.Heartbeat.Retries)
	}
	if c.Pipeline.MaxParallel < 0 || c.Pipeline.MaxParallel > MaxParallelLimit {
		return bad("pipeline.max_parallel", "%d is outside [0, %d] (0: the runner's default)", c.Pipeline.MaxParallel, MaxParallelLimit)
	}
	if c.Lock.DefaultTTL <= 0 {
		return bad("lock.default_ttl", "must be positive")
	}
	for _, phase := range slices.Sorted(maps.Keys(c.PhaseGates)) {
		if !IsPhase(phase) || Next(phase) == "" {
			return bad("phase_gates."+phase, "%q is not a lifecycle phase that completes", phase)
		}
		for i, n := range c.PhaseGates[phase] {
			a, ok := c.Agent(n)
			if !names[n] || !ok {
				return bad(fmt.Sprintf("phase_gates.%s[%d]", phase, i), "unknown agent %q", n)
			}
			if !a.Works(phase) {
				return bad(fmt.Sprintf("phase_gates.%s[%d]", phase, i), "the %s agent does not work in %s", n, phase)
			}
		}
	}
	for i, n := range c.Quick.Gates {
		a, ok := c.Agent(n)
		if !names[n] || !ok {
			return bad(fmt.Sprintf("quick.gates[%d]", i), "unknown agent %q", n)
		}
		if !a.Works(QuickFix) {
			return bad(fmt.Sprintf("quick.gates[%d]", i), "the %s agent does not work in QUICK_FIX", n)
		}
	}
	for _, l := range []struct {
		key   string
		globs []string
	}{{"quick.boundary.allowed_paths", c.Quick.Boundary.AllowedPaths}, {"quick.boundary.excluded_paths", c.Quick.Boundary.ExcludedPaths}} {
		for i, g := range l.globs {
			if !doublestar.ValidatePattern(g) || g == "" {
				return bad(fmt.Sprintf("%s[%d]", l.key, i), "%q is not a valid glob", g)
			}
		}
	}
	for field, agents := range c.Steering.Precedence {
		for i, n := range agents {
			if !names[n] {
				return bad(fmt.Sprintf("steering.precedence.%s[%d]", field, i), "unknown agent %q", n)
			}
		}
	}
	return nil
}

var (
	agentNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]*$`) })
	envNameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
)

// MaxParallelLimit bounds pipeline.max_parallel.
const MaxParallelLimit = 1024

// RunnerEnv lists the environment variables `custodian run` sets for every
// agent process; an agent's env may not override them.
var RunnerEnv = []string{"CUSTODIAN_CONTEXT", "CUSTODIAN_SLICE", "CUSTODIAN_AGENT", "CUSTODIAN_TASK",
	"CUSTODIAN_SERVER", "CUSTODIAN_ROOT", "CUSTODIAN_BIN", "CUSTODIAN_BASE_REVISION", "CUSTODIAN_ATTEMPT"}

// validateRun checks the keys `custodian run` uses: command, timeout, env.
func (a *Agent) validateRun(key string, bad func(key, format string, args ...any) error) error {
	if len(a.Command) > 0 && strings.TrimSpace(a.Command[0]) == "" {
		return bad(key+".command[0]", "the program to run is empty")
	}
	for j, arg := range a.Command {
		if strings.ContainsRune(arg, 0) {
			return bad(fmt.Sprintf("%s.command[%d]", key, j), "contains a NUL byte")
		}
	}
	if a.Timeout < 0 {
		return bad(key+".timeout", "%s is negative", a.Timeout.D())
	}
	for _, k := range slices.Sorted(maps.Keys(a.Env)) {
		if !envNameRE().MatchString(k) {
			return bad(key+".env."+k, "%q is not an environment variable name", k)
		}
		if slices.Contains(RunnerEnv, k) {
			return bad(key+".env."+k, "is set by the runner for every agent and cannot be overridden")
		}
		if strings.ContainsRune(a.Env[k], 0) {
			return bad(key+".env."+k, "contains a NUL byte")
		}
	}
	return nil
}

// RunTimeout is how long one run of the agent may take: its timeout, or
// the heartbeat timeout when it has none.
func (c *Config) RunTimeout(a *Agent) time.Duration {
	if a.Timeout > 0 {
		return a.Timeout.D()
	}
	return c.Heartbeat.Timeout.D()
}

// Agent returns the named agent's configuration ("spec" or "spec_agent").
func (c *Config) Agent(name string) (*Agent, bool) {
	name = strings.TrimSuffix(name, "_agent")
	for i := range c.Agents {
		if c.Agents[i].Name == name {
			return &c.Agents[i], true
		}
	}
	return nil, false
}

// index returns the agent's position in pipeline order, or -1.
func (c *Config) index(name string) int {
	for i := range c.Agents {
		if c.Agents[i].Name == name {
			return i
		}
	}
	return -1
}

// NextAgent returns the agent after name in pipeline order, skipping agents
// that work in every phase; "" if none.
func (c *Config) NextAgent(name string) string {
	for i := c.index(name) + 1; i > 0 && i < len(c.Agents); i++ {
		if !slices.Contains(c.Agents[i].Phases, "*") {
			return c.Agents[i].Name
		}
	}
	return ""
}

// Downstream returns the agents after name in pipeline order (those a halt
// pauses), skipping agents that work in every phase.
func (c *Config) Downstream(name string) []string {
	var out []string
	i := c.index(name)
	if i < 0 {
		i = -1
	}
	for _, a := range c.Agents[i+1:] {
		if !slices.Contains(a.Phases, "*") {
			out = append(out, a.Name)
		}
	}
	return out
}

// IsCCSAgent reports whether the agent's score enters the CCS.
func (c *Config) IsCCSAgent(name string) bool { return slices.Contains(c.CCS.Agents, name) }

// PhaseArtifacts returns the artifacts of slice s (phase_data name ->
// path) that its phase works on: those the phase's agents must provide,
// or — for a phase that produces none of its own, such as VALIDATION —
// those of the latest earlier phase that has some. nil if none is named.
func (c *Config) PhaseArtifacts(s *Slice, phase string) map[string]string {
	for i := PhaseIndex(phase); i >= 0; i-- {
		ph := Lifecycle[i]
		out := map[string]string{}
		for _, a := range c.Agents {
			works := slices.Contains(a.Phases, ph) || (ph == Spec && slices.Contains(a.Phases, BehaviorCapture) && s.Type == TypeRetroSpec)
			if !works {
				continue
			}
			for _, r := range a.RequiredArtifacts {
				if p := s.PhaseData[r]; p != "" && p != NeedsHumanReview {
					out[r] = p
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}
