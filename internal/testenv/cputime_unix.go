//go:build unix

package testenv

import (
	"syscall"
	"testing"
)

// CPUTime starts measuring the process's user+system CPU time; the
// function it returns reports it per operation (cpu-ns/op), a figure less
// disturbed than wall time by other load on a shared machine:
//
//	defer testenv.CPUTime(b)()
func CPUTime(b *testing.B) func() {
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
