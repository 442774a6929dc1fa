// Package approve is `custodian approve`: a named role's sign-off on a halted
// slice.
package approve
