package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
)

func newSliceCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "slice", Short: "Add, show and list ASDD slices"}
	var name, typ, gov string
	add := &cobra.Command{
		Use:   "add ID",
		Short: "Add a slice (FEATURE starts in DISCOVERY, RETRO_SPEC in BEHAVIOR_CAPTURE)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, r, err := applyOp(app, cmd, asdd.AddSlice{ID: args[0], Name: name, Type: strings.ToUpper(typ), GovernanceMode: strings.ToUpper(gov), By: Actor("")}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	add.Flags().StringVar(&name, "name", "", "the slice's name")
	enumFlag(add, add.Flags(), &typ, "type", asdd.TypeFeature, []string{asdd.TypeFeature, asdd.TypeRetroSpec}, "the slice type")
	add.Flags().StringVar(&gov, "governance", "MANUAL", "governance_mode")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one slice: phase, chain, CCS, block record, lock, tasks",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(app, cmd)
			if err != nil {
				return err
			}
			s, err := m.Find(args[0])
			if err != nil {
				return err
			}
			cfg, err := asddConfig(app)
			if err != nil {
				return err
			}
			view := struct {
				Revision uint64      `json:"revision"`
				Slice    *asdd.Slice `json:"slice"`
			}{m.Revision, s}
			return app.Render(view, func(w io.Writer) error { return writeSlice(w, s, cfg, m.Revision, app.Now()) })
		},
	}

	var status string
	list := &cobra.Command{
		Use:   "list",
		Short: "List slices (optionally --status S)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(app, cmd)
			if err != nil {
				return err
			}
			list := []*asdd.Slice{}
			for _, s := range m.Slices {
				if status == "" || s.Status == strings.ToUpper(status) {
					list = append(list, s)
				}
			}
			return app.Render(list, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "SLICE\tTYPE\tSTATUS\tCCS\tNAME")
				for _, s := range list {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tx(s.SliceID), tx(dash(s.Type)), tx(s.Status), ccsText(s.CCS), tx(s.Name))
				}
				return tw.Flush()
			})
		},
	}
	enumFlag(list, list.Flags(), &status, "status", "", sliceStatuses(), "only slices with this status")
	cmd.AddCommand(add, show, list)
	return cmd
}

// writeSlice is the text of `slice show`.
func writeSlice(w io.Writer, s *asdd.Slice, cfg *asdd.Config, rev uint64, now time.Time) error {
	fmt.Fprintf(w, "%s  %s\n", tx(s.SliceID), tx(s.Name))
	fmt.Fprintf(w, "  type %s, status %s, governance %s, manifest revision %d\n", dash(s.Type), s.Status, dash(s.GovernanceMode), rev)
	fmt.Fprintf(w, "  CCS %s", ccsText(s.CCS))
	if wl, ok := asdd.WeakLink(s, cfg); ok {
		fmt.Fprintf(w, " (weak link: %s %s)", wl.Agent, asdd.FormatScore(wl.Score))
	}
	fmt.Fprintln(w)
	if s.Status == asdd.Blocked {
		fmt.Fprintf(w, "  BLOCKED at %s (last known good %s) since %s: %s\n", tx(s.BlockedAtPhase), tx(s.LKGPhase), tx(s.RollbackTimestamp), tx(s.BlockReason))
		fmt.Fprintf(w, "    failure mode %s; action: %s\n", tx(s.FailureMode), tx(dash(s.ActionRequired)))
		fmt.Fprintf(w, "    escalation %s; sign-off by %s\n", tx(dash(s.EscalationID)), tx(strings.Join(s.SignOffsRequired, " + ")))
		if len(s.PausedAgents) > 0 {
			fmt.Fprintf(w, "    paused: %s\n", tx(strings.Join(s.PausedAgents, ", ")))
		}
		if s.FeatureBranch != "" {
			fmt.Fprintf(w, "    feature branch: %s\n", tx(s.FeatureBranch))
		}
		if s.ReviewRequired != "" {
			fmt.Fprintf(w, "    review required: %s\n", tx(s.ReviewRequired))
		}
	}
	if r := asdd.RetroOf(s); r != nil {
		fmt.Fprintf(w, "  retro-spec validation %s\n", r.Text())
	}
	for _, u := range s.SteeringUpdates {
		fmt.Fprintf(w, "  steering update %s: %s (%s)\n", u.Status, u.Path, u.Escalation)
	}
	for _, u := range s.UncertaintyFactors {
		fmt.Fprintf(w, "  uncertainty: %s\n", tx(u))
	}
	if s.Lock != nil {
		if s.Lock.Expires == "" {
			fmt.Fprintf(w, "  %s by %s since %s, requested by %s: %s\n", tx(asdd.OrDefault(s.Lock.Status, "locked")), tx(s.Lock.Holder), tx(s.Lock.Acquired), tx(dash(s.Lock.Requester)), tx(s.Lock.Reason))
		} else {
			fmt.Fprintf(w, "  locked by %s until %s\n", tx(s.Lock.Holder), tx(s.Lock.Expires))
		}
	}
	for _, a := range sortedKeys(s.RaisedMinimums) {
		fmt.Fprintf(w, "  minimum of %s raised to %s (dynamic gating)\n", a, asdd.FormatScore(s.RaisedMinimums[a]))
	}
	if len(s.NeedsHumanReview) > 0 {
		fmt.Fprintf(w, "  %s: %s\n", asdd.NeedsHumanReview, tx(strings.Join(s.NeedsHumanReview, ", ")))
	}
	if len(s.PhaseData) > 0 {
		fmt.Fprintln(w, "  artifacts:")
		for _, name := range sortedKeys(s.PhaseData) {
			fmt.Fprintf(w, "    %-14s %s\n", tx(name), tx(s.PhaseData[name]))
		}
	}
	if len(s.ConfidenceChain) > 0 {
		fmt.Fprintln(w, "  confidence chain:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range s.ConfidenceChain {
			fmt.Fprintf(tw, "    %s\t#%d\t%s\t%s\t%s\t%s\n", e.Agent, e.Attempt, strconv.FormatFloat(e.Score, 'f', -1, 64), dash(e.Phase), dash(e.Outcome), e.Timestamp)
		}
		tw.Flush()
	}
	if len(s.ChainHistory) > 0 {
		fmt.Fprintln(w, "  earlier attempts:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range s.ChainHistory {
			fmt.Fprintf(tw, "    %s\t#%d\t%s\t%s\t%s\t%s\n", e.Agent, e.Attempt, strconv.FormatFloat(e.Score, 'f', -1, 64), dash(e.Phase), dash(e.Outcome), e.Timestamp)
		}
		tw.Flush()
	}
	if len(s.Assumptions) > 0 {
		fmt.Fprintln(w, "  assumptions:")
		for i, a := range s.Assumptions {
			fmt.Fprintf(w, "    %d. [%s] %s", i+1, tx(a.Status), tx(a.Text))
			if a.Correction != "" {
				fmt.Fprintf(w, " → %s (%s)", tx(a.Correction), tx(a.CorrectedBy))
			}
			fmt.Fprintln(w)
		}
	}
	if len(s.Tasks) > 0 {
		fmt.Fprintln(w, "  tasks:")
		for _, t := range s.Tasks {
			fmt.Fprintf(w, "    wave %d  %-10s %-8s %-8s %s\n", t.Wave, tx(t.ID), tx(t.Status), tx(dash(t.Requirement)), tx(strings.Join(t.DependsOn, ",")))
		}
	}
	return nil
}
