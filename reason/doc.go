// Package reason holds the stable reason codes every rejection carries and
// the process exit codes they map to (DESIGN.md §6).
//
// A rule, a store or a command that refuses something returns a *reason.Error:
// a stable Code that machines branch on and a human sentence that names the
// problem. Callers test for a code with errors.Is(err, reason.SliceLocked) or
// read it with reason.CodeOf(err).
package reason
