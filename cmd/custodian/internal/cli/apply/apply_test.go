package apply

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

func TestApplyArgs(t *testing.T) {
	seven := uint64(7)
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{[]string{"--key", ".agents/tmp/state.json", "--jq", ".a = 1"}, &Options{Key: ".agents/tmp/state.json", Program: ".a = 1"}, 0},
		// jq's two-value --arg and --argjson; --flag=value; -q.
		{[]string{"--key=.agents/tmp/state.json", "--jq", ".a = $x", "--arg", "x", "v=1", "--argjson", "n", "[1]", "--touch", "updatedAt", "--if-revision", "7", "--actor", "ana", "-q"},
			&Options{Key: ".agents/tmp/state.json", Program: ".a = $x", Args: []wire.JQArg{appl.StringArg("x", "v=1"), {Name: "n", Value: json.RawMessage("[1]")}},
				Touch: "updatedAt", IfRevision: &seven, Actor: "ana", Quiet: true}, 0},
		{[]string{"--key", "k.json"}, nil, reason.ExitUsage},
		{[]string{"--key", "k.json", "--jq", ".", "--arg", "x"}, nil, reason.ExitUsage},
		{[]string{"--key", "k.json", "--jq", ".", "--argjson", "n", "{"}, nil, reason.ExitUsage},
		{[]string{"--key", "k.json", "--jq", ".", "--if-revision", "latest"}, nil, reason.ExitUsage},
		{[]string{"--key", "k.json", "--jq", ".", "--touch", "a.b"}, nil, reason.ExitUsage},
		{[]string{"--key", "../k.json", "--jq", "."}, nil, reason.ExitUsage},
		{[]string{"--key", "k.json", "--jq", ".", "--frobnicate"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("apply %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("apply %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

// Invalid UTF-8 in the program or an --arg is INVALID_INPUT before
// anything is sent (JSON would carry it to the daemon as U+FFFD).
func TestApplyRefusesInvalidUTF8(t *testing.T) {
	for _, args := range [][]string{
		{"--key", ".agents/tmp/state.json", "--jq", ".a = \"\xff\""},
		{"--key", ".agents/tmp/state.json", "--jq", ".a = $x", "--arg", "x", "\xfe"},
		{"--key", ".agents/tmp/state.json", "--jq", ".a = $x", "--argjson", "x", `"\ud800"`},
	} {
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(context.Context, *Options) error { return nil }), args...)
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("apply %q: %v, want INVALID_INPUT", args, err)
		}
	}
}
