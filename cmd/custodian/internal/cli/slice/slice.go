package slice

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// AddOptions is what `custodian slice add` was asked to do.
type AddOptions struct {
	App        *cmdutil.App
	ID         string
	Name       string
	Type       string // FEATURE or RETRO_SPEC
	Governance string // governance_mode, upper case
}

// ShowOptions is what `custodian slice show` was asked to show.
type ShowOptions struct {
	App *cmdutil.App
	ID  string
}

// ListOptions is what `custodian slice list` was asked to show.
type ListOptions struct {
	App    *cmdutil.App
	Status string // only slices with this status ("": all)
}

// Runs are the functions the subcommands call with their options; a nil
// one runs the command.
type Runs struct {
	Add  func(context.Context, *AddOptions) error
	Show func(context.Context, *ShowOptions) error
	List func(context.Context, *ListOptions) error
}

// NewCmd returns `custodian slice` and its subcommands add, show and list;
// each parses its command line into options and calls its function in
// runs (nil: the command's own).
func NewCmd(app *cmdutil.App, runs *Runs) *cobra.Command {
	r := Runs{Add: runAdd, Show: runShow, List: runList}
	if runs != nil {
		r = *runs
	}
	cmd := &cobra.Command{Use: "slice", Short: "Add, show and list ASDD slices"}
	addOpts := &AddOptions{App: app}
	add := &cobra.Command{
		Use:   "add ID",
		Short: "Add a slice (FEATURE starts in DISCOVERY, RETRO_SPEC in BEHAVIOR_CAPTURE)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			addOpts.ID = args[0]
			return r.Add(app.Context(cmd), addOpts)
		},
	}
	add.Flags().StringVar(&addOpts.Name, "name", "", "the slice's name")
	cmdutil.EnumFlag(add, add.Flags(), &addOpts.Type, "type", asdd.TypeFeature, []string{asdd.TypeFeature, asdd.TypeRetroSpec}, "the slice type")
	add.Flags().StringVar(&addOpts.Governance, "governance", "MANUAL", "governance_mode")

	showOpts := &ShowOptions{App: app}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one slice: phase, chain, CCS, block record, lock, tasks",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			showOpts.ID = args[0]
			return r.Show(app.Context(cmd), showOpts)
		},
	}

	listOpts := &ListOptions{App: app}
	list := &cobra.Command{
		Use:   "list",
		Short: "List slices (optionally --status S)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			listOpts.Status = strings.ToUpper(listOpts.Status)
			return r.List(app.Context(cmd), listOpts)
		},
	}
	cmdutil.EnumFlag(list, list.Flags(), &listOpts.Status, "status", "", cmdutil.SliceStatuses(), "only slices with this status")
	cmd.AddCommand(add, show, list)
	return cmd
}

// runAdd proposes the new slice.
func runAdd(ctx context.Context, o *AddOptions) error {
	_, r, err := cmdutil.ApplyOp(ctx, o.App, asdd.AddSlice{ID: o.ID, Name: o.Name, Type: o.Type, GovernanceMode: o.Governance, By: cmdutil.Actor("")})
	if err != nil {
		return err
	}
	return cmdutil.Finish(o.App, r, nil)
}

// runShow prints one slice.
func runShow(ctx context.Context, o *ShowOptions) error {
	app := o.App
	m, err := cmdutil.LoadManifest(ctx, app)
	if err != nil {
		return err
	}
	s, err := m.Find(o.ID)
	if err != nil {
		return err
	}
	cfg, err := cmdutil.ASDDConfig(app)
	if err != nil {
		return err
	}
	view := struct {
		Revision uint64      `json:"revision"`
		Slice    *asdd.Slice `json:"slice"`
	}{m.Revision, s}
	return app.Render(view, func(w io.Writer) error { return writeSlice(w, s, cfg, m.Revision, app.Now()) })
}

// runList lists the slices asked for.
func runList(ctx context.Context, o *ListOptions) error {
	m, err := cmdutil.LoadManifest(ctx, o.App)
	if err != nil {
		return err
	}
	list := []*asdd.Slice{}
	for _, s := range m.Slices {
		if o.Status == "" || s.Status == o.Status {
			list = append(list, s)
		}
	}
	return o.App.Render(list, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SLICE\tTYPE\tSTATUS\tCCS\tNAME")
		for _, s := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cmdutil.Tx(s.SliceID), cmdutil.Tx(cmdutil.Dash(s.Type)), cmdutil.Tx(s.Status), cmdutil.CCSText(s.CCS), cmdutil.Tx(s.Name))
		}
		return tw.Flush()
	})
}

