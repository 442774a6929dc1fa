// Package propose is `custodian propose`: an agent's result for a slice,
// validated by the rules and committed or rejected.
package propose
