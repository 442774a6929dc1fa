// Package escalations is `custodian escalations`: the escalation notices under
// .asdd/escalations.
package escalations
