package initcmd

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestInitFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{nil, &Options{}, 0},
		{[]string{"--sprint", "S7", "--goal", "login", "--goal", "audit", "--force"}, &Options{Sprint: "S7", Goals: []string{"login", "audit"}, Force: true}, 0},
		{[]string{"here"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("init %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("init %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
