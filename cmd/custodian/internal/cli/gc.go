package cli

import (
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// shortLivedGOGC is the collector's target for a command that is one short
// process. Most commands allocate a few megabytes and exit; with the
// runtime's default (GOGC=100: a first cycle at a 4 MB heap) such a
// process spends 10–20% of its CPU collecting garbage that its exit frees
// anyway. At 400 the first cycle comes at 16 MB, and later ones at five
// times the live heap: memory stays bounded by what the command keeps.
const shortLivedGOGC = 400

// longRunning are the commands that run until stopped or measure the
// runtime (the daemon, the runner, the MCP server, the monitor loop, watch,
// the benchmarks, the demo): they keep the runtime's default collector.
var longRunning = []string{
	"custodian serve", "custodian run", "custodian mcp", "custodian monitor", "custodian watch",
	"custodian bench", "custodian demo", "custodian demo-agent",
}

// tuneGC sets the collector for the command args name, run as a whole
// process: shortLivedGOGC unless the command is long-running or GOGC is set
// in the environment (which wins). It reports the percentage it set, 0 if
// it left the default.
func tuneGC(root *cobra.Command, args []string) int {
	if _, set := os.LookupEnv("GOGC"); set {
		return 0
	}
	c, _, err := root.Find(args)
	if err != nil || c == root {
		return 0
	}
	path := c.CommandPath()
	for _, p := range longRunning {
		if path == p || strings.HasPrefix(path, p+" ") {
			return 0
		}
	}
	debug.SetGCPercent(shortLivedGOGC)
	return shortLivedGOGC
}
