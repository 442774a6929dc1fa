package heartbeat

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Options is what `custodian heartbeat` was asked to do.
type Options struct {
	App    *cmdutil.App
	Agent  string
	Status string // IDLE, ACTIVE or PAUSED
	Slice  string // the slice it works on
	// Wave, Done and Remaining are nil when not given.
	Wave, Done, Remaining *int
}

// NewCmd returns `custodian heartbeat`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	var wave, done, remaining int
	cmd := &cobra.Command{
		Use:   "heartbeat --agent A [--status ACTIVE] [--slice S] [--wave N] [--done N] [--remaining N]",
		Short: "Record an agent heartbeat (agent_heartbeats)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("agent", opts.Agent); err != nil {
				return err
			}
			opts.Wave, opts.Done, opts.Remaining = cmdutil.OptInt(cmd, "wave", wave), cmdutil.OptInt(cmd, "done", done), cmdutil.OptInt(cmd, "remaining", remaining)
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "the agent")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &opts.Status, "status", asdd.HeartbeatActive, []string{asdd.HeartbeatIdle, asdd.HeartbeatActive, asdd.HeartbeatPaused}, "the agent's status")
	cmd.Flags().StringVar(&opts.Slice, "slice", "", "the slice it works on")
	cmd.Flags().IntVar(&wave, "wave", 0, "the current wave")
	cmd.Flags().IntVar(&done, "done", 0, "tasks completed")
	cmd.Flags().IntVar(&remaining, "remaining", 0, "tasks remaining")
	return cmd
}

// run proposes the heartbeat.
func run(ctx context.Context, opts *Options) error {
	op := asdd.Beat{Agent: opts.Agent, Status: opts.Status, Slice: opts.Slice, Wave: opts.Wave, Completed: opts.Done, Remaining: opts.Remaining}
	return cmdutil.Apply(ctx, opts.App, op)
}
