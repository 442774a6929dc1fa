package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/asdd"
)

// StepKind is what the runner does next for a slice.
type StepKind string

// Step kinds.
const (
	// StepAgent runs one agent for the slice's phase.
	StepAgent StepKind = "agent"
	// StepTasks runs the slice's open implementation tasks as waves of
	// sub-agents of Agent.
	StepTasks StepKind = "tasks"
	// StepDone: the slice is DONE (or a QUICK_FIX whose agents all ran).
	StepDone StepKind = "done"
	// StepHalted: the slice is BLOCKED; only a human resolution lets it go on.
	StepHalted StepKind = "halted"
	// StepStop: the runner cannot or may not go on with the slice (it
	// reached --until, needs human review, an agent has no command…).
	StepStop StepKind = "stop"
)

// Step is the next thing to do for a slice, decided from the manifest
// alone (so that a resumed runner decides exactly as the one that crashed).
type Step struct {
	Kind  StepKind
	Phase string
	Agent string
	// Why says in a sentence why the slice stops or halted.
	Why string
	// Skipped lists the agents of the phase passed over for want of a command.
	Skipped []string
}

// PhaseAgents returns the agents that work on a slice in status, in
// pipeline order: those whose phases include it (not the "*" agents),
// up to and including the first that completes it, with the phase's gate
// agents (phase_gates) that come later in pipeline order run just before
// the completer (the domain refuses to complete the phase without their
// accepted results). QUICK_FIX has no completer: all of its agents run
// (implementation, then QA).
func PhaseAgents(cfg *asdd.Config, status string) []*asdd.Agent {
	var out []*asdd.Agent
	var completer *asdd.Agent
	for i := range cfg.Agents {
		a := &cfg.Agents[i]
		if slices.Contains(a.Phases, "*") || !a.Works(status) {
			continue
		}
		if a.CompletesPhase(status) {
			completer = a
			break
		}
		out = append(out, a)
	}
	if completer == nil {
		return out
	}
	for _, g := range cfg.Gates(status) {
		if a, ok := cfg.Agent(g); ok && !slices.Contains(out, a) && a != completer {
			out = append(out, a)
		}
	}
	return append(out, completer)
}

// before reports whether a comes before b in pipeline order.
func before(cfg *asdd.Config, a, b *asdd.Agent) bool {
	ia := slices.IndexFunc(cfg.Agents, func(x asdd.Agent) bool { return x.Name == a.Name })
	ib := slices.IndexFunc(cfg.Agents, func(x asdd.Agent) bool { return x.Name == b.Name })
	return ia < ib
}

// gate reports whether the agent gates the completion of phase.
func gate(cfg *asdd.Config, agent, phase string) bool {
	return slices.Contains(cfg.Gates(phase), agent)
}

// ranIn reports whether the agent has a live accepted chain entry for the
// phase: its run there is committed and must not be repeated.
func ranIn(s *asdd.Slice, agent, phase string) bool {
	for _, e := range s.ConfidenceChain {
		if e.Agent == agent && e.Phase == phase && e.Outcome == asdd.OutcomeAccepted {
			return true
		}
	}
	return false
}

// openTasks reports whether the slice has tasks not yet done.
func openTasks(s *asdd.Slice) bool {
	return slices.ContainsFunc(s.Tasks, func(t asdd.Task) bool { return t.Status != asdd.TaskDone })
}

// Next decides the slice's next step from its committed state. until, if
// not empty, is a phase at which the runner stops (its agents do not run).
func Next(s *asdd.Slice, cfg *asdd.Config, until string) Step {
	st := Step{Phase: s.Status}
	switch {
	case s.Status == asdd.Done:
		st.Kind, st.Why = StepDone, "DONE"
		return st
	case s.Status == asdd.Blocked:
		st.Kind = StepHalted
		st.Why = fmt.Sprintf("halted at %s (%s): %s", s.BlockedAtPhase, asdd.ModeLabel(s.FailureMode), s.BlockReason)
		return st
	case s.Status == asdd.NeedsHumanReview || len(s.NeedsHumanReview) > 0:
		st.Kind, st.Why = StepStop, "state marked NEEDS_HUMAN_REVIEW: a human must review it first (custodian approve)"
		return st
	case until != "" && asdd.PhaseIndex(s.Status) >= 0 && asdd.PhaseIndex(s.Status) >= asdd.PhaseIndex(until):
		st.Kind, st.Why = StepStop, "reached "+until+" (--until)"
		return st
	}
	agents := PhaseAgents(cfg, s.Status)
	if len(agents) == 0 {
		st.Kind, st.Why = StepStop, "no agent works in "+s.Status
		return st
	}
	last := agents[len(agents)-1]
	for _, a := range agents {
		if ranIn(s, a.Name, s.Status) {
			continue
		}
		completer := a.CompletesPhase(s.Status)
		// The implementation tasks run (as sub-agents of the completer)
		// once planned, before the agents that follow the planner.
		if s.Status == asdd.Implementation && openTasks(s) && last.CompletesPhase(s.Status) && len(last.Command) > 0 && !before(cfg, a, last) {
			st.Agent, st.Kind = last.Name, StepTasks
			return st
		}
		if len(a.Command) == 0 {
			if completer {
				st.Kind, st.Agent = StepStop, a.Name
				st.Why = fmt.Sprintf("the %s agent, which completes %s, has no command in %s (set its command, or agent_defaults.command for every agent)", a.Name, s.Status, asdd.ConfigPath)
				return st
			}
			if gate(cfg, a.Name, s.Status) {
				st.Kind, st.Agent = StepStop, a.Name
				st.Why = fmt.Sprintf("the %s agent, whose accepted result %s needs before it completes (phase_gates), has no command in %s: give it one, or take it out of phase_gates.%s", a.Name, s.Status, asdd.ConfigPath, s.Status)
				return st
			}
			st.Skipped = append(st.Skipped, a.Name)
			continue
		}
		st.Agent = a.Name
		st.Kind = StepAgent
		return st
	}
	if s.Status == asdd.QuickFix {
		st.Kind, st.Why = StepDone, "QUICK_FIX logged"
		return st
	}
	st.Kind = StepStop
	st.Why = fmt.Sprintf("every agent of %s ran but none moved the slice on (%s)", s.Status, names(agents))
	return st
}

