// Package halt is `custodian halt`: an agent reports a failure it detected and
// the slice halts.
package halt
