package resolve

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Options is what `custodian resolve` was asked to do.
type Options struct {
	App       *cmdutil.App
	Slice     string
	Role      string // the resolving role
	By        string // the person
	Rationale string
	Action    string // rerun, resume or return ("": return with To, resume with Favour, else rerun)
	To        string // the phase to return to, upper case
	Favour    string // the agent a conflict is arbitrated for
	RootCause string
}

// NewCmd returns `custodian resolve`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
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
			opts.Slice = args[0]
			if err := cmdutil.RequiredFlags(cmd, "role", "rationale"); err != nil {
				return err
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.Role, "role", "", "the resolving role (TL, PO, Security)")
	cmd.Flags().StringVar(&opts.By, "by", "", "the person")
	cmd.Flags().StringVar(&opts.Rationale, "rationale", "", "why (logged)")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &opts.Action, "action", "", []string{asdd.ActionRerun, asdd.ActionResume, asdd.ActionReturn}, "what the slice does next (default rerun)")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &opts.To, "to", "", append([]string{asdd.BehaviorCapture}, asdd.Lifecycle...), "the phase to return to (implies --action return)")
	cmd.Flags().StringVar(&opts.Favour, "favour", "", "arbitrate a conflict in favour of this agent (implies --action resume)")
	cmd.Flags().StringVar(&opts.RootCause, "root-cause", "", "the root cause, for the failure log")
	return cmd
}

// run proposes the resolution; the custodian records the artifacts'
// current hashes as the accepted versions (it reads them itself).
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	op := asdd.Resolve{Slice: opts.Slice, Role: opts.Role, By: opts.By, Rationale: opts.Rationale, Action: opts.Action,
		ReturnTo: opts.To, RootCause: opts.RootCause, Favour: opts.Favour}
	return cmdutil.Apply(ctx, app, op)
}