// writeSlice is the text of `slice show`.
func writeSlice(w io.Writer, s *asdd.Slice, cfg *asdd.Config, rev uint64, now time.Time) error {
	fmt.Fprintf(w, "%s  %s\n", cmdutil.Tx(s.SliceID), cmdutil.Tx(s.Name))
	fmt.Fprintf(w, "  type %s, status %s, governance %s, manifest revision %d\n", cmdutil.Dash(s.Type), s.Status, cmdutil.Dash(s.GovernanceMode), rev)
	fmt.Fprintf(w, "  CCS %s", cmdutil.CCSText(s.CCS))
	if wl, ok := asdd.WeakLink(s, cfg); ok {
		fmt.Fprintf(w, " (weak link: %s %s)", wl.Agent, asdd.FormatScore(wl.Score))
	}
	fmt.Fprintln(w)
	if s.Status == asdd.Blocked {
		fmt.Fprintf(w, "  BLOCKED at %s (last known good %s) since %s: %s\n", cmdutil.Tx(s.BlockedAtPhase), cmdutil.Tx(s.LKGPhase), cmdutil.Tx(s.RollbackTimestamp), cmdutil.Tx(s.BlockReason))
		fmt.Fprintf(w, "    failure mode %s; action: %s\n", cmdutil.Tx(s.FailureMode), cmdutil.Tx(cmdutil.Dash(s.ActionRequired)))
		fmt.Fprintf(w, "    escalation %s; sign-off by %s\n", cmdutil.Tx(cmdutil.Dash(s.EscalationID)), cmdutil.Tx(strings.Join(s.SignOffsRequired, " + ")))
		if len(s.PausedAgents) > 0 {
			fmt.Fprintf(w, "    paused: %s\n", cmdutil.Tx(strings.Join(s.PausedAgents, ", ")))
		}
		if s.FeatureBranch != "" {
			fmt.Fprintf(w, "    feature branch: %s\n", cmdutil.Tx(s.FeatureBranch))
		}
		if s.ReviewRequired != "" {
			fmt.Fprintf(w, "    review required: %s\n", cmdutil.Tx(s.ReviewRequired))
		}
	}
	if r := asdd.RetroOf(s); r != nil {
		fmt.Fprintf(w, "  retro-spec validation %s\n", r.Text())
	}
	for _, u := range s.SteeringUpdates {
		fmt.Fprintf(w, "  steering update %s: %s (%s)\n", u.Status, u.Path, u.Escalation)
	}
	for _, u := range s.UncertaintyFactors {
		fmt.Fprintf(w, "  uncertainty: %s\n", cmdutil.Tx(u))
	}
	if s.Lock != nil {
		if s.Lock.Expires == "" {
			fmt.Fprintf(w, "  %s by %s since %s, requested by %s: %s\n", cmdutil.Tx(asdd.OrDefault(s.Lock.Status, "locked")), cmdutil.Tx(s.Lock.Holder), cmdutil.Tx(s.Lock.Acquired), cmdutil.Tx(cmdutil.Dash(s.Lock.Requester)), cmdutil.Tx(s.Lock.Reason))
		} else {
			fmt.Fprintf(w, "  locked by %s until %s\n", cmdutil.Tx(s.Lock.Holder), cmdutil.Tx(s.Lock.Expires))
		}
	}
	for _, a := range cmdutil.SortedKeys(s.RaisedMinimums) {
		fmt.Fprintf(w, "  minimum of %s raised to %s (dynamic gating)\n", a, asdd.FormatScore(s.RaisedMinimums[a]))
	}
	if len(s.NeedsHumanReview) > 0 {
		fmt.Fprintf(w, "  %s: %s\n", asdd.NeedsHumanReview, cmdutil.Tx(strings.Join(s.NeedsHumanReview, ", ")))
	}
	if len(s.PhaseData) > 0 {
		fmt.Fprintln(w, "  artifacts:")
		for _, name := range cmdutil.SortedKeys(s.PhaseData) {
			fmt.Fprintf(w, "    %-14s %s\n", cmdutil.Tx(name), cmdutil.Tx(s.PhaseData[name]))
		}
	}
	if len(s.ConfidenceChain) > 0 {
		fmt.Fprintln(w, "  confidence chain:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range s.ConfidenceChain {
			fmt.Fprintf(tw, "    %s\t#%d\t%s\t%s\t%s\t%s\n", e.Agent, e.Attempt, strconv.FormatFloat(e.Score, 'f', -1, 64), cmdutil.Dash(e.Phase), cmdutil.Dash(e.Outcome), e.Timestamp)
		}
		tw.Flush()
	}
	if len(s.ChainHistory) > 0 {
		fmt.Fprintln(w, "  earlier attempts:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range s.ChainHistory {
			fmt.Fprintf(tw, "    %s\t#%d\t%s\t%s\t%s\t%s\n", e.Agent, e.Attempt, strconv.FormatFloat(e.Score, 'f', -1, 64), cmdutil.Dash(e.Phase), cmdutil.Dash(e.Outcome), e.Timestamp)
		}
		tw.Flush()
	}
	if len(s.Assumptions) > 0 {
		fmt.Fprintln(w, "  assumptions:")
		for i, a := range s.Assumptions {
			fmt.Fprintf(w, "    %d. [%s] %s", i+1, cmdutil.Tx(a.Status), cmdutil.Tx(a.Text))
			if a.Correction != "" {
				fmt.Fprintf(w, " → %s (%s)", cmdutil.Tx(a.Correction), cmdutil.Tx(a.CorrectedBy))
			}
			fmt.Fprintln(w)
		}
	}
	if len(s.Tasks) > 0 {
		fmt.Fprintln(w, "  tasks:")
		for _, t := range s.Tasks {
			fmt.Fprintf(w, "    wave %d  %-10s %-8s %-8s %s\n", t.Wave, cmdutil.Tx(t.ID), cmdutil.Tx(t.Status), cmdutil.Tx(cmdutil.Dash(t.Requirement)), cmdutil.Tx(strings.Join(t.DependsOn, ",")))
		}
	}
	return nil
}
