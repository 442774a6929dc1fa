// Package status is `custodian status`: the board of slices, agents and gates.
package status
