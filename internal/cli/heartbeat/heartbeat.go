package heartbeat

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	var agent, status, slice string
	var wave, done, remaining int
	cmd := &cobra.Command{
		Use:   "heartbeat --agent A [--status ACTIVE] [--slice S] [--wave N] [--done N] [--remaining N]",
		Short: "Record an agent heartbeat (agent_heartbeats)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("agent", agent); err != nil {
				return err
			}
			op := asdd.Beat{Agent: agent, Status: strings.ToUpper(status), Slice: slice,
				Wave: cmdutil.OptInt(cmd, "wave", wave), Completed: cmdutil.OptInt(cmd, "done", done), Remaining: cmdutil.OptInt(cmd, "remaining", remaining)}
			_, r, err := cmdutil.ApplyOp(app.Context(cmd), app, op)
			if err != nil {
				return err
			}
			return cmdutil.Finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the agent")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &status, "status", asdd.HeartbeatActive, []string{asdd.HeartbeatIdle, asdd.HeartbeatActive, asdd.HeartbeatPaused}, "the agent's status")
	cmd.Flags().StringVar(&slice, "slice", "", "the slice it works on")
	cmd.Flags().IntVar(&wave, "wave", 0, "the current wave")
	cmd.Flags().IntVar(&done, "done", 0, "tasks completed")
	cmd.Flags().IntVar(&remaining, "remaining", 0, "tasks remaining")
	return cmd
}
