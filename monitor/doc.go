// Package monitor is the pipeline monitor of seed 000 ("timeout
// detection"): it looks at the agents' heartbeats and says what to do about
// the silent ones. It is a pure function of the heartbeats, a Policy and the
// time; callers read heartbeats from the manifest, call Evaluate, and commit
// the actions it returns (custodian monitor --once, or the daemon's loop).
//
// An ACTIVE agent whose last heartbeat is older than the timeout first gets
// a retry request (seed 004: "Agent timeout / crash — retry once; then
// escalate to TL"); if it stays silent for a further timeout after the
// request, it is escalated. A new heartbeat — or the agent leaving ACTIVE —
// clears both. Each action is returned once: the markers the caller records
// (RetryRequested, Escalated) make Evaluate idempotent.
package monitor
