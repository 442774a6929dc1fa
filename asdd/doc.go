// Package asdd is the ASDD domain of seeds 000 and 004: the state manifest
// (.asdd/state/manifest.json) in the seed's exact layout, its JSON Schema,
// the project configuration (.asdd/config.yaml) and the custodian's rules as
// pure functions.
//
// # Manifest
//
// Manifest, Slice, ChainEntry, Heartbeat… mirror the seed's JSON: members
// these types do not know are kept (Extra, go-json-experiment/json's inline
// jsontext.Value) and written back unchanged, in the order they were read,
// after the known ones. The bytes are encoding/json's, as the previous
// releases wrote them (json.go; testdata/encoding holds manifests they
// wrote, which decode and encode unchanged).
// Decode checks the embedded schema (Schema, draft 2020-12) before reading;
// Encode checks it again before returning bytes to commit, so a value that
// breaks the layout is never committed.
//
// # Rules
//
// Apply(manifest, op, config, now) runs one operation (tx.go; one file per
// operation or family of them: propose.go, lock.go, heartbeat.go…) — Proposal,
// AddSlice, Quick, LockSlice, UnlockSlice, Resolve, Approve, Beat, AddTask,
// CompleteTask, ClearReview, FlagDrift, AgentTimeout, ReportFailure — on a copy of the manifest and
// returns the next manifest with its events and file side effects, or a
// *reason.Error and no change. On the daemon's manifest (ApplyFinalized)
// an operation reads and copies only the slices it touches (finalize.go:
// the aggregate, an index of ids), but for one copy of the list of slice
// pointers. Apply does no I/O; the caller commits the
// manifest through the store and then applies the effects (package
// asdd/effects). An Outcome with a Verdict is a committed halt: the slice is
// BLOCKED and the proposer is told why.
//
// The rules, in the order a proposal meets them: known agent and a score in
// [0,1]; no NEEDS_HUMAN_REVIEW state anywhere; the slice's lease; a halted
// slice refuses everything but a human resolution; a score below the
// uncertainty threshold needs uncertainty factors (unless it is below the
// agent's minimum: then the slice halts, the missing factors a second
// finding); the agent must work in
// the slice's phase and may move it only to the next phase (skipping is for
// QUICK_FIX slices only); required artifacts; consistency and drift of the
// artifacts the slice already names; concurrent changes since the
// proposal's base revision (disjoint ones merge, conflicting ones go by the
// steering rules' precedence or halt with the conflict diff); then the
// gates — the refinement-loop limit, the agent's minimum (raised by dynamic
// gating), a low-confidence cascade, and the CCS floor; then the phase
// gates (the agents a phase needs accepted before it completes:
// GATE_PENDING). A QUICK_FIX slice skips the phase sequence but keeps the
// agents' minimums, the quick-fix boundary and QA before DONE. A gate that fails
// halts the slice: status BLOCKED with the block record of seed 000, the
// last-known-good phase, downstream agents paused, the proposal's artifacts
// marked and not accepted, an escalation notice and a failure-log row.
// Resolve (rerun, resume, return to a phase; on a conflict, resume in
// favour of one agent) or Approve by the roles the halt names is the only
// way out. A conflict also locks the slice until it is arbitrated; an
// agent's below_action adds a feature branch (implementation) or a
// steering-update proposal awaiting approval (knowledge). The confidence
// chain keeps one current entry per agent; earlier ones are history.
//
// NewBoard builds the status board (slices by phase, CCS and weak link,
// blockers, locks, escalations, heartbeat ages) that the CLI and the
// dashboard show.
//
// CCS is the exact product of the latest live score of each CCS agent
// (ComputeCCS); it is displayed to 3 decimals (FormatScore). The
// project's global_confidence_score is the mean CCS of active slices.
package asdd
