package integrity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestCheckFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *CheckOptions
		code int
	}{
		{nil, &CheckOptions{}, 0}, // check only reports
		{[]string{"--full"}, &CheckOptions{Full: true}, 0},
		{[]string{"--halt"}, &CheckOptions{Halt: true}, 0},
		{[]string{"--full", "--halt"}, &CheckOptions{Full: true, Halt: true}, 0},
		{[]string{"--no-halt"}, &CheckOptions{}, 0}, // deprecated, a no-op: old hooks still run
		{[]string{"--full", "--no-halt"}, &CheckOptions{Full: true}, 0},
		{[]string{"--read-only"}, &CheckOptions{ReadOnly: true}, 0}, // the pre-commit hook's: halts nothing
		{[]string{"--halt", "--read-only"}, nil, reason.ExitUsage},
		{[]string{"SLICE-1"}, nil, reason.ExitUsage},
	} {
		var got *CheckOptions
		err := cmdtest.Execute(NewCheckCmd(&cmdutil.App{}, func(_ context.Context, o *CheckOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("check %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(CheckOptions{}, "App")); d != "" {
			t.Errorf("check %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestVerifyFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *VerifyOptions
	}{
		{nil, &VerifyOptions{}},
		{[]string{"a.json", "b.json"}, &VerifyOptions{Keys: []string{"a.json", "b.json"}}},
	} {
		var got *VerifyOptions
		err := cmdtest.Execute(NewVerifyCmd(&cmdutil.App{}, func(_ context.Context, o *VerifyOptions) error { got = o; return nil }), tc.args...)
		if err != nil {
			t.Errorf("verify %q: %v", tc.args, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(VerifyOptions{}, "App"), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("verify %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestRepairFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *RepairOptions
		code int
	}{
		{[]string{"a.json", "--keep", "snapshot", "--reason", "restored", "--actor", "ana"}, &RepairOptions{Key: "a.json", Keep: "snapshot", Reason: "restored", Actor: "ana"}, 0},
		{[]string{"a.json", "--keep", "journal", "--reason", " "}, nil, reason.ExitUsage},
		{[]string{"a.json", "--reason", "x"}, nil, reason.ExitUsage},
		{[]string{"--keep", "journal", "--reason", "x"}, nil, reason.ExitUsage},
	} {
		var got *RepairOptions
		err := cmdtest.Execute(NewRepairCmd(&cmdutil.App{}, func(_ context.Context, o *RepairOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("repair %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(RepairOptions{}, "App")); d != "" {
			t.Errorf("repair %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestRebuildFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *RebuildOptions
		code int
	}{
		{nil, &RebuildOptions{}, 0},
		{[]string{"--force"}, &RebuildOptions{Force: true}, 0},
		{[]string{"manifest.json"}, nil, reason.ExitUsage},
	} {
		var got *RebuildOptions
		err := cmdtest.Execute(NewRebuildCmd(&cmdutil.App{}, func(_ context.Context, o *RebuildOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("rebuild %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(RebuildOptions{}, "App")); d != "" {
			t.Errorf("rebuild %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestReviewFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *ReviewOptions
		code int
	}{
		{[]string{"S-1", "--role", "TL", "--by", "ana", "--rationale", "checked"}, &ReviewOptions{Slice: "S-1", Role: "TL", By: "ana", Rationale: "checked"}, 0},
		{[]string{"--project", "--role", "PO"}, &ReviewOptions{Project: true, Role: "PO"}, 0},
		{[]string{"S-1", "--by", "ana"}, nil, reason.ExitUsage}, // --by is the person, not the role
		{[]string{"S-1"}, nil, reason.ExitUsage},
		{[]string{"S-1", "--project", "--role", "TL"}, nil, reason.ExitUsage},
		{[]string{"--role", "TL"}, nil, reason.ExitUsage},
	} {
		var got *ReviewOptions
		err := cmdtest.Execute(NewReviewCmd(&cmdutil.App{}, func(_ context.Context, o *ReviewOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("review %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(ReviewOptions{}, "App")); d != "" {
			t.Errorf("review %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
