package mcp

import (
	"context"
	"log/slog"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestMCPFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want slog.Level
		code int
	}{
		{nil, slog.LevelWarn, 0},
		{[]string{"--log-level", "DEBUG"}, slog.LevelDebug, 0},
		{[]string{"--log-level", "loud"}, 0, reason.ExitUsage},
		{[]string{"stdio"}, 0, reason.ExitUsage},
	} {
		var got *Options
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(_ context.Context, o *Options) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("mcp %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if tc.code == 0 && got.LogLevel != tc.want {
			t.Errorf("mcp %q: log level %v, want %v", tc.args, got.LogLevel, tc.want)
		}
	}
}
