// Package cycle is the domain of the Parallel Dev Cycle (seed 003): the
// unified state of one multi-agent development cycle, kept in
// .workflow/.cycle/{cycleId}.json, and the rules that every change to it
// obeys.
//
// The document is the seed's CycleState interface, field for field and in
// the seed's order: core metadata, status and timing, the four agents (ra,
// the Requirements Analyst; ep, the Exploration Planner; cd, the Code
// Developer; vas, the Validation Archivist), phase tracking, the versioned
// shared context (requirements, exploration, plan, changes, test_results),
// iterations and coordination (feedback, decisions, blockers). Unknown
// top-level fields written by other tools are preserved.
//
// Everything here is pure: an operation (an Op) takes a State and the time
// from an injected clock and returns the next State or a *reason.Error that
// names the rule it broke; the input is never modified. Apply runs every
// operation through the same two checks: Validate (the state is well formed)
// and CheckTransition (nothing that is history was edited: the change log,
// feedback log, phase errors, task history and finished iterations only
// grow; versions only increase; a stopped cycle never changes again).
//
// Timestamps are UTC, written as RFC 3339 with a "Z" suffix. (The seed's
// sample code adds eight hours to the clock and still writes "Z", which
// labels a UTC+8 time as UTC; Custodian does not copy that.)
//
// Reading and writing the .progress files is package cycle/progress.
package cycle
