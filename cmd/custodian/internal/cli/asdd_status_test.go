package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/google/go-cmp/cmp"
)

var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// statusGolden compares got with testdata/status/name (-update rewrites).
func statusGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "status", name)
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, d)
	}
}

// statusAs runs `custodian status` as on a terminal or not.
func statusAs(t *testing.T, e *asddEnv, tty bool) string {
	t.Helper()
	var out, errb bytes.Buffer
	now := e.now
	app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &errb, IsTTY: tty, Now: func() time.Time { return now }}
	if code := Run(app, []string{"-C", e.dir, "status"}); code != 0 {
		t.Fatalf("status: exit %d\n%s%s", code, out.String(), errb.String())
	}
	return out.String()
}

// The status board on a terminal is coloured, and the same text as the
// plain board once the colour is taken out; off a terminal, or with
// NO_COLOR, it is plain. Both are golden.
func TestStatusTTYAndPlain(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("CLICOLOR_FORCE", "")
	t.Setenv("TERM", "xterm-256color")
	e := newASDDEnv(t)
	e.must("init", "--sprint", "2026-W47")
	e.must("slice", "add", "SLICE-001", "--name", "User login")
	e.must("slice", "add", "SLICE-002", "--name", "Payment retries")
	e.must("slice", "add", "SLICE-003", "--name", "Audit trail")
	e.write("specs/1/intent.md", "# Login\n")
	e.write("specs/1/requirements.md", "# Requirements\n")
	e.write("specs/2/intent.md", "# Retries\n")
	e.write("specs/3/intent.md", "# Audit\n")
	e.must("propose", "--agent", "discovery", "--slice", "SLICE-001", "--score", "0.97", "--artifact", "intent=specs/1/intent.md")
	e.must("propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "0.86", "--uncertainty", "latency target open", "--artifact", "requirements=specs/1/requirements.md")
	e.want(3, "propose", "--agent", "discovery", "--slice", "SLICE-002", "--score", "0.60", "--uncertainty", "which errors are retryable", "--artifact", "intent=specs/2/intent.md")
	e.must("propose", "--agent", "discovery", "--slice", "SLICE-003", "--score", "0.87", "--uncertainty", "retention unknown", "--artifact", "intent=specs/3/intent.md")
	e.must("lock", "SLICE-001", "--holder", "validation", "--ttl", "2h")
	e.must("heartbeat", "--agent", "validation", "--status", "ACTIVE", "--slice", "SLICE-001")
	e.must("heartbeat", "--agent", "implementation", "--status", "ACTIVE", "--slice", "SLICE-003")
	e.now = e.now.Add(20 * time.Minute)

	tty := statusAs(t, e, true)
	plain := statusAs(t, e, false)
	if !strings.Contains(tty, "\x1b[") {
		t.Fatalf("no colour on a terminal:\n%s", tty)
	}
	if strings.Contains(plain, "\x1b") {
		t.Fatalf("colour off a terminal:\n%q", plain)
	}
	if d := cmp.Diff(plain, ansiRE.ReplaceAllString(tty, "")); d != "" {
		t.Errorf("the coloured board is not the plain board in colour (-plain +tty without colour):\n%s", d)
	}
	statusGolden(t, "tty.txt", tty)
	statusGolden(t, "plain.txt", plain)

	t.Setenv("NO_COLOR", "1")
	if got := statusAs(t, e, true); got != plain {
		t.Errorf("NO_COLOR on a terminal is not the plain board:\n%q", got)
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("CLICOLOR_FORCE", "1")
	if got := statusAs(t, e, false); got != tty {
		t.Errorf("CLICOLOR_FORCE off a terminal is not the coloured board:\n%q", got)
	}
}
