package resolve

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	var role, by, rationale, action, to, root, favour string
	cmd := &cobra.Command{
		Use:   "resolve SLICE --role R --rationale TEXT [--action rerun|resume|return --to PHASE] [--favour AGENT]",
		Short: "A human decision on a halted slice: approve a re-run, resume, or return to a phase",
		Long: `Resolve a halted slice, by a named role with a rationale (the only way out of a
halt): rerun approves a revised run of the halted agent, resume accepts the
halted output as it is, return sends the slice back to an earlier phase (--to).
On a conflict between two agents (the slice is locked until then), resume
--favour AGENT arbitrates: that agent's whole proposal is applied and the
slice moves on (the other's committed change stands if it is favoured); the
decision is logged with both sides.
The resolution, time to resolve and root cause are written to the escalation
notice and to docs/agent-failure-log.md. The artifacts' current hashes are
recorded as the human's accepted versions.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("role", role); err != nil {
				return err
			}
			if err := cmdutil.Required("rationale", rationale); err != nil {
				return err
			}
			hashes, err := cmdutil.SliceHashes(app.Context(cmd), app, args[0])
			if err != nil {
				return err
			}
			if to != "" && action == "" {
				action = asdd.ActionReturn
			}
			if favour != "" && action == "" {
				action = asdd.ActionResume
			}
			op := asdd.Resolve{Slice: args[0], Role: role, By: by, Rationale: rationale, Action: action, ReturnTo: strings.ToUpper(to), RootCause: root, Hashes: hashes, Favour: favour}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, op)
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "the resolving role (TL, PO, Security)")
	cmd.Flags().StringVar(&by, "by", "", "the person")
	cmd.Flags().StringVar(&rationale, "rationale", "", "why (logged)")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &action, "action", "", []string{asdd.ActionRerun, asdd.ActionResume, asdd.ActionReturn}, "what the slice does next (default rerun)")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &to, "to", "", append([]string{asdd.BehaviorCapture}, asdd.Lifecycle...), "the phase to return to (implies --action return)")
	cmd.Flags().StringVar(&favour, "favour", "", "arbitrate a conflict in favour of this agent (implies --action resume)")
	cmd.Flags().StringVar(&root, "root-cause", "", "the root cause, for the failure log")
	return cmd
}
