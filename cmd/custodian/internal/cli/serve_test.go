package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

func serveGolden(t *testing.T, name, got string) {
	t.Helper()
	checkGolden(t, filepath.Join("testdata", "serve", name), got)
}

// custodian watch prints the commits after --from, in order, as text or
// JSON lines (here on the file store, without a daemon).
func TestWatchCommand(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init", "--sprint", "S1")
	e.must("slice", "add", "S-1", "--name", "Login")
	e.must("heartbeat", "--agent", "spec", "--status", "ACTIVE", "--slice", "S-1")
	e.want(0, "watch", "--from", "1", "--count", "2")
	e.want(0, "--json", "watch", "--from", "2", "--count", "1")
	e.want(0, "watch", "--key", ".asdd/state/manifest.json", "--from", "0", "--count", "1")
	e.want(2, "watch", "--count", "-1")
	e.want(2, "watch", "--key", "../x.json", "--count", "1")
	out := e.log.String()
	if !strings.Contains(out, "\n2\t") || !strings.Contains(out, "\n3\t") {
		t.Fatalf("revisions 2 and 3 not printed:\n%s", out)
	}
	serveGolden(t, "watch.txt", out)
}
