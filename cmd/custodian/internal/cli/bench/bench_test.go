package bench

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

func TestStoreFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *StoreOptions
		code int
	}{
		{nil, &StoreOptions{Duration: time.Second, Writers: []int{1, 8, 64}, Sizes: []int{10 << 10, 1 << 20}}, 0},
		{[]string{"--duration", "200ms", "--writers", "2, 4", "--sizes", "512,64KB"}, &StoreOptions{Duration: 200 * time.Millisecond, Writers: []int{2, 4}, Sizes: []int{512, 64 << 10}}, 0},
		{[]string{"--writers", "0"}, nil, reason.ExitUsage},
		{[]string{"--sizes", "big"}, nil, reason.ExitUsage},
	} {
		var got *StoreOptions
		err := cmdtest.Execute(NewStoreCmd(&cmdutil.App{}, func(_ context.Context, o *StoreOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("bench store %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(StoreOptions{}, "App")); d != "" {
			t.Errorf("bench store %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
