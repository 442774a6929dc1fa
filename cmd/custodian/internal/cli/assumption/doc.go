// Package assumption is `custodian assumption`: assumptions-first discovery,
// correcting a slice's wrong assumption.
package assumption
