package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
)

func newHeartbeatCmd(app *App) *cobra.Command {
	var agent, status, slice string
	var wave, done, remaining int
	cmd := &cobra.Command{
		Use:   "heartbeat --agent A [--status ACTIVE] [--slice S] [--wave N] [--done N] [--remaining N]",
		Short: "Record an agent heartbeat (agent_heartbeats)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := required("agent", agent); err != nil {
				return err
			}
			op := asdd.Beat{Agent: agent, Status: strings.ToUpper(status), Slice: slice,
				Wave: optInt(cmd, "wave", wave), Completed: optInt(cmd, "done", done), Remaining: optInt(cmd, "remaining", remaining)}
			_, r, err := applyOp(app, cmd, op, false)
			if err != nil {
				return err
			}
			return finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the agent")
	enumFlag(cmd, cmd.Flags(), &status, "status", asdd.HeartbeatActive, []string{asdd.HeartbeatIdle, asdd.HeartbeatActive, asdd.HeartbeatPaused}, "the agent's status")
	cmd.Flags().StringVar(&slice, "slice", "", "the slice it works on")
	cmd.Flags().IntVar(&wave, "wave", 0, "the current wave")
	cmd.Flags().IntVar(&done, "done", 0, "tasks completed")
	cmd.Flags().IntVar(&remaining, "remaining", 0, "tasks remaining")
	return cmd
}
