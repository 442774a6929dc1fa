package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/store/file"
)

// BenchmarkLocalOps measures operations through the application layer as
// the daemon runs them (a Hold-mode file store, group commit), from 32
// goroutines at once, on manifests of 1,000, 10,000 and 40,000 slices: real
// proposals (each on a slice of its own, the artifact hashed from its file)
// and agent heartbeats. Besides the time, it reports the process's CPU time
// per operation (the store's goroutines included), which fsync waits and a
// busy machine disturb less. An operation's cost should not depend on the
// slices it does not touch. Run with -benchtime Nx, N below the number of
// slices.
func BenchmarkLocalOps(b *testing.B) {
	for _, kind := range []string{"proposal", "heartbeat"} {
		for _, n := range []int{1000, 10000, 40000} {
			b.Run(fmt.Sprintf("%s/slices=%d", kind, n), func(b *testing.B) {
				svc, art := benchProject(b, n)
				ctx := context.Background()
				var next atomic.Int64
				op := func() asdd.Op {
					i := int(next.Add(1)) - 1
					if kind == "heartbeat" {
						done := i
						return asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive, Completed: &done}
					}
					if i >= n {
						b.Fatalf("more than %d proposals: every slice has one", n)
					}
					return asdd.Proposal{Agent: "discovery", Slice: fmt.Sprintf("SLICE-%05d", i), Score: 0.97,
						Artifacts: []asdd.Artifact{{Name: "intent", Path: art}}}
				}
				run := func() {
					resp, err := svc.ASDD(ctx, op())
					if err != nil || !resp.Committed || resp.Verdict != nil {
						b.Errorf("%v %+v", err, resp)
					}
				}
				run()                // the first decodes the manifest
				b.SetParallelism(16) // 32 goroutines on 2 CPUs
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := processCPU()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						run()
					}
				})
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// benchProject seeds a project with n slices in DISCOVERY and the
// artifact the proposals name, and returns its application layer.
func benchProject(b *testing.B, n int) (*app.Local, string) {
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
	b.Cleanup(func() { st.Close() })
	cfg := asdd.DefaultConfig()
	return app.NewLocal(app.Options{Store: st, Root: dir, Config: func() (*asdd.Config, error) { return cfg, nil },
		Logger: slog.New(slog.DiscardHandler)}), art
}

func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
