package state

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// TestStateRequests: each changing subcommand's command line becomes the
// request it sends; bad input is refused before anything is sent.
func TestStateRequests(t *testing.T) {
	t.Setenv("CUSTODIAN_ACTOR", "tester")
	out := filepath.Join(t.TempDir(), "plan.md")
	if err := os.WriteFile(out, []byte("# plan\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		stdin string
		want  *wire.StateRequest
		code  int
	}{
		{[]string{"init", "wf-1"}, "", &wire.StateRequest{Op: "init", Task: "wf-1", Actor: "tester"}, 0},
		{[]string{"init", "wf-1", "--force", "--actor", "ana"}, "", &wire.StateRequest{Op: "init", Task: "wf-1", Force: true, Actor: "ana"}, 0},
		{[]string{"update", `{"currentStage":"PLAN"}`}, "", &wire.StateRequest{Op: "update", Patch: json.RawMessage(`{"currentStage":"PLAN"}`), Actor: "tester"}, 0},
		{[]string{"update"}, `{"a":1}`, &wire.StateRequest{Op: "update", Patch: json.RawMessage(`{"a":1}`), Actor: "tester"}, 0},
		{[]string{"update", "[1]"}, "", nil, reason.ExitUsage},
		{[]string{"update"}, "  ", nil, reason.ExitUsage},
		{[]string{"record-output", "1.1", out}, "", &wire.StateRequest{Op: "record-output", Phase: "1.1", Ext: "md", Content: []byte("# plan\n"), Actor: "tester"}, 0},
		{[]string{"record-output", "2.1", "--ext", "json"}, "{]", nil, reason.ExitUsage},
		{[]string{"record-failure", "--phase", "2.1", "--error", "timeout", "--context", `{"failedTask":"t3"}`},
			"", &wire.StateRequest{Op: "record-failure", Phase: "2.1", Error: "timeout", Context: json.RawMessage(`{"failedTask":"t3"}`), Actor: "tester"}, 0},
		{[]string{"record-failure", "--phase", "2.1", "--context", "[]"}, "", nil, reason.ExitUsage},
		{[]string{"compact", "--summary", "kept the plan"}, "", &wire.StateRequest{Op: "compact", Summary: "kept the plan", Actor: "tester"}, 0},
	} {
		var got *wire.StateRequest
		cmd := NewCmd(&cmdutil.App{In: strings.NewReader(tc.stdin)}, &Runs{Send: func(_ context.Context, r *wire.StateRequest) error { got = r; return nil }})
		err := cmdtest.Execute(cmd, tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("state %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("state %q: request differs (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestStateReadOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *ReadOptions
		code int
	}{
		{[]string{"read"}, &ReadOptions{}, 0},
		{[]string{"read", "stages.PLAN.status"}, &ReadOptions{Field: "stages.PLAN.status"}, 0},
		{[]string{"read", "a", "b"}, nil, reason.ExitUsage},
	} {
		var got *ReadOptions
		cmd := NewCmd(&cmdutil.App{}, &Runs{Read: func(_ context.Context, o *ReadOptions) error { o.App = nil; got = o; return nil }})
		err := cmdtest.Execute(cmd, tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("state %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("state %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
