package cli

import (
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
)

// Issue 18 item 9: invalid UTF-8 in an argument, a file or stdin read as
// input is INVALID_INPUT (exit 2) and commits nothing; it was committed
// with U+FFFD in place of what was sent.
func TestInvalidUTF8InputRefused(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init", "--sprint", "S1")
	out := e.want(2, "slice", "add", "SLICE-001", "--name", "bad \xff name")
	if !strings.Contains(out, "INVALID_INPUT") || !strings.Contains(out, "UTF-8") {
		t.Fatalf("output: %s", out)
	}
	if e.manifest().Slice("SLICE-001") != nil {
		t.Fatal("the slice was added")
	}
	e.must("state", "init", "build login")
	e.want(2, "state", "update", `{"note":"\ud800"}`)
	stdout, stderr, code := runCLI(e.dir, "{\"note\":\"\xfe\"}", e.now, "state", "update")
	if code != 2 || !strings.Contains(stdout+stderr, "UTF-8") {
		t.Fatalf("stdin: exit %d %s%s", code, stdout, stderr)
	}
	if s := e.read(".agents/tmp/state.json"); strings.Contains(s, "note") {
		t.Fatalf("committed: %s", s)
	}
	_ = asdd.Key
}
