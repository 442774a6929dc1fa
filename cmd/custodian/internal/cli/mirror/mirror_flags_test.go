package mirror

import (
	"context"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestMirrorFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		once bool
		code int
	}{
		{nil, false, 0},
		{[]string{"--once"}, true, 0},
		{[]string{"etcd://h:2379/p"}, false, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("mirror %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if tc.code == 0 && got.Once != tc.once {
			t.Errorf("mirror %q: once %v, want %v", tc.args, got.Once, tc.once)
		}
	}
}
