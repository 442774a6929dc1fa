//go:build unix

package store_test

import (
	"syscall"
	"testing"
)

// cpuTime reports the process's user+system CPU time per operation, a figure
// less disturbed than wall time by other load on a shared machine.
func cpuTime(b *testing.B) func() {
	start := rusage(b)
	return func() {
		b.ReportMetric(float64(rusage(b)-start)/float64(b.N), "cpu-ns/op")
	}
}

func rusage(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
