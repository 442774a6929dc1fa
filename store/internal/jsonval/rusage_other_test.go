//go:build !unix

package jsonval_test

import "testing"

// cpuTime reports nothing where getrusage(2) does not exist.
func cpuTime(*testing.B) func() { return func() {} }
