package impl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/impl"
)

// TestImplArgs: the script's command line reaches the operation parsed;
// a line it refuses fails as the script fails (exit 1, "Error: …" on
// stderr) and runs nothing.
func TestImplArgs(t *testing.T) {
	var got *impl.Args
	run := func(_ context.Context, _ *cmdutil.App, a impl.Args) error { got = &a; return nil }
	app := &cmdutil.App{Out: new(bytes.Buffer), Err: new(bytes.Buffer)}
	if err := cmdtest.Execute(NewCmd(app, run), "--update-status", "--task-id", "3", "--status", "passed", "--branch", "t3", "-C", "/tmp/p"); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.Op != impl.OpUpdateStatus || got.TaskID != "3" || got.Status != "passed" || got.Branch != "t3" {
		t.Fatalf("parsed %+v", got)
	}
	if app.Dir != "/tmp/p" {
		t.Errorf("-C after the operation: dir %q", app.Dir)
	}

	got = nil
	errb := new(bytes.Buffer)
	app = &cmdutil.App{Out: new(bytes.Buffer), Err: errb}
	err := cmdtest.Execute(NewCmd(app, run), "--frobnicate")
	if code := cmdtest.ExitCode(err); code != 1 || got != nil || !strings.HasPrefix(errb.String(), "Error: ") {
		t.Errorf("--frobnicate: exit %d, ran %v, stderr %q", code, got != nil, errb.String())
	}
}
