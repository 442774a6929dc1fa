package cmdutil

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
)

// Run runs a command with the options its flags were parsed into: runF
// (a test's) or, when runF is nil, run, with the command's context.
func Run[O any](app *App, cmd *cobra.Command, opts O, runF, run func(context.Context, O) error) error {
	if runF == nil {
		runF = run
	}
	return runF(app.Context(cmd), opts)
}

// Apply proposes op and prints its result (Finish, with no text of its
// own): what every command that makes one ASDD operation does.
func Apply(ctx context.Context, app *App, op asdd.Op) error {
	_, r, err := ApplyOp(ctx, app, op)
	if err != nil {
		return err
	}
	return Finish(app, r, nil)
}
