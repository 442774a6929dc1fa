package demo

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestDemoFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *Options
		code int
	}{
		{nil, &Options{Addr: "127.0.0.1:7420"}, 0},
		{[]string{"here", "--serve", "--addr", ":0"}, &Options{Dir: "here", Serve: true, Addr: ":0"}, 0},
		{[]string{"a", "b"}, nil, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewDemoCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("demo %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(Options{}, "App")); d != "" {
			t.Errorf("demo %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

// The demo's agent takes its command line from the environment `custodian
// run` gives it.
func TestDemoAgentOptions(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want *AgentOptions
		code int
	}{
		{map[string]string{"CUSTODIAN_SLICE": "SLICE-001", "CUSTODIAN_AGENT": "spec", "CUSTODIAN_TASK": ""}, &AgentOptions{Slice: "SLICE-001", Agent: "spec"}, 0},
		{map[string]string{"CUSTODIAN_SLICE": "SLICE-001", "CUSTODIAN_AGENT": "impl", "CUSTODIAN_TASK": "T1"}, &AgentOptions{Slice: "SLICE-001", Agent: "impl", Task: "T1"}, 0},
		{map[string]string{"CUSTODIAN_SLICE": "", "CUSTODIAN_AGENT": "spec", "CUSTODIAN_TASK": ""}, nil, reason.ExitUsage},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		var got *AgentOptions
		err := cmdtest.Execute(NewDemoAgentCmd(&cmdutil.App{}, func(_ context.Context, o *AgentOptions) error { got = o; return nil }))
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("demo-agent %v: exit %d (%v), want %d", tc.env, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(AgentOptions{}, "App")); d != "" {
			t.Errorf("demo-agent %v: options differ (-want +got):\n%s", tc.env, d)
		}
	}
}
