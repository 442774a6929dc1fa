package halt

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestHaltFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{[]string{"S-1", "--agent", "validation", "--mode", "hallucinated_spec_section", "--reason", "undefined term", "--flag", "§2", "--flag", "§3", "--artifact", "spec=spec.md"},
			&Options{Slice: "S-1", Agent: "validation", Mode: "HALLUCINATED_SPEC_SECTION", Reason: "undefined term", Flagged: []string{"§2", "§3"}, Artifacts: []string{"spec=spec.md"}}, 0},
		{[]string{"S-1", "--mode", "HALLUCINATED_SPEC_SECTION", "--reason", "x"}, nil, reason.ExitUsage}, // no agent
		{[]string{"S-1", "--agent", "a", "--reason", "x"}, nil, reason.ExitUsage},                        // no mode
		{[]string{"S-1", "--agent", "a", "--mode", "HALLUCINATED_SPEC_SECTION"}, nil, reason.ExitUsage},  // no reason
		{[]string{"S-1", "--agent", "a", "--mode", "TIRED", "--reason", "x"}, nil, reason.ExitUsage},     // not a mode
		{[]string{"--agent", "a", "--mode", "HALLUCINATED_SPEC_SECTION", "--reason", "x"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("halt %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("halt %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
