package migrate

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestMigrateFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{[]string{"--to", "etcd://h:2379/p"}, &Options{To: "etcd://h:2379/p"}, 0},
		{[]string{"--to", "file", "--from", "etcd://h:2379/p", "--key", "a.json", "--key", "b.json"}, &Options{To: "file", From: "etcd://h:2379/p", Keys: []string{"a.json", "b.json"}}, 0},
		{nil, nil, reason.ExitUsage}, // --to is required
		{[]string{"--to", "file", "extra"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("migrate %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("migrate %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
