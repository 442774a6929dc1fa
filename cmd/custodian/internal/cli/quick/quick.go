package quick

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Options is what `custodian quick` was asked to do.
type Options struct {
	App         *cmdutil.App
	Description string
	ID          string   // "": QUICK-<n>
	Agent       string   // the agent that made the fix
	Artifacts   []string // NAME=PATH
}

// NewCmd returns `custodian quick`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	cmd := &cobra.Command{
		Use:   `quick "ONE-LINE DESCRIPTION" [--artifact NAME=PATH]...`,
		Short: "Record a QUICK_FIX slice (/asdd:quick): no phase gates",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Description = args[0]
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.ID, "id", "", "the slice id (default QUICK-<n>)")
	cmd.Flags().StringVar(&opts.Agent, "agent", "implementation", "the agent that made the fix")
	cmd.Flags().StringArrayVar(&opts.Artifacts, "artifact", nil, "a changed file as NAME=PATH, PATH relative to the current directory (repeatable)")
	return cmd
}

// run proposes the quick fix (the application layer hashes the artifacts).
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	artifacts, err := cmdutil.ParseArtifactFlags(app, opts.Artifacts)
	if err != nil {
		return err
	}
	return cmdutil.Apply(ctx, app, asdd.Quick{ID: opts.ID, Description: opts.Description, Agent: opts.Agent, Artifacts: artifacts})
}
