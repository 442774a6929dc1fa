package approve

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Options is what `custodian approve` was asked to do.
type Options struct {
	App       *cmdutil.App
	Slice     string // "" with Project
	Project   bool   // clear NEEDS_HUMAN_REVIEW on the project context
	Role      string // the approving role
	By        string // the person
	Rationale string
	RootCause string
	Config    bool // accept .asdd/config.yaml as it is now
}

// NewCmd returns `custodian approve`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	cmd := &cobra.Command{
		Use:   "approve SLICE --role R --rationale TEXT",
		Short: "A named role's sign-off: accept a halted slice's output, clear NEEDS_HUMAN_REVIEW",
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Project || opts.Config {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Slice = args[0]
			}
			if err := cmdutil.RequiredFlags(cmd, "role", "rationale"); err != nil {
				return err
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.Role, "role", "", "the approving role (TL, PO, Security)")
	cmd.Flags().StringVar(&opts.By, "by", "", "the person")
	cmd.Flags().StringVar(&opts.Rationale, "rationale", "", "why (logged)")
	cmd.Flags().StringVar(&opts.RootCause, "root-cause", "", "the root cause, for the failure log")
	cmd.Flags().BoolVar(&opts.Project, "project", false, "clear NEEDS_HUMAN_REVIEW on the project context instead of a slice")
	cmd.Flags().BoolVar(&opts.Config, "config", false, "accept .asdd/config.yaml as it is now (init pins it; a config changed behind the custodian stops every operation until accepted)")
	return cmd
}

// run proposes the sign-off: on the project context, or on a slice (the
// custodian records its artifacts' current hashes as the accepted versions).
func run(ctx context.Context, opts *Options) error {
	var op asdd.Op = asdd.Approve{Slice: opts.Slice, Role: opts.Role, By: opts.By, Rationale: opts.Rationale, RootCause: opts.RootCause}
	if opts.Config || opts.Project {
		op = asdd.ClearReview{Role: opts.Role, By: opts.By, Rationale: opts.Rationale, Config: opts.Config}
	}
	return cmdutil.Apply(ctx, opts.App, op)
}
