package manifestenc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/app/internal/manifestenc"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
)

var benchNow = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)

// sizedManifest is bench.Finalized's manifest of n slices.
func sizedManifest(b *testing.B, n int) *asdd.Manifest {
	m, err := bench.Finalized(n, benchNow)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkNextHeartbeat measures what the daemon does per heartbeat
// besides the store: ApplyFinalized(Beat) on its latest manifest, then
// Encoded.Next (changed parts encoded and validated, the patch; the
// document's bytes are not made). Agents take turns, as in the daemon
// benchmark. Its cost should barely grow with the number of slices.
// apply-ns/op is the part spent in ApplyFinalized.
func BenchmarkNextHeartbeat(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			cfg := asdd.DefaultConfig()
			e, err := manifestenc.NewEncoded(sizedManifest(b, n))
			if err != nil {
				b.Fatal(err)
			}
			docBytes := e.Len()
			var applyTime time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				done := i
				op := asdd.Beat{Agent: cfg.Agents[i%len(cfg.Agents)].Name, Status: asdd.HeartbeatActive, Completed: &done}
				start := time.Now()
				out, err := asdd.ApplyFinalized(e.Manifest, op, cfg, benchNow.Add(time.Duration(i)*time.Second))
				applyTime += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				ne, patch, err := e.Next(out.Manifest)
				if err != nil || patch == nil {
					b.Fatalf("Next: patch %s, %v", patch, err)
				}
				e = ne
			}
			b.ReportMetric(float64(applyTime.Nanoseconds())/float64(b.N), "apply-ns/op")
			b.ReportMetric(float64(docBytes), "doc-bytes")
		})
	}
}
