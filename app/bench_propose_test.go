package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"syscall"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/store/file"
)

// BenchmarkLocalProposal measures one real proposal through the
// application layer as the daemon runs it (a Hold-mode file store, group
// commit, the artifact hashed from its file), on manifests of 1,000 and
// 10,000 slices: each operation proposes on a slice of its own, so its
// cost should not depend on the slices it does not touch.
func BenchmarkLocalProposal(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			doc, err := bench.ProposalManifest(n)
			if err != nil {
				b.Fatal(err)
			}
			if err := bench.Seed(dir, doc); err != nil {
				b.Fatal(err)
			}
			art, err := bench.SeedArtifact(dir)
			if err != nil {
				b.Fatal(err)
			}
			st, err := file.Open(dir, file.Options{Hold: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			cfg := asdd.DefaultConfig()
			svc := app.NewLocal(app.Options{Store: st, Root: dir, Config: func() (*asdd.Config, error) { return cfg, nil },
				Logger: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			i := 0
			propose := func() {
				if i >= n {
					b.Fatalf("more than %d proposals: every slice has one", n)
				}
				resp, err := svc.ASDD(ctx, asdd.Proposal{Agent: "discovery", Slice: fmt.Sprintf("SLICE-%05d", i), Score: 0.97,
					Artifacts: []asdd.Artifact{{Name: "intent", Path: art}}})
				i++
				if err != nil || !resp.Committed || resp.Verdict != nil {
					b.Fatalf("proposal %d: %v %+v", i, err, resp)
				}
			}
			propose() // the first decodes the manifest
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			ops := min(b.N, n-1)
			for range ops {
				propose()
			}
			// The process's CPU time per proposal (the store's goroutines
			// included): a measure that fsync waits and a busy machine
			// disturb less than the time per operation.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(ops), "cpu-ns/op")
		})
	}
}

func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
