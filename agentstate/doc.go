// Package agentstate is the workflow state of the subagents state-manager
// (seed 002): .agents/tmp/state.json, schema v2.
//
// The state is kept as an ordered JSON tree (Object), so that a file the
// original plugin wrote — including fields this package does not know, such
// as worktree or reviewFix — is read, merged and written back with its keys
// in their order. The tree is read and written with go-json-experiment/json's
// jsontext, the library that keeps unknown members for the other documents
// (a patch merges into any member, known or not, so the state has no
// struct of known fields). Every function here is pure: it takes the current state
// and a time and returns the next state or a *reason.Error; the CLI does the
// reading and writing through the store, which gives the seed's atomic write
// protocol and .tmp recovery rules.
//
// # Schema v2
//
//	{
//	  "version": 2,
//	  "task": "<task description>",
//	  "status": "pending|in_progress|stopped|completed|failed|blocked|restarting|skipped",
//	  "currentStage": "EXPLORE|PLAN|IMPLEMENT|TEST|FINAL",
//	  "currentPhase": "0|1.1|1.2|1.3|2.1|2.2|2.3|3.1|3.2|3.3|4.1|4.2|4.3",
//	  "stages": {
//	    "EXPLORE": {"status": "pending", "agentCount": 0},
//	    "PLAN": {"status": "pending", "phases": {}, "restartCount": 0},
//	    "IMPLEMENT": {"status": "pending", "phases": {}, "restartCount": 0},
//	    "TEST": {"status": "pending", "enabled": true, "restartCount": 0},
//	    "FINAL": {"status": "pending", "restartCount": 0}
//	  },
//	  "files": {},
//	  "failure": null,
//	  "compaction": {"lastCompactedAt": null, "history": []},
//	  "startedAt": null,
//	  "updatedAt": null,
//	  "stoppedAt": null
//	}
//
// Phase 0 belongs to EXPLORE, 1.x to PLAN, 2.x to IMPLEMENT, 3.x to TEST and
// 4.x to FINAL. Phase outputs live in .agents/tmp/phases/{phase}-output.{ext}
// and files maps each phase to its output's path. Timestamps are UTC,
// "YYYY-MM-DDTHH:MM:SSZ", as in the seed's failure record.
package agentstate
