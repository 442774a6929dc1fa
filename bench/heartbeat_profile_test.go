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

// TestProfileHeartbeats runs bench daemon's heartbeat row (the daemon in
// this process, as bench daemon runs it) for profiles and CPU per
// heartbeat:
//
//	HEARTBEAT_PROFILE=64 go test ./bench -run TestProfileHeartbeats -cpuprofile cpu.out
//
// HEARTBEAT_SLICES sets the manifest's slices (default 1000). The clients
// run with the pprof label side=client, the daemon without.
func TestProfileHeartbeats(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HEARTBEAT_PROFILE"))
	if n == 0 {
		t.Skip("HEARTBEAT_PROFILE=<clients> unset")
	}
	slices := 1000
	if s, _ := strconv.Atoi(os.Getenv("HEARTBEAT_SLICES")); s > 0 {
		slices = s
	}
	dir := t.TempDir()
	doc, err := Manifest(slices, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Seed(dir, doc); err != nil {
		t.Fatal(err)
	}
	d, err := StartDaemon(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
		// Warm up: the daemon decodes the manifest on its first use.
		if _, err := DaemonProposals(d, "warm-up", n, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		cpu0 := rusageCPU()
		r, err := DaemonProposals(d, "heartbeats", n, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		cpu := time.Duration(rusageCPU() - cpu0)
		t.Logf("%d clients, %d slices: %.0f/s p50 %v p99 %v (%d heartbeats), process CPU %v per heartbeat (clients and daemon)",
			n, slices, r.PerSecond, r.P50, r.P99, r.Ops, cpu/time.Duration(r.Ops))
	})
}

// rusageCPU is the CPU time (user and system) the process used so far.
func rusageCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
