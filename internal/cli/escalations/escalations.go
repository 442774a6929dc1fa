package escalations

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	var all bool
	var slice string
	cmd := &cobra.Command{
		Use:   "escalations [--all] [--slice S]",
		Short: "List escalation notices (open ones by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := cmdutil.LoadManifest(app.Context(cmd), app)
			if err != nil {
				return err
			}
			list := []asdd.EscalationView{}
			for _, s := range m.Slices {
				if slice != "" && s.SliceID != slice {
					continue
				}
				for _, e := range s.Escalations {
					if all || e.Status == asdd.EscalationOpen {
						list = append(list, asdd.EscalationView{Slice: s.SliceID, Escalation: e})
					}
				}
			}
			return app.Render(list, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ESCALATION\tSLICE\tSTATUS\tFAILURE MODE\tAGENT\tROUTED TO\tNOTICE")
				for _, e := range list {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cmdutil.Tx(e.ID), cmdutil.Tx(e.Slice), cmdutil.Tx(e.Status), asdd.ModeLabel(e.FailureMode), cmdutil.Tx(cmdutil.Dash(e.Agent)), cmdutil.Tx(strings.Join(e.RouteTo, ",")), cmdutil.Tx(e.Path))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include resolved escalations")
	cmd.Flags().StringVar(&slice, "slice", "", "only this slice's")
	return cmd
}
