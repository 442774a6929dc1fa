package resolve

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestResolveFlags(t *testing.T) {
	base := []string{"S-1", "--role", "TL", "--rationale", "ok"}
	with := func(more ...string) []string { return append(append([]string{}, base...), more...) }
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{base, &Options{Slice: "S-1", Role: "TL", Rationale: "ok"}, 0}, // the rules choose rerun
		{with("--action", "resume", "--by", "ana", "--root-cause", "spec gap"), &Options{Slice: "S-1", Role: "TL", Rationale: "ok", Action: "resume", By: "ana", RootCause: "spec gap"}, 0},
		// With no --action the rules take --to as return and --favour as
		// resume (asdd.Resolve, whichever door); an explicit action stays.
		{with("--to", "design"), &Options{Slice: "S-1", Role: "TL", Rationale: "ok", To: "DESIGN"}, 0},
		{with("--favour", "design"), &Options{Slice: "S-1", Role: "TL", Rationale: "ok", Favour: "design"}, 0},
		{with("--favour", "design", "--action", "rerun"), &Options{Slice: "S-1", Role: "TL", Rationale: "ok", Action: "rerun", Favour: "design"}, 0},
		{[]string{"S-1", "--rationale", "ok"}, nil, reason.ExitUsage},
		{[]string{"S-1", "--role", "TL"}, nil, reason.ExitUsage},
		{with("--action", "retry"), nil, reason.ExitUsage},
		{with("--to", "LIMBO"), nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("resolve %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("resolve %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
