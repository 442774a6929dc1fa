// Package resolve is `custodian resolve`: a human decision on a halted slice.
package resolve
