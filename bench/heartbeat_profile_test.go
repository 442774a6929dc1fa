package bench

import (
	"context"
	"runtime/pprof"
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
	d, _, n, slices := profiledDaemon(t, "HEARTBEAT", 1000, func(n int) ([]byte, error) { return Manifest(n, 0) })
	pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
		// Warm up: the daemon decodes the manifest on its first use.
		if _, err := DaemonProposals(d, "warm-up", n, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		measureCPU(t, n, slices, "heartbeat", func() (Result, error) {
			return DaemonProposals(d, "heartbeats", n, 2*time.Second)
		})
	})
}
