package halt

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	var agent, mode, why string
	var flagged, arts []string
	cmd := &cobra.Command{
		Use:   "halt SLICE --agent A --mode MODE --reason TEXT [--flag SECTION]... [--artifact NAME=PATH]...",
		Short: "An agent reports a failure it detected: the slice halts and the Tech Lead is notified",
		Long: `Report a failure mode an agent detected (seed 004): HALLUCINATED_SPEC_SECTION
(the validation agent finds undefined domain terms: block pipeline, flag
section, notify TL), CONFLICTING_AGENT_OUTPUTS (the design agent's output
contradicts the domain contract: pause pipeline, log conflict, escalate),
CONTRADICTORY_STEERING_RULES (the security agent finds a rule conflict: block
deployment, log conflict, notify TL). The slice halts with an escalation
notice and a failure-log row, like any halt.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("agent", agent); err != nil {
				return err
			}
			if err := cmdutil.Required("mode", mode); err != nil {
				return err
			}
			if err := cmdutil.Required("reason", why); err != nil {
				return err
			}
			p, err := cmdutil.OpenProject(app)
			if err != nil {
				return err
			}
			defer p.Close()
			artifacts, err := cmdutil.ParseArtifactFlags(p, arts, asdd.DefaultMarker)
			if err != nil {
				return err
			}
			// The application layer hashes the slice's artifacts as marked:
			// the phase's artifact is marked DRAFT — AGENT HALTED.
			op := asdd.ReportFailure{Agent: agent, Slice: args[0], Mode: strings.ToUpper(mode), Reason: why, Flagged: flagged, Artifacts: artifacts}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, op)
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the reporting agent")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &mode, "mode", "", []string{asdd.ModeHallucinatedSpec, asdd.ModeConflict, asdd.ModeContradictorySteering}, "the failure mode")
	cmd.Flags().StringVar(&why, "reason", "", "what the agent found")
	cmd.Flags().StringArrayVar(&flagged, "flag", nil, "a section to flag (repeatable)")
	cmd.Flags().StringArrayVar(&arts, "artifact", nil, "a conflicting artifact as NAME=PATH (repeatable)")
	return cmd
}
