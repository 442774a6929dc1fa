package halt

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Options is what `custodian halt` was asked to do.
type Options struct {
	App       *cmdutil.App
	Slice     string
	Agent     string   // the reporting agent
	Mode      string   // the failure mode
	Reason    string   // what the agent found
	Flagged   []string // sections to flag
	Artifacts []string // conflicting artifacts as NAME=PATH
}

// NewCmd returns `custodian halt`; it parses the command line into Options
// and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
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
			opts.Slice = args[0]
			if err := cmdutil.RequiredFlags(cmd, "agent", "mode", "reason"); err != nil {
				return err
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "the reporting agent")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &opts.Mode, "mode", "", []string{asdd.ModeHallucinatedSpec, asdd.ModeConflict, asdd.ModeContradictorySteering}, "the failure mode")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "what the agent found")
	cmd.Flags().StringArrayVar(&opts.Flagged, "flag", nil, "a section to flag (repeatable)")
	cmd.Flags().StringArrayVar(&opts.Artifacts, "artifact", nil, "a conflicting artifact as NAME=PATH, PATH relative to the current directory (repeatable)")
	return cmd
}

// run proposes the halt (the application layer hashes the artifacts named).
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	artifacts, err := cmdutil.ParseArtifactFlags(app, opts.Artifacts)
	if err != nil {
		return err
	}
	// The application layer hashes the slice's artifacts as marked: the
	// phase's artifact is marked DRAFT — AGENT HALTED.
	op := asdd.ReportFailure{Agent: opts.Agent, Slice: opts.Slice, Mode: opts.Mode, Reason: opts.Reason, Flagged: opts.Flagged, Artifacts: artifacts}
	return cmdutil.Apply(ctx, app, op)
}
