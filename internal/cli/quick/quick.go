package quick

import (
	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	var id, agent string
	var arts []string
	cmd := &cobra.Command{
		Use:   `quick "ONE-LINE DESCRIPTION" [--artifact NAME=PATH]...`,
		Short: "Record a QUICK_FIX slice (/asdd:quick): no phase gates",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := cmdutil.OpenProject(app)
			if err != nil {
				return err
			}
			defer p.Close()
			artifacts, err := cmdutil.ParseArtifactFlags(p, arts, asdd.DefaultMarker)
			if err != nil {
				return err
			}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.Quick{ID: id, Description: args[0], Agent: agent, Artifacts: artifacts})
			if err != nil {
				return err
			}
			for _, e := range r.Events {
				if e.Type == "quick_fix" {
					cmdutil.SliceResult(out, r, e.Slice)
				}
			}
			return cmdutil.Finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "the slice id (default QUICK-<n>)")
	cmd.Flags().StringVar(&agent, "agent", "implementation", "the agent that made the fix")
	cmd.Flags().StringArrayVar(&arts, "artifact", nil, "a changed file as NAME=PATH (repeatable)")
	return cmd
}
