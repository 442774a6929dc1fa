// Package state is `custodian state`: the workflow state in
// .agents/tmp/state.json (the seeds' state-manager, package agentstate).
package state
