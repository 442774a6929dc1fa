package doc

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestDocFlags(t *testing.T) {
	var got any
	record := func(o any) error { got = o; return nil }
	app := &cmdutil.App{}
	cmds := map[string]func() *cobra.Command{
		"get": func() *cobra.Command {
			return NewGetCmd(app, func(_ context.Context, o *GetOptions) error { return record(o) })
		},
		"history": func() *cobra.Command {
			return NewHistoryCmd(app, func(_ context.Context, o *HistoryOptions) error { return record(o) })
		},
		"diff": func() *cobra.Command {
			return NewDiffCmd(app, func(_ context.Context, o *DiffOptions) error { return record(o) })
		},
		"rollback": func() *cobra.Command {
			return NewRollbackCmd(app, func(_ context.Context, o *RollbackOptions) error { return record(o) })
		},
	}
	for _, tc := range []struct {
		cmd  string
		args []string
		want any
		code int
	}{
		{"get", []string{"k.json"}, &GetOptions{Key: "k.json"}, 0},
		{"get", []string{"k.json", "--at", "3"}, &GetOptions{Key: "k.json", At: "3"}, 0},
		{"get", nil, nil, reason.ExitUsage},
		{"history", []string{"k.json", "--from", "2", "--to", "5"}, &HistoryOptions{Key: "k.json", From: 2, To: 5}, 0},
		{"history", []string{"k.json", "--from", "-1"}, nil, reason.ExitUsage},
		{"diff", []string{"k.json", "1", "4"}, &DiffOptions{Key: "k.json", From: 1, To: 4}, 0},
		{"diff", []string{"k.json", "1", "latest"}, nil, reason.ExitUsage},
		{"diff", []string{"k.json", "1"}, nil, reason.ExitUsage},
		{"rollback", []string{"k.json", "--to", "2", "--reason", "bad edit", "--actor", "ana"}, &RollbackOptions{Key: "k.json", To: 2, Reason: "bad edit", Actor: "ana"}, 0},
		{"rollback", []string{"k.json", "--to", "2", "--reason", "  "}, nil, reason.ExitUsage},
		{"rollback", []string{"k.json", "--reason", "x"}, nil, reason.ExitUsage},
		{"rollback", []string{"k.json", "--to", "two", "--reason", "x"}, nil, reason.ExitUsage},
	} {
		got = nil
		err := cmdtest.Execute(cmds[tc.cmd](), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("%s %q: exit %d (%v), want %d", tc.cmd, tc.args, code, err, tc.code)
			continue
		}
		ignore := cmp.Options{cmpopts.IgnoreFields(GetOptions{}, "App"), cmpopts.IgnoreFields(HistoryOptions{}, "App"),
			cmpopts.IgnoreFields(DiffOptions{}, "App"), cmpopts.IgnoreFields(RollbackOptions{}, "App")}
		if d := cmp.Diff(tc.want, got, ignore); d != "" {
			t.Errorf("%s %q: options differ (-want +got):\n%s", tc.cmd, tc.args, d)
		}
	}
}

func TestDebugWriteFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *DebugWriteOptions
		code int
	}{
		{[]string{"write", "state/doc.json"}, &DebugWriteOptions{Key: "state/doc.json", Writer: "w", Count: 1}, 0},
		{[]string{"write", "state/doc.json", "--writer", "a", "--count", "50", "--cycle", "5"}, &DebugWriteOptions{Key: "state/doc.json", Writer: "a", Count: 50, Cycle: 5}, 0},
		{[]string{"write"}, nil, reason.ExitUsage},
		{[]string{"write", "k.json", "--count", "-1"}, nil, reason.ExitUsage},
		{[]string{"write", "k.json", "--count", "many"}, nil, reason.ExitUsage},
	} {
		var got *DebugWriteOptions
		err := cmdtest.Execute(NewDebugCmd(&cmdutil.App{}, func(_ context.Context, o *DebugWriteOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("debug %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(DebugWriteOptions{}, "App")); d != "" {
			t.Errorf("debug %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
