// Package apply is `custodian apply`: a jq program run on a document inside
// one commit (the drop-in for the seeds' state_update).
package apply
