package assumption

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	cmd := &cobra.Command{Use: "assumption", Short: "Assumptions-first discovery: correct a wrong assumption"}
	var role, text string
	correct := &cobra.Command{
		Use:   "correct SLICE N --role R --text TEXT",
		Short: "Correct assumption N of a slice (as numbered by slice show)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return reason.Usage("assumption number %q is not a number", args[1])
			}
			if err := cmdutil.Required("role", role); err != nil {
				return err
			}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.CorrectAssumption{Slice: args[0], Index: n, Role: role, Correction: text})
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	correct.Flags().StringVar(&role, "role", "", "the correcting role (PO, TL)")
	correct.Flags().StringVar(&text, "text", "", "what is actually the case")
	cmd.AddCommand(correct)
	return cmd
}
