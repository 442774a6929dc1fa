package hook

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestInstallFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *InstallOptions
		code int
	}{
		{[]string{"install"}, &InstallOptions{Scope: "project"}, 0},
		{[]string{"install", "--force", "--binary", "/opt/custodian"}, &InstallOptions{Force: true, Binary: "/opt/custodian", Scope: "project"}, 0},
		{[]string{"install", "--claude", "--scope", "local", "--mcp", "--dry-run"}, &InstallOptions{Claude: true, Scope: "local", MCP: true, DryRun: true}, 0},
		{[]string{"install", "--mcp"}, nil, reason.ExitUsage}, // the Claude flags go with --claude
		{[]string{"install", "--scope", "user"}, nil, reason.ExitUsage},
		{[]string{"install", "--claude", "--scope", "global"}, nil, reason.ExitUsage},
	} {
		var got *InstallOptions
		err := cmdtest.Execute(NewHookCmd(&cmdutil.App{}, func(_ context.Context, o *InstallOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("hook %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(InstallOptions{}, "App")); d != "" {
			t.Errorf("hook %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}
