package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

func TestCheckBind(t *testing.T) {
	tests := []struct {
		addr, token string
		usage       bool
	}{
		{"127.0.0.1:7420", "", false},
		{"[::1]:7420", "", false},
		{"localhost:7420", "", false},
		{"127.0.0.2:0", "", false},
		{"0.0.0.0:7420", "", true},
		{"0.0.0.0:7420", "t0ken", false},
		{":7420", "", true},
		{"192.168.1.5:7420", "", true},
		{"example.com:7420", "", true},
		{"no-port", "", true},
	}
	for _, tc := range tests {
		err := checkBind(tc.addr, tc.token)
		if got := err != nil && reason.ExitCode(err) == reason.ExitUsage; got != tc.usage {
			t.Errorf("checkBind(%q, %q) = %v, want usage error %v", tc.addr, tc.token, err, tc.usage)
		}
	}
}

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
