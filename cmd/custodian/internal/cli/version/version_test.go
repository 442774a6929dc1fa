package version

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

func TestVersionFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ran  bool
		code int
	}{
		{nil, true, 0},
		{[]string{"extra"}, false, reason.ExitUsage},
	} {
		ran := false
		err := cmdtest.Execute(NewCmd(&cmdutil.App{}, func(context.Context, *Options) error { ran = true; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code || ran != tc.ran {
			t.Errorf("version %q: exit %d (%v) ran %v, want %d %v", tc.args, code, err, ran, tc.code, tc.ran)
		}
	}
}

// The version prints one line, or with --json the build information.
func TestVersionOutput(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &Options{App: &cmdutil.App{Out: &out}}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.HasPrefix(s, "custodian ") || strings.Count(s, "\n") != 1 || !strings.Contains(s, ReadBuildInfo().Go) {
		t.Errorf("version printed %q", s)
	}
	out.Reset()
	if err := run(context.Background(), &Options{App: &cmdutil.App{Out: &out, JSON: true}}); err != nil {
		t.Fatal(err)
	}
	var b BuildInfo
	if err := json.Unmarshal(out.Bytes(), &b); err != nil || b.Go == "" || b.Platform == "" || b.Version == "" {
		t.Errorf("version --json printed %q (%v)", out.String(), err)
	}
}
