package file_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/bench"
)

// BenchmarkCommit measures durable commits through the file store; compare
// with BenchmarkBareReplace of the same size, measured in the same run.
func BenchmarkCommit(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20} {
		for _, writers := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("size=%d/writers=%d", size, writers), func(b *testing.B) {
				r, err := bench.StoreCommits(b.TempDir(), writers, size, time.Duration(b.N)*time.Millisecond)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.PerSecond, "commits/s")
				b.ReportMetric(float64(r.P99.Microseconds())/1000, "p99-ms")
			})
		}
	}
}

func BenchmarkBareReplace(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("size=%d", size), func(b *testing.B) {
			r, err := bench.BareReplace(b.TempDir(), size, time.Duration(b.N)*time.Millisecond)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.PerSecond, "ops/s")
		})
	}
}
