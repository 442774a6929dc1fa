package tasks

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestTasksFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want any // the options the subcommand ran with
		code int
	}{
		{[]string{"add", "S-1", "T-1"}, &AddOptions{Slice: "S-1", Task: "T-1", Wave: 1}, 0},
		{[]string{"add", "S-1", "T-2", "--wave", "2", "--depends-on", "T-1", "--depends-on", "T-0", "--title", "wire it", "--by", "planning", "--req", "REQ-004"},
			&AddOptions{Slice: "S-1", Task: "T-2", Wave: 2, DependsOn: []string{"T-1", "T-0"}, Title: "wire it", By: "planning", Requirement: "REQ-004"}, 0},
		{[]string{"add", "S-1"}, nil, reason.ExitUsage},
		{[]string{"add", "S-1", "T-1", "--wave", "first"}, nil, reason.ExitUsage},
		{[]string{"ready", "S-1"}, &ReadyOptions{Slice: "S-1"}, 0},
		{[]string{"ready"}, nil, reason.ExitUsage},
		{[]string{"done", "S-1", "T-1"}, &DoneOptions{Slice: "S-1", Task: "T-1", Agent: "implementation"}, 0},
		{[]string{"done", "S-1", "T-1", "--agent", "implementation-3"}, &DoneOptions{Slice: "S-1", Task: "T-1", Agent: "implementation-3"}, 0},
		{[]string{"claim", "S-1", "T-1", "--agent", "implementation-3"}, &DoneOptions{Slice: "S-1", Task: "T-1", Agent: "implementation-3"}, 0},
		{[]string{"claim", "S-1", "T-1"}, nil, reason.ExitUsage}, // a claim names its agent
	} {
		var got any
		record := func(o any) error { got = o; return nil }
		runs := &Runs{
			Add:   func(_ context.Context, o *AddOptions) error { return record(o) },
			Ready: func(_ context.Context, o *ReadyOptions) error { return record(o) },
			Done:  func(_ context.Context, o *DoneOptions) error { return record(o) },
			Claim: func(_ context.Context, o *DoneOptions) error { return record(o) },
		}
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, runs), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("tasks %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(AddOptions{}, "App"), cmpopts.IgnoreFields(ReadyOptions{}, "App"), cmpopts.IgnoreFields(DoneOptions{}, "App")); d != "" {
			t.Errorf("tasks %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
