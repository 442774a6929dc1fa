package assumption

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// CorrectOptions is what `custodian assumption correct` was asked to do.
type CorrectOptions struct {
	App   *cmdutil.App
	Slice string
	Index int    // as numbered by slice show
	Role  string // the correcting role
	Text  string // what is actually the case
}

// NewCmd returns `custodian assumption`; its subcommand correct parses the
// command line into CorrectOptions and calls runF with them (runCorrect
// when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *CorrectOptions) error) *cobra.Command {
	cmd := &cobra.Command{Use: "assumption", Short: "Assumptions-first discovery: correct a wrong assumption"}
	opts := &CorrectOptions{App: app}
	correct := &cobra.Command{
		Use:   "correct SLICE N --role R --text TEXT",
		Short: "Correct assumption N of a slice (as numbered by slice show)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return reason.Usage("assumption number %q is not a number", args[1])
			}
			if err := cmdutil.Required("role", opts.Role); err != nil {
				return err
			}
			opts.Slice, opts.Index = args[0], n
			return cmdutil.Run(app, cmd, opts, runF, runCorrect)
		},
	}
	correct.Flags().StringVar(&opts.Role, "role", "", "the correcting role (PO, TL)")
	correct.Flags().StringVar(&opts.Text, "text", "", "what is actually the case")
	cmd.AddCommand(correct)
	return cmd
}

// runCorrect proposes the correction.
func runCorrect(ctx context.Context, opts *CorrectOptions) error {
	return cmdutil.Apply(ctx, opts.App, asdd.CorrectAssumption{Slice: opts.Slice, Index: opts.Index, Role: opts.Role, Correction: opts.Text})
}
