package bench

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"
)

// TestProfileMCP runs /mcp (and the API) under load for a CPU profile:
//
//	MCP_PROFILE=64 go test ./bench -run TestProfileMCP -cpuprofile cpu.out
//
// The clients run with the pprof label side=client, the daemon without.
func TestProfileMCP(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("MCP_PROFILE"))
	if n == 0 {
		t.Skip("MCP_PROFILE=<clients> unset")
	}
	// as custodian serve and bench mcp run (serve.go's daemonRuntime)
	debug.SetMemoryLimit(160 << 20)
	defer debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	dir := t.TempDir()
	doc, err := Manifest(100, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Seed(dir, doc); err != nil {
		t.Fatal(err)
	}
	d, err := StartMCPDaemon(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	what := os.Getenv("MCP_PROFILE_WHAT")
	pprof.Do(context.Background(), pprof.Labels("side", "client"), func(context.Context) {
		var l Load
		var err error
		switch what {
		case "lean":
			l, err = MCPHTTPLeanLoad(d.Socket(), n)
		case "api":
			l, err = APILoad(d.Daemon, n)
		default:
			l, err = MCPHTTPLoad(d.Socket(), n)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		rs, _, err := Interleave([]Load{l}, 5*time.Second, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		t.Logf("%s: %.0f/s p50 %v p99 %v", what, r.PerSecond, r.P50, r.P99)
	})
}
