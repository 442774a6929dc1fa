package heartbeat

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestHeartbeatFlags(t *testing.T) {
	zero, two := 0, 2
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		// A count given as 0 is sent as 0; one not given is not sent.
		{[]string{"--agent", "spec"}, &Options{Agent: "spec", Status: "ACTIVE"}, 0},
		{[]string{"--agent", "spec", "--status", "paused", "--slice", "S-1", "--wave", "2", "--done", "0"}, &Options{Agent: "spec", Status: "PAUSED", Slice: "S-1", Wave: &two, Done: &zero}, 0},
		{[]string{}, nil, reason.ExitUsage},
		{[]string{"--agent", "spec", "--status", "asleep"}, nil, reason.ExitUsage},
		{[]string{"--agent", "spec", "--wave", "two"}, nil, reason.ExitUsage},
		{[]string{"--agent", "spec", "S-1"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("heartbeat %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("heartbeat %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
