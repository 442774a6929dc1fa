package bench

import (
	"context"
	"os"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestProfileProposals runs bench daemon's real-proposal row (the
// daemon in this process, as bench daemon runs it) for profiles:
//
//	PROPOSAL_PROFILE=64 go test ./bench -run TestProfileProposals -cpuprofile cpu.out
//
// PROPOSAL_SLICES sets the manifest's slices (default 5000). The clients
// run with the pprof label side=client, the daemon without.
func TestProfileProposals(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PROPOSAL_PROFILE"))
	if n == 0 {
		t.Skip("PROPOSAL_PROFILE=<clients> unset")
	}
	slices := 5000
	if s, _ := strconv.Atoi(os.Getenv("PROPOSAL_SLICES")); s > 0 {
		slices = s
	}
	dir := t.TempDir()
	doc, err := ProposalManifest(slices)
	if err != nil {
		t.Fatal(err)
	}
	if err := Seed(dir, doc); err != nil {
		t.Fatal(err)
	}
	art, err := SeedArtifact(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := StartDaemon(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
		cpu0 := processCPU()
		r, err := RealProposals(d, "real proposals", art, n, slices, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		cpu := time.Duration(processCPU() - cpu0)
		t.Logf("%d clients, %d slices: %.0f/s p50 %v p99 %v (%d proposals), process CPU %v per proposal (clients and daemon)",
			n, slices, r.PerSecond, r.P50, r.P99, r.Ops, cpu/time.Duration(r.Ops))
	})
}

// processCPU is the CPU time (user and system) the process used so far.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
