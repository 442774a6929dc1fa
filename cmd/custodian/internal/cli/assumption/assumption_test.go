package assumption

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestCorrectFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *CorrectOptions
		code int
	}{
		{[]string{"correct", "S-1", "2", "--role", "PO", "--text", "EU only"}, &CorrectOptions{Slice: "S-1", Index: 2, Role: "PO", Text: "EU only"}, 0},
		{[]string{"correct", "S-1", "two", "--role", "PO"}, nil, reason.ExitUsage},
		{[]string{"correct", "S-1", "2"}, nil, reason.ExitUsage},
		{[]string{"correct", "S-1"}, nil, reason.ExitUsage},
	} {
		var got *CorrectOptions
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *CorrectOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("assumption %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(CorrectOptions{}, "App")); d != "" {
			t.Errorf("assumption %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
