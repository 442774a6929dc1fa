// Package runner drives a project's agents through the ASDD pipeline of
// seed 004 (`custodian run`): for each slice it starts the next agent of
// the slice's phase as a process (any command: an LLM CLI, a script), lets
// the custodian's gates judge what the agent reports, and goes on, phase by
// phase, until the slice is DONE, halted, or stopped.
//
// # Deciding
//
// What runs next is decided from the committed manifest alone (Next): the
// agents that work in the slice's status, in pipeline order up to the one
// that completes the phase, minus those with a live accepted chain entry
// for it; an agent without a command is skipped (or, if it completes the
// phase, stops the slice). In IMPLEMENTATION, once the planning agent ran,
// the slice's open tasks run first as context-fresh sub-agents of the
// implementation agent (CUSTODIAN_TASK set), as asdd.Ready allows them —
// wave N only after wave N-1 is done — in parallel up to MaxParallel; the
// implementation agent then runs once more to report for the phase. A
// QUICK_FIX slice runs implementation, then QA. Because nothing is
// remembered outside the manifest, a runner that died resumes exactly where
// the committed state says: committed phases and tasks never run twice.
//
// # Running an agent
//
// Each run gets a context packet (Packet, a JSON file named by
// CUSTODIAN_CONTEXT): the slice, the agent's gate, the task and the text of
// the requirement it serves, the relevant files, the applicable domain
// terms, the steering rules and the base revision. The agent reports with
// `custodian propose` itself, or prints a Result as its last line of output
// and the runner proposes it. Its process runs in a process group of its
// own: past its timeout, or when its slice halts, or when the run is
// interrupted, the whole group is killed. A run that timed out or crashed
// is retried heartbeat.retries times (seed 004: once) and then escalated:
// asdd.AgentTimeout halts the slice (AGENT_TIMEOUT) with its escalation
// notice and failure-log row. Heartbeats: ACTIVE when an agent starts (with
// wave and task counts for sub-agents), IDLE when its last run ends.
//
// # Files
//
// .asdd/runs/<run-id>/ holds every run's packet (NNN-SLICE-AGENT[-TASK]-ATTEMPT.json)
// and its output (.log). .asdd/runs/runner.lock is held by the running
// runner (one per project); .asdd/runs/runner.json lists its live agent
// process groups, so that `--resume` after a crash can kill the leftovers
// before it goes on; it is removed when a run ends.
//
// Everything that touches the outside is injected (State, Starter, Clock,
// FS), so the logic is tested without processes; the CLI wires the real
// ones (cmd/custodian/internal/cli/run/).
package runner
