package run

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestCountWords(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 retries"}, {1, "1 retry"}, {2, "2 retries"}} {
		if got := nOf(tc.n, "retry", "retries"); got != tc.want {
			t.Errorf("nOf(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestRunFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{nil, &Options{StatusEvery: 10 * time.Second}, 0},
		{[]string{"S-1", "S-2", "--until", "implementation", "--max-parallel", "3", "--status-every", "0s", "--resume"},
			&Options{Slices: []string{"S-1", "S-2"}, Until: "IMPLEMENTATION", MaxParallel: 3, Resume: true}, 0},
		{[]string{"--dry-run"}, &Options{DryRun: true, StatusEvery: 10 * time.Second}, 0},
		{[]string{"--quick", "fix the header"}, &Options{Quick: "fix the header", StatusEvery: 10 * time.Second}, 0},
		{[]string{"S-1", "--quick", "fix"}, nil, reason.ExitUsage},
		{[]string{"--quick", "fix", "--dry-run"}, nil, reason.ExitUsage},
		{[]string{"--until", "LIMBO"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("run %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App"), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("run %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
