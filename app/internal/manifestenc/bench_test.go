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

// BenchmarkNextProposal measures what the daemon does under its commit
// lock per real proposal besides the store: ApplyFinalized of a discovery
// agent's accepted proposal on a slice of its own (bench daemon's real
// proposals, artifact hashes as the application layer fills them in),
// then Encoded.Next. A proposal copies the slice list (the one part that
// grows with the number of slices); apply-ns/op is ApplyFinalized's part.
func BenchmarkNextProposal(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			raw, err := bench.ProposalManifest(n)
			if err != nil {
				b.Fatal(err)
			}
			m, err := asdd.Decode(raw)
			if err != nil {
				b.Fatal(err)
			}
			cfg := asdd.DefaultConfig()
			first, err := asdd.Apply(m, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive}, cfg, benchNow)
			if err != nil {
				b.Fatal(err)
			}
			start, err := manifestenc.NewEncoded(first.Manifest)
			if err != nil {
				b.Fatal(err)
			}
			e := start
			var applyTime time.Duration
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%n == 0 {
					e = start // every slice proposed: start again
				}
				op := asdd.Proposal{Agent: "discovery", Slice: fmt.Sprintf("SLICE-%05d", i%n), Score: 0.97,
					Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/bench/intent.md", SHA256: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}},
					Observed:  map[string]string{}}
				t0 := time.Now()
				out, err := asdd.ApplyFinalized(e.Manifest, op, cfg, benchNow.Add(time.Duration(i)*time.Second))
				applyTime += time.Since(t0)
				if err != nil || out.Verdict != nil {
					b.Fatalf("proposal not accepted: %v %v", err, out.Verdict)
				}
				ne, patch, err := e.Next(out.Manifest)
				if err != nil || patch == nil {
					b.Fatalf("Next: patch %s, %v", patch, err)
				}
				e = ne
			}
			b.ReportMetric(float64(applyTime.Nanoseconds())/float64(b.N), "apply-ns/op")
		})
	}
}
