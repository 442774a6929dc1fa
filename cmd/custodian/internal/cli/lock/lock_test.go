package lock

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

func TestLockFlags(t *testing.T) {
	app := &cmdutil.App{}
	for _, tc := range []struct {
		args []string
		want *LockOptions
		code int
	}{
		{[]string{"S-1", "--holder", "spec", "--ttl", "10m", "--reason", "drafting"}, &LockOptions{App: app, Slice: "S-1", Holder: "spec", TTL: 10 * time.Minute, Reason: "drafting"}, 0},
		{[]string{"S-1", "--holder", "spec"}, &LockOptions{App: app, Slice: "S-1", Holder: "spec"}, 0},
		{[]string{"S-1"}, nil, reason.ExitUsage},                                      // no holder
		{[]string{"--holder", "spec"}, nil, reason.ExitUsage},                         // no slice
		{[]string{"S-1", "--holder", "spec", "--ttl", "soon"}, nil, reason.ExitUsage}, // not a duration
	} {
		var got *LockOptions
		err := cmdtest.Execute(NewLockCmd(app, func(_ context.Context, o *LockOptions) error {
			if o.App != app {
				t.Errorf("lock %q: the options do not carry the App", tc.args)
			}
			got = o
			return nil
		}), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("lock %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(LockOptions{}, "App")); d != "" {
			t.Errorf("lock %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestUnlockFlags(t *testing.T) {
	app := &cmdutil.App{}
	for _, tc := range []struct {
		args []string
		want *UnlockOptions
		code int
	}{
		{[]string{"S-1", "--holder", "spec"}, &UnlockOptions{App: app, Slice: "S-1", Holder: "spec"}, 0},
		{[]string{"S-1", "--force", "--role", "tech-lead"}, &UnlockOptions{App: app, Slice: "S-1", Force: true, Role: "tech-lead"}, 0},
		{[]string{"S-1"}, nil, reason.ExitUsage}, // neither the holder nor --force
	} {
		var got *UnlockOptions
		err := cmdtest.Execute(NewUnlockCmd(app, func(_ context.Context, o *UnlockOptions) error {
			if o.App != app {
				t.Errorf("unlock %q: the options do not carry the App", tc.args)
			}
			got = o
			return nil
		}), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("unlock %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(UnlockOptions{}, "App")); d != "" {
			t.Errorf("unlock %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
