// Package impl is the task-manifest domain of seed 001 (ADR-008): the
// orchestration state of a plan's implementation kept in .impl/manifest.json,
// formerly driven by the principled-implementation plugin's task-manifest.sh.
//
// Everything here is pure: functions take a decoded Manifest and a time and
// return a new state or a *reason.Error; none of them touches disk. The one
// exception is git.go, which asks git about branches for the staleness check.
//
// # File layout
//
// The layout is the original script's, field order included; fields this
// package does not know are kept, in their order, after the known ones:
//
//	{
//	  "version": "1.0.0",
//	  "plan": {"path": "...", "number": "003", "title": "...", "decomposed_at": "2026-02-22T10:00:00Z"},
//	  "phases": [{"number": 1, "depends_on": [], "bounded_contexts": ["BC-1"]}],
//	  "tasks": [{"id": "1.1", "phase": 1, "description": "...", "bounded_contexts": ["BC-1"],
//	             "status": "pending", "branch": null, "check_results": null, "error": null,
//	             "retries": 0, "created_at": "...", "updated_at": "..."}]
//	}
//
// Timestamps are UTC, second precision, "YYYY-MM-DDTHH:MM:SSZ".
//
// # Statuses
//
// pending, in_progress, validating, passed, failed, merged, abandoned,
// conflict. merged and abandoned are terminal: a task in either never moves
// to another status. A failed task moving to in_progress is a retry and
// increments retries.
package impl
