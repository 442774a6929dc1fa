package integrity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestCheckFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *CheckOptions
		code int
	}{
		{nil, &CheckOptions{Halt: true}, 0},
		{[]string{"--full"}, &CheckOptions{Full: true, Halt: true}, 0},
		{[]string{"--no-halt"}, &CheckOptions{}, 0},
		{[]string{"--read-only"}, &CheckOptions{ReadOnly: true}, 0}, // the pre-commit hook's: halts nothing
		{[]string{"SLICE-1"}, nil, reason.ExitUsage},
	} {
		var got *CheckOptions
		err := cmdtest.Execute(NewCheckCmd(&cmdutil.App{}, func(_ context.Context, o *CheckOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("check %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(CheckOptions{}, "App")); d != "" {
			t.Errorf("check %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
