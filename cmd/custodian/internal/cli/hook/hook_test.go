package hook

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
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
		runs := &Runs{
			Install:   func(_ context.Context, o *InstallOptions) error { got = o; return nil },
			Uninstall: func(context.Context, *UninstallOptions) error { t.Fatal("uninstall ran"); return nil },
		}
		err := cmdtest.Execute(NewHookCmd(&cmdutil.App{}, runs), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("hook %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(InstallOptions{}, "App")); d != "" {
			t.Errorf("hook %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestUninstallFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *UninstallOptions
		code int
	}{
		{[]string{"uninstall", "--claude"}, &UninstallOptions{Scope: "project"}, 0},
		{[]string{"uninstall", "--claude", "--scope", "user", "--mcp"}, &UninstallOptions{Scope: "user", MCP: true}, 0},
		{[]string{"uninstall"}, nil, reason.ExitUsage}, // the git hook is removed by deleting it
	} {
		var got *UninstallOptions
		runs := &Runs{
			Install:   func(context.Context, *InstallOptions) error { t.Fatal("install ran"); return nil },
			Uninstall: func(_ context.Context, o *UninstallOptions) error { got = o; return nil },
		}
		err := cmdtest.Execute(NewHookCmd(&cmdutil.App{}, runs), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("hook %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(UninstallOptions{}, "App")); d != "" {
			t.Errorf("hook %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestPluginExportFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *ExportOptions
		code int
	}{
		{[]string{"export", "out"}, &ExportOptions{Dir: "out"}, 0},
		{[]string{"export", "out", "--binary", "/opt/my custodian"}, &ExportOptions{Dir: "out", Binary: "/opt/my custodian"}, 0},
		{[]string{"export"}, nil, reason.ExitUsage},
	} {
		var got *ExportOptions
		err := cmdtest.Execute(NewPluginCmd(&cmdutil.App{}, func(_ context.Context, o *ExportOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("plugin %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(ExportOptions{}, "App")); d != "" {
			t.Errorf("plugin %q: options differ (-want +got):\n%s", tc.args, d)
		}
	}
}

func TestClaudeHookFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ran  bool
		code int
	}{
		{[]string{"claude"}, true, 0},
		{[]string{"claude", "extra"}, false, reason.ExitUsage},
		{[]string{"claude", "--nope"}, false, reason.ExitUsage},
	} {
		app := &cmdutil.App{}
		var got *ClaudeOptions
		err := cmdtest.Execute(NewHookCmd(app, &Runs{Claude: func(_ context.Context, o *ClaudeOptions) error { got = o; return nil }}), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("hook %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if (got != nil) != tc.ran || got != nil && got.App != app {
			t.Errorf("hook %q: ran %v with %+v", tc.args, got != nil, got)
		}
	}
}
