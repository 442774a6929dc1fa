package schema

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// Options is what `custodian schema` was asked to print.
type Options struct {
	App      *cmdutil.App
	Document string // asdd
}

// NewCmd returns `custodian schema`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app, Document: "asdd"}
	return &cobra.Command{
		Use:       "schema [asdd]",
		Short:     "Print the JSON Schema of a state document (asdd: .asdd/state/manifest.json)",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"asdd"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] != "asdd" {
				return reason.Usage("unknown schema %q (known: asdd)", args[0])
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
}

// run prints the schema.
func run(_ context.Context, opts *Options) error {
	_, err := opts.App.Out.Write(asdd.Schema)
	return err
}
