// Package progress keeps a cycle's progress files, the seed's file sync
// protocol, and reads them back for a rebuild.
//
// Each cycle has its own directory, .workflow/.cycle/{cycleId}.progress/
// (the seed's rebuildState reads it there; its file-sync table abbreviates
// it to .progress/):
//
//	ra/requirements.md            requirements updated (version, edge cases, specification)
//	ep/exploration.json           exploration updated (not in the seed's table; kept so a rebuild loses less)
//	ep/plan.json                  plan updated: the plan object, as in the cycle document
//	cd/changes.log                changes appended: NDJSON, one change per line, plus iteration markers
//	vas/test-results.json         test results updated: the test_results object
//	coordination/timeline.md      cycle metadata and one section per iteration
//
// Files are derived from the cycle document after every commit: Render is
// a pure function of the state, so the files always say what the state
// says, and a finished iteration's section of the timeline, like a written
// line of the change log, never changes. Parse reads them back (every parser
// is fuzzed) and cycle.Restore turns them into a state.
//
// # Formats
//
// requirements.md:
//
//	# Requirements
//
//	- Version: 1.1.0
//	- Last updated: 2026-01-22T03:00:00Z
//
//	## Edge cases
//
//	- OAuth timeout handling
//	- an edge case that spans
//	  two lines (continuation lines are indented two spaces)
//
//	## Specification
//
//	<the specification, verbatim, to the end of the file>
//
// With no edge cases the section holds the line "(none)".
//
// changes.log: each line is a JSON object; a change has the seed's ChangeLog
// fields; a marker is {"iteration_marker":N,"timestamp":"…"} and follows
// the last change of iteration N.
//
// timeline.md: Markdown for people, with the machine-readable part in
// single-line ```json fences: the fence under the "# Cycle" heading holds
// the metadata (cycle_id, title, description, task_history, created_at,
// max_iterations); the fence under each "## Iteration N" heading holds that
// IterationRecord; the fence under a final "## Cycle completed" or "## Cycle
// stopped" heading holds {status, completed_at | failure_reason}.
//
// # Writing
//
// Sync (the only function here that touches the disk) writes through an
// os.Root opened on the project root, so no path, symlink included, can
// lead outside it. Each file is replaced atomically (temp file, fsync,
// rename, directory fsync) and only when its content changed. Concurrent
// syncs are serialised by flock(2) on <progress dir>/.lock, and a sync never
// writes an older revision over a newer one (the revision written last is
// kept in <progress dir>/.revision).
package progress
