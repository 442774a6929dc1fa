package watch

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestWatchFlags(t *testing.T) {
	zero, five := uint64(0), uint64(5)
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{nil, &Options{Key: asdd.Key}, 0}, // from now on
		{[]string{"--from", "0"}, &Options{Key: asdd.Key, From: &zero}, 0},
		{[]string{"--key", ".impl/manifest.json", "--from", "5", "--count", "2"}, &Options{Key: ".impl/manifest.json", From: &five, Count: 2}, 0},
		{[]string{"--count", "-1"}, nil, reason.ExitUsage},
		{[]string{"doc"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("watch %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("watch %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
