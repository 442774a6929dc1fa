package propose

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

func TestProposeFlags(t *testing.T) {
	zero, three := 0, 3
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{[]string{"--agent", "spec", "--slice", "S-1", "--score", "0.88", "--artifact", "requirements=r.md", "--uncertainty", "latency", "--uncertainty", "scale",
			"--trace", "t.md", "--assumption", "EU only", "--to", "partial", "--base-revision", "7", "--feature-branch", "spec/s-1"},
			&Options{Agent: "spec", Slice: "S-1", Score: 0.88, Artifacts: []string{"requirements=r.md"}, Uncertainty: []string{"latency", "scale"},
				Trace: "t.md", Assumptions: []string{"EU only"}, To: "partial", BaseRevision: 7, FeatureBranch: "spec/s-1"}, 0}, // the rules take any case
		// Retro-spec counts: any one given makes a Retro; the others stay unset.
		{[]string{"--agent", "discovery", "--slice", "S-1", "--score", "1", "--validated", "3", "--missing", "0"},
			&Options{Agent: "discovery", Slice: "S-1", Score: 1, Retro: &asdd.Retro{Validated: &three, Missing: &zero}}, 0},
		{[]string{"--slice", "S-1", "--score", "0.9"}, nil, reason.ExitUsage},
		{[]string{"--agent", "spec", "--score", "0.9"}, nil, reason.ExitUsage},
		{[]string{"--agent", "spec", "--slice", "S-1", "--score", "high"}, nil, reason.ExitUsage},
		{[]string{"--agent", "spec", "--slice", "S-1", "--score", "0.9", "--base-revision", "-1"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("propose %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("propose %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
