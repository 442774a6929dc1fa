package approve

import (
	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	var role, by, rationale, root string
	var project bool
	cmd := &cobra.Command{
		Use:   "approve SLICE --role R --rationale TEXT",
		Short: "A named role's sign-off: accept a halted slice's output, clear NEEDS_HUMAN_REVIEW",
		Args: func(cmd *cobra.Command, args []string) error {
			if project {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("role", role); err != nil {
				return err
			}
			if err := cmdutil.Required("rationale", rationale); err != nil {
				return err
			}
			if project {
				_, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.ClearReview{Role: role, By: by, Rationale: rationale})
				if err != nil {
					return err
				}
				return cmdutil.Finish(app, r, nil)
			}
			hashes, err := cmdutil.SliceHashes(app.Context(cmd), app, args[0])
			if err != nil {
				return err
			}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.Approve{Slice: args[0], Role: role, By: by, Rationale: rationale, RootCause: root, Hashes: hashes})
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "the approving role (TL, PO, Security)")
	cmd.Flags().StringVar(&by, "by", "", "the person")
	cmd.Flags().StringVar(&rationale, "rationale", "", "why (logged)")
	cmd.Flags().StringVar(&root, "root-cause", "", "the root cause, for the failure log")
	cmd.Flags().BoolVar(&project, "project", false, "clear NEEDS_HUMAN_REVIEW on the project context instead of a slice")
	return cmd
}
