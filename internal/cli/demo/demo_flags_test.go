package demo

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestDemoFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{nil, &Options{Addr: "127.0.0.1:7420"}, 0},
		{[]string{"here", "--serve", "--addr", ":0"}, &Options{Dir: "here", Serve: true, Addr: ":0"}, 0},
		{[]string{"a", "b"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewDemoCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("demo %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("demo %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
