package quick

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestQuickFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{[]string{"fix the typo"}, &Options{Description: "fix the typo", Agent: "implementation"}, 0},
		{[]string{"fix the typo", "--id", "QUICK-9", "--agent", "qa", "--artifact", "code=a.go", "--artifact", "test=a_test.go"},
			&Options{Description: "fix the typo", ID: "QUICK-9", Agent: "qa", Artifacts: []string{"code=a.go", "test=a_test.go"}}, 0},
		{[]string{}, nil, reason.ExitUsage},
		{[]string{"one", "two"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("quick %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("quick %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
