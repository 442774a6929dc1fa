//go:build !unix

package testenv

import "testing"

// CPUTime reports nothing where getrusage(2) does not exist.
func CPUTime(*testing.B) func() { return func() {} }
