//go:build race

package file_test

// The race detector slows the crash test's child processes several times:
// it kills fewer of them.
func init() { raceEnabled = true }
