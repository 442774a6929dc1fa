package compat

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestCompatFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{[]string{"install", "principled", "--plugin-dir", "p"}, &Options{Dropin: "principled", PluginDir: "p"}, 0},
		{[]string{"uninstall", "state-manager", "--plugin-dir", "q"}, &Options{Dropin: "state-manager", PluginDir: "q", Uninstall: true}, 0},
		{[]string{"install", "principled"}, nil, reason.ExitUsage},
		{[]string{"install", "unheard-of", "--plugin-dir", "p"}, nil, reason.ExitUsage},
		{[]string{"install", "--plugin-dir", "p"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("compat %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("compat %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
