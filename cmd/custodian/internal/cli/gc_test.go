package cli

import (
	"io"
	"os"
	"runtime/debug"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// A short command run as a process collects garbage less often; the
// daemon, the runner, the MCP server, the loops and the benchmarks keep
// the runtime's default, and so does any command when GOGC is set.
func TestTuneGC(t *testing.T) {
	if _, set := os.LookupEnv("GOGC"); set {
		t.Skip("GOGC is set in this environment")
	}
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"impl", "--update-status", "--task-id", "1.1", "--status", "pending"}, shortLivedGOGC},
		{[]string{"-C", "/tmp/x", "impl", "--update-status"}, shortLivedGOGC},
		{[]string{"heartbeat", "--agent", "spec", "--status", "ACTIVE"}, shortLivedGOGC},
		{[]string{"--json", "status"}, shortLivedGOGC},
		{[]string{"serve", "--addr", "127.0.0.1:0"}, 0},
		{[]string{"run", "SLICE-001"}, 0},
		{[]string{"mcp"}, 0},
		{[]string{"monitor", "--once"}, 0},
		{[]string{"watch"}, 0},
		{[]string{"bench", "daemon", "--clients", "1"}, 0},
		{[]string{"demo"}, 0},
		{[]string{}, 0},
		{[]string{"no-such-command"}, 0},
	} {
		prev := debug.SetGCPercent(100)
		got := tuneGC(NewRoot(&cmdutil.App{Out: io.Discard, Err: io.Discard, Openers: StoreOpeners()}), tc.args)
		now := debug.SetGCPercent(prev)
		if got != tc.want || (tc.want != 0 && now != tc.want) || (tc.want == 0 && now != 100) {
			t.Errorf("%q: tuneGC = %d, GOGC now %d; want %d", tc.args, got, now, tc.want)
		}
	}
	t.Setenv("GOGC", "100")
	prev := debug.SetGCPercent(100)
	got := tuneGC(NewRoot(&cmdutil.App{Out: io.Discard, Err: io.Discard, Openers: StoreOpeners()}), []string{"impl"})
	debug.SetGCPercent(prev)
	if got != 0 {
		t.Errorf("with GOGC set: tuneGC = %d, want 0", got)
	}
}