func names(as []*asdd.Agent) string {
	var n []string
	for _, a := range as {
		n = append(n, a.Name)
	}
	return strings.Join(n, ", ")
}

// PlannedRun is one agent run of a dry-run plan.
type PlannedRun struct {
	Phase   string   `json:"phase"`
	Agent   string   `json:"agent"`
	Command []string `json:"command,omitempty"`
	// Tasks are the implementation tasks by wave (sub-agents), for the
	// agent that completes IMPLEMENTATION.
	Tasks   []Wave `json:"tasks,omitempty"`
	Skipped bool   `json:"skipped,omitempty"`
	Note    string `json:"note,omitempty"`
}

// SlicePlan is what `custodian run --dry-run` shows for a slice: the runs
// from its current state on, assuming every gate passes.
type SlicePlan struct {
	Slice  string       `json:"slice"`
	Status string       `json:"status"`
	Runs   []PlannedRun `json:"runs"`
	// End says where the plan stops: DONE, --until, a halt, a missing command.
	End string `json:"end"`
}

// Plan projects the runs for s from its current state to DONE (or until),
// as if every gate passed. It is pure: nothing runs, nothing is committed.
func Plan(s *asdd.Slice, cfg *asdd.Config, until string) SlicePlan {
	p := SlicePlan{Slice: s.SliceID, Status: s.Status, Runs: []PlannedRun{}}
	sim := *s
	sim.ConfidenceChain = slices.Clone(s.ConfidenceChain)
	skipped := map[string]bool{}
	for range 64 { // bounded: the lifecycle is short
		st := Next(&sim, cfg, until)
		for _, name := range st.Skipped {
			if !skipped[sim.Status+" "+name] {
				skipped[sim.Status+" "+name] = true
				p.Runs = append(p.Runs, PlannedRun{Phase: sim.Status, Agent: name, Skipped: true, Note: "no command"})
			}
		}
		switch st.Kind {
		case StepDone, StepHalted, StepStop:
			p.End = st.Why
			return p
		}
		a, _ := cfg.Agent(st.Agent)
		run := PlannedRun{Phase: sim.Status, Agent: st.Agent, Command: a.Command}
		if st.Kind == StepTasks {
			run.Tasks = Waves(sim.Tasks)
			run.Note = fmt.Sprintf("%d open tasks as sub-agents, wave by wave", countOpen(sim.Tasks))
			sim.Tasks = slices.Clone(sim.Tasks)
			for i := range sim.Tasks {
				sim.Tasks[i].Status = asdd.TaskDone
			}
			p.Runs = append(p.Runs, run)
			continue // then the phase's remaining agents, the completer last
		}
		p.Runs = append(p.Runs, run)
		sim.ConfidenceChain = append(sim.ConfidenceChain, asdd.ChainEntry{Agent: st.Agent, Phase: sim.Status, Outcome: asdd.OutcomeAccepted})
		if a.CompletesPhase(sim.Status) {
			sim.Status = asdd.Next(sim.Status)
		}
	}
	p.End = "plan cut at 64 runs"
	return p
}

func countOpen(ts []asdd.Task) int {
	n := 0
	for _, t := range ts {
		if t.Status != asdd.TaskDone {
			n++
		}
	}
	return n
}

// Wave is one wave of open tasks.
type Wave struct {
	Wave  int      `json:"wave"`
	Tasks []string `json:"tasks"`
}

// Waves groups the open tasks by wave, in wave order.
func Waves(ts []asdd.Task) []Wave {
	byWave := map[int][]string{}
	for _, t := range ts {
		if t.Status != asdd.TaskDone {
			byWave[t.Wave] = append(byWave[t.Wave], t.ID)
		}
	}
	var out []Wave
	for _, w := range slices.Sorted(maps.Keys(byWave)) {
		out = append(out, Wave{Wave: w, Tasks: byWave[w]})
	}
	return out
}
