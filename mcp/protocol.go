package mcp

import "strings"

// PromptName is the name of the prompt that states the protocol.
const PromptName = "custodian-protocol"

// instructions is what the server tells every client at initialization.
func instructions(admin bool) string {
	return "Custodian is the sole keeper of this pipeline's state. Read it with the read tools or the custodian://doc/<key> resources; " +
		"change it only through the tools, never by editing .asdd/, .impl/, .agents/tmp/ or .workflow/.cycle/ files. " +
		"A rejected call changes nothing and its error starts with a reason code (e.g. MISSING_UNCERTAINTY_FACTORS:). " +
		"Get the prompt " + PromptName + " for which tool to use at each step." + adminNote(admin)
}

func adminNote(admin bool) string {
	if admin {
		return " This server was started with the admin token: the human decisions (resolve, approve, force_unlock, rollback) are tools; call them only on a human's explicit instruction."
	}
	return ""
}

// protocol is the text of the custodian-protocol prompt.
func protocol(admin bool) string {
	var b strings.Builder
	b.WriteString(`# The custodian's protocol

The pipeline's state (the ASDD manifest, the task manifest, the state-manager's
state, the dev cycles) is kept by the custodian alone. Every change is checked
against the pipeline's rules and committed atomically, or rejected with a
reason code and nothing changed.

## Rules
1. Never write, edit, move or delete .asdd/state/*, .impl/manifest.json,
   .agents/tmp/state.json or .workflow/.cycle/* yourself (no editor, no shell
   redirect, no sed -i). Change them with the tools below.
2. Read before you act: every call reads the latest revision. Pass the
   revision you read as base_revision to propose, if_revision to cycle_update.
3. A tool error starts with a reason code. INVALID_INPUT: fix the arguments.
   SLICE_LOCKED / CONFLICT: someone else holds it; read again, do not retry
   blindly. BELOW_THRESHOLD and the other rule codes: the slice halted or the
   step is not allowed; report to the humans, do not work around it.
4. Halts are resolved by humans only (resolve, approve): never try to undo one.

## Which tool for which step
- See the board: status (one slice: status with slice), slice_show.
- Start a slice: slice_add. Hold it while you work: lock, then unlock.
- Report your result for a phase: propose (agent, slice, score, artifacts as
  NAME -> PATH relative to the project root, uncertainty factors below 0.95).
- Say you are alive: heartbeat (agent, status, slice, wave, done, remaining).
- Implementation tasks: tasks_ready lists what may start; task_claim takes one
  (exactly one agent wins a task, the others get CONFLICT: take another);
  task_done when it is done.
- Escalations waiting for humans: escalations.
- The implementation plan (task-manifest.sh): impl_add_task,
  impl_update_status, impl_get_task, impl_list_tasks, impl_summary.
- The state-manager's state: state_read, state_update (a deep merge).
- A dev cycle: cycle_read, cycle_update (with if_revision).
- What happened to a document: history (key, limit).
`)
	if admin {
		b.WriteString(`
## Human decisions (this server has the admin token)
resolve, approve, force_unlock and rollback record a human's decision. Call
them only when a named human (role) told you to, with their rationale.
`)
	}
	return b.String()
}
