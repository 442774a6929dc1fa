package approve

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestApproveFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{[]string{"S-1", "--role", "PO", "--rationale", "reviewed", "--by", "ana", "--root-cause", "flaky"}, &Options{Slice: "S-1", Role: "PO", Rationale: "reviewed", By: "ana", RootCause: "flaky"}, 0},
		{[]string{"--project", "--role", "TL", "--rationale", "rebuilt state checked"}, &Options{Project: true, Role: "TL", Rationale: "rebuilt state checked"}, 0},
		{[]string{"S-1", "--project", "--role", "TL", "--rationale", "x"}, nil, reason.ExitUsage}, // a slice and --project
		{[]string{"--role", "TL", "--rationale", "x"}, nil, reason.ExitUsage},                     // neither
		{[]string{"S-1", "--rationale", "x"}, nil, reason.ExitUsage},
		{[]string{"S-1", "--role", "TL"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("approve %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("approve %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
