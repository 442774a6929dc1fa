package escalations

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Options is what `custodian escalations` was asked to show.
type Options struct {
	App   *cmdutil.App
	All   bool   // resolved ones too
	Slice string // only this slice's ("": every slice's)
}

// NewCmd returns `custodian escalations`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	cmd := &cobra.Command{
		Use:   "escalations [--all] [--slice S]",
		Short: "List escalation notices (open ones by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF == nil {
				runF = run
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "include resolved escalations")
	cmd.Flags().StringVar(&opts.Slice, "slice", "", "only this slice's")
	return cmd
}

// run lists the escalations asked for.
func run(ctx context.Context, opts *Options) error {
	m, err := cmdutil.LoadManifest(ctx, opts.App)
	if err != nil {
		return err
	}
	list := []asdd.EscalationView{}
	for _, s := range m.Slices {
		if opts.Slice != "" && s.SliceID != opts.Slice {
			continue
		}
		for _, e := range s.Escalations {
			if opts.All || e.Status == asdd.EscalationOpen {
				list = append(list, asdd.EscalationView{Slice: s.SliceID, Escalation: e})
			}
		}
	}
	return opts.App.Render(list, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ESCALATION\tSLICE\tSTATUS\tFAILURE MODE\tAGENT\tROUTED TO\tNOTICE")
		for _, e := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cmdutil.Tx(e.ID), cmdutil.Tx(e.Slice), cmdutil.Tx(e.Status), asdd.ModeLabel(e.FailureMode), cmdutil.Tx(cmdutil.Dash(e.Agent)), cmdutil.Tx(strings.Join(e.RouteTo, ",")), cmdutil.Tx(e.Path))
		}
		return tw.Flush()
	})
}
