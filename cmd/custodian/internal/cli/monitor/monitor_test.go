package monitor

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestMonitorFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{nil, &Options{Every: time.Minute}, 0},
		{[]string{"--once"}, &Options{Once: true, Every: time.Minute}, 0},
		{[]string{"--every", "30s"}, &Options{Every: 30 * time.Second}, 0},
		{[]string{"--once", "--every", "0s"}, &Options{Once: true}, 0}, // --every does not matter with --once
		{[]string{"--every", "0s"}, nil, reason.ExitInternal},
		{[]string{"--every", "often"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("monitor %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("monitor %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
