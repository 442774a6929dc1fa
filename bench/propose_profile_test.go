package bench

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
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
	d, dir, n, slices := profiledDaemon(t, "PROPOSAL", 5000, ProposalManifest)
	art, err := SeedArtifact(dir)
	if err != nil {
		t.Fatal(err)
	}
	pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
		// The daemon decodes the manifest on its first use: not a
		// proposal's cost.
		if _, err := d.Client.Slice(context.Background(), "SLICE-00000"); err != nil {
			t.Fatal(err)
		}
		measureCPU(t, n, slices, "proposal", func() (Result, error) {
			return RealProposals(d, "real proposals", art, n, slices, 2*time.Second)
		})
	})
	// Group commit: commits per journal fsync, and the fsyncs' time.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", d.sock)
	}}}
	resp, err := hc.Get("http://daemon/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	metric := func(name string) float64 {
		for _, l := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(l, name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		return 0
	}
	// The daemon's own time per commit (arrival to durable), from its
	// histogram: the bound of the bucket that holds the 99th percentile.
	var p99 string
	if n := metric("custodian_commit_duration_seconds_count"); n > 0 {
		for _, l := range strings.Split(string(body), "\n") {
			rest, ok := strings.CutPrefix(l, `custodian_commit_duration_seconds_bucket{le="`)
			if !ok {
				continue
			}
			le, count, _ := strings.Cut(rest, `"} `)
			if c, _ := strconv.ParseFloat(count, 64); c >= 0.99*n {
				p99 = le
				break
			}
		}
		t.Logf("in the daemon, commit (arrival to durable): mean %v, p99 ≤ %ss", time.Duration(metric("custodian_commit_duration_seconds_sum")/n*1e9), p99)
	}
	groups := metric("custodian_group_commit_batch_size_count")
	if groups > 0 {
		t.Logf("%.0f journal fsyncs, %.1f commits each, %v per fsync", groups, metric("custodian_group_commit_batch_size_sum")/groups,
			time.Duration(metric("custodian_journal_fsync_duration_seconds_sum")/groups*1e9))
	}
}

// processCPU is the CPU time (user and system) the process used so far.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// profiledDaemon starts a daemon in this process on a project seeded with
// manifest(slices), for the profiling tests: $<what>_PROFILE clients (the
// test is skipped when unset), $<what>_SLICES slices (default slices).
func profiledDaemon(t *testing.T, what string, slices int, manifest func(int) ([]byte, error)) (d *Daemon, dir string, clients, n int) {
	t.Helper()
	clients, _ = strconv.Atoi(os.Getenv(what + "_PROFILE"))
	if clients == 0 {
		t.Skip(what + "_PROFILE=<clients> unset")
	}
	n = slices
	if s, _ := strconv.Atoi(os.Getenv(what + "_SLICES")); s > 0 {
		n = s
	}
	dir = t.TempDir()
	doc, err := manifest(n)
	if err != nil {
		t.Fatal(err)
	}
	if err := Seed(dir, doc); err != nil {
		t.Fatal(err)
	}
	if d, err = StartDaemon(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, dir, clients, n
}

// measureCPU runs run and logs its rate, latencies and the process's CPU
// time (clients and daemon) per operation.
func measureCPU(t *testing.T, clients, slices int, op string, run func() (Result, error)) {
	t.Helper()
	cpu0 := processCPU()
	r, err := run()
	if err != nil {
		t.Fatal(err)
	}
	cpu := time.Duration(processCPU() - cpu0)
	t.Logf("%d clients, %d slices: %.0f/s p50 %v p99 %v (%d %ss), process CPU %v per %s (clients and daemon)",
		clients, slices, r.PerSecond, r.P50, r.P99, r.Ops, op, cpu/time.Duration(r.Ops), op)
}
