package slice

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestSliceFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want any // the options the subcommand ran with
		code int
	}{
		{[]string{"add", "S-1"}, &AddOptions{ID: "S-1", Type: "FEATURE", Governance: "MANUAL"}, 0},
		{[]string{"add", "S-2", "--name", "login", "--type", "retro_spec", "--governance", "auto"}, &AddOptions{ID: "S-2", Name: "login", Type: "RETRO_SPEC", Governance: "auto"}, 0}, // the rules take any case
		{[]string{"add", "S-3", "--type", "EPIC"}, nil, reason.ExitUsage},
		{[]string{"add"}, nil, reason.ExitUsage},
		{[]string{"show", "S-1"}, &ShowOptions{ID: "S-1"}, 0},
		{[]string{"show"}, nil, reason.ExitUsage},
		{[]string{"list"}, &ListOptions{}, 0},
		{[]string{"list", "--status", "blocked"}, &ListOptions{Status: "BLOCKED"}, 0},
		{[]string{"list", "--status", "LOST"}, nil, reason.ExitUsage},
	} {
		var got any
		record := func(o any) error { got = o; return nil }
		runs := &Runs{
			Add:  func(_ context.Context, o *AddOptions) error { return record(o) },
			Show: func(_ context.Context, o *ShowOptions) error { return record(o) },
			List: func(_ context.Context, o *ListOptions) error { return record(o) },
		}
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, runs), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("slice %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(AddOptions{}, "App"), cmpopts.IgnoreFields(ShowOptions{}, "App"), cmpopts.IgnoreFields(ListOptions{}, "App")); d != "" {
			t.Errorf("slice %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
