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
	"github.com/custodian-dev/custodian/reason"
)

func required(name, value string) error {
	if strings.TrimSpace(value) == "" {
		return reason.Usage("--%s is required", name)
	}
	return nil
}

func parseScore(s string) (float64, error) {
	if s == "" {
		return 0, reason.Usage("--score is required")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, reason.New(reason.InvalidInput, "score %q is not a number", s)
	}
	return v, nil
}

// optInt returns a pointer to v when the flag was given.
func optInt(cmd *cobra.Command, name string, v int) *int {
	if !cmd.Flags().Changed(name) {
		return nil
	}
	return &v
}

// sliceResult adds the slice's committed state to a result.
func sliceResult(out *asdd.Outcome, r *commitResult, id string) {
	if out != nil && out.Manifest != nil {
		r.Slice = out.Manifest.Slice(id)
	}
}

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

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func ccsText(v *float64) string {
	if v == nil {
		return "—"
	}
	return asdd.FormatScore(*v)
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

func newProposeCmd(app *App) *cobra.Command {
	var agent, slice, score, trace, to, branch string
	var arts, unc, assume []string
	var base uint64
	var validated, corrected, missing int
	cmd := &cobra.Command{
		Use:   "propose --agent A --slice S --score X [--artifact NAME=PATH]... [--uncertainty TEXT]... [--trace PATH]",
		Short: "Submit an agent's result for a slice: validated against the rules and committed, or rejected",
		Long: `An agent proposes its result for a slice. The custodian checks the lifecycle,
the slice's lease, the agent's minimum confidence (raised by dynamic gating),
uncertainty factors below 0.95, the CCS floor, the refinement-loop limit and
concurrent changes since --base-revision, then commits the result or halts the
slice (exit 3; 4 for an escalated conflict; 5 for drift) with the reason.`,
		Example: `  custodian propose --agent spec --slice SLICE-001 --score 0.88 \
    --artifact requirements=.asdd/specs/auth/requirements.md \
    --uncertainty "NFR latency target not specified" --trace .asdd/traces/SLICE-001-spec.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := required("agent", agent); err != nil {
				return err
			}
			if err := required("slice", slice); err != nil {
				return err
			}
			sc, err := parseScore(score)
			if err != nil {
				return err
			}
			cfg, err := asddConfig(app)
			if err != nil {
				return err
			}
			marker := asdd.DefaultMarker
			if a, ok := cfg.Agent(agent); ok {
				marker = a.ArtifactMarker()
			}
			p, err := openProject(app)
			if err != nil {
				return err
			}
			defer p.Close()
			artifacts, err := parseArtifactFlags(p, arts, marker)
			if err != nil {
				return err
			}
			prop := asdd.Proposal{Agent: agent, Slice: slice, Score: sc, Artifacts: artifacts, Uncertainty: unc, To: strings.ToUpper(to), BaseRevision: base, Assumptions: assume, FeatureBranch: branch}
			if trace != "" {
				t, err := p.Artifact("trace", trace, marker)
				if err != nil {
					return err
				}
				prop.Trace = &t
			}
			if v, c, m := optInt(cmd, "validated", validated), optInt(cmd, "corrected", corrected), optInt(cmd, "missing", missing); v != nil || c != nil || m != nil {
				prop.Retro = &asdd.Retro{Validated: v, Corrected: c, Missing: m}
			}
			if m, err := loadManifest(app, cmd); err == nil {
				if s := m.Slice(slice); s != nil {
					if prop.Observed, err = p.Observe(s.Artifacts()); err != nil {
						return err
					}
				}
			}
			out, r, err := applyOp(app, cmd, prop, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, slice)
			return finish(app, r, nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&agent, "agent", "", "the proposing agent (discovery, spec, validation, …)")
	f.StringVar(&slice, "slice", "", "the slice id")
	f.StringVar(&score, "score", "", "the agent's confidence score in [0, 1]")
	f.StringArrayVar(&arts, "artifact", nil, "an artifact as NAME=PATH, relative to the project root (repeatable)")
	f.StringArrayVar(&unc, "uncertainty", nil, "an uncertainty factor (repeatable; required below 0.95)")
	f.StringVar(&trace, "trace", "", "the reasoning trace file")
	f.StringArrayVar(&assume, "assumption", nil, "an initial assumption for PO/TL to correct if wrong (assumptions-first discovery; repeatable)")
	f.StringVar(&to, "to", "", "the status asked for (PARTIAL from validation, DONE for a quick fix; default: the next phase)")
	f.Uint64Var(&base, "base-revision", 0, "the manifest revision the agent read before it ran (concurrent changes since are merged or escalated)")
	f.StringVar(&branch, "feature-branch", "", "the git branch holding the agent's work (recorded in the block record if the proposal halts below the minimum of an agent whose below_action is feature_branch)")
	f.IntVar(&validated, "validated", 0, "retro-spec: requirements validated")
	f.IntVar(&corrected, "corrected", 0, "retro-spec: requirements corrected")
	f.IntVar(&missing, "missing", 0, "retro-spec: requirements missing")
	return cmd
}

func newLockCmd(app *App) *cobra.Command {
	var holder, why string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "lock SLICE --holder H [--ttl 10m]",
		Short: "Lease a slice: until it expires only the holder may change it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := required("holder", holder); err != nil {
				return err
			}
			out, r, err := applyOp(app, cmd, asdd.LockSlice{Slice: args[0], Holder: holder, TTL: ttl, Reason: why}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&holder, "holder", "", "who takes the lease (an agent)")
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "lease duration (default: lock.default_ttl of the config)")
	cmd.Flags().StringVar(&why, "reason", "", "why")
	return cmd
}

func newUnlockCmd(app *App) *cobra.Command {
	var holder, role string
	var force bool
	cmd := &cobra.Command{
		Use:   "unlock SLICE --holder H | --force --role R",
		Short: "Release a slice's lease (its holder, or a role forcing it)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !force {
				if err := required("holder", holder); err != nil {
					return err
				}
			}
			out, r, err := applyOp(app, cmd, asdd.UnlockSlice{Slice: args[0], Holder: holder, Force: force, Role: role}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&holder, "holder", "", "the lease holder")
	cmd.Flags().BoolVar(&force, "force", false, "break someone else's lease (needs --role)")
	cmd.Flags().StringVar(&role, "role", "", "the role forcing the unlock")
	return cmd
}

// sliceHashes hashes every artifact the slice names, for a human sign-off.
func sliceHashes(app *App, cmd *cobra.Command, id string) (map[string]string, error) {
	m, err := loadManifest(app, cmd)
	if err != nil {
		return nil, err
	}
	s, err := m.Find(id)
	if err != nil {
		return nil, err
	}
	p, err := openProject(app)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	obs, err := p.Observe(s.Artifacts())
	if err != nil {
		return nil, err
	}
	for k, v := range obs {
		if v == "" {
			delete(obs, k)
		}
	}
	return obs, nil
}

func newResolveCmd(app *App) *cobra.Command {
	var role, by, rationale, action, to, root, favour string
	cmd := &cobra.Command{
		Use:   "resolve SLICE --role R --rationale TEXT [--action rerun|resume|return --to PHASE] [--favour AGENT]",
		Short: "A human decision on a halted slice: approve a re-run, resume, or return to a phase",
		Long: `Resolve a halted slice, by a named role with a rationale (the only way out of a
halt): rerun approves a revised run of the halted agent, resume accepts the
halted output as it is, return sends the slice back to an earlier phase (--to).
On a conflict between two agents (the slice is locked until then), resume
--favour AGENT arbitrates: that agent's whole proposal is applied and the
slice moves on (the other's committed change stands if it is favoured); the
decision is logged with both sides.
The resolution, time to resolve and root cause are written to the escalation
notice and to docs/agent-failure-log.md. The artifacts' current hashes are
recorded as the human's accepted versions.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := required("role", role); err != nil {
				return err
			}
			if err := required("rationale", rationale); err != nil {
				return err
			}
			hashes, err := sliceHashes(app, cmd, args[0])
			if err != nil {
				return err
			}
			if to != "" && action == "" {
				action = asdd.ActionReturn
			}
			if favour != "" && action == "" {
				action = asdd.ActionResume
			}
			op := asdd.Resolve{Slice: args[0], Role: role, By: by, Rationale: rationale, Action: action, ReturnTo: strings.ToUpper(to), RootCause: root, Hashes: hashes, Favour: favour}
			out, r, err := applyOp(app, cmd, op, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "the resolving role (TL, PO, Security)")
	cmd.Flags().StringVar(&by, "by", "", "the person")
	cmd.Flags().StringVar(&rationale, "rationale", "", "why (logged)")
	enumFlag(cmd, cmd.Flags(), &action, "action", "", []string{asdd.ActionRerun, asdd.ActionResume, asdd.ActionReturn}, "what the slice does next (default rerun)")
	enumFlag(cmd, cmd.Flags(), &to, "to", "", append([]string{asdd.BehaviorCapture}, asdd.Lifecycle...), "the phase to return to (implies --action return)")
	cmd.Flags().StringVar(&favour, "favour", "", "arbitrate a conflict in favour of this agent (implies --action resume)")
	cmd.Flags().StringVar(&root, "root-cause", "", "the root cause, for the failure log")
	return cmd
}

func newApproveCmd(app *App) *cobra.Command {
	var role, by, rationale, root string
	var project bool
	cmd := &cobra.Command{
		Use:   "approve SLICE --role R --rationale TEXT",
		Short: "A named role's sign-off: accept a halted slice's output, clear NEEDS_HUMAN_REVIEW",
		Args: func(cmd *cobra.Command, args []string) error {
			if project {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := required("role", role); err != nil {
				return err
			}
			if err := required("rationale", rationale); err != nil {
				return err
			}
			if project {
				_, r, err := applyOp(app, cmd, asdd.ClearReview{Role: role, By: by, Rationale: rationale}, false)
				if err != nil {
					return err
				}
				return finish(app, r, nil)
			}
			hashes, err := sliceHashes(app, cmd, args[0])
			if err != nil {
				return err
			}
			out, r, err := applyOp(app, cmd, asdd.Approve{Slice: args[0], Role: role, By: by, Rationale: rationale, RootCause: root, Hashes: hashes}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "the approving role (TL, PO, Security)")
	cmd.Flags().StringVar(&by, "by", "", "the person")
	cmd.Flags().StringVar(&rationale, "rationale", "", "why (logged)")
	cmd.Flags().StringVar(&root, "root-cause", "", "the root cause, for the failure log")
	cmd.Flags().BoolVar(&project, "project", false, "clear NEEDS_HUMAN_REVIEW on the project context instead of a slice")
	return cmd
}

func newQuickCmd(app *App) *cobra.Command {
	var id, agent string
	var arts []string
	cmd := &cobra.Command{
		Use:   `quick "ONE-LINE DESCRIPTION" [--artifact NAME=PATH]...`,
		Short: "Record a QUICK_FIX slice (/asdd:quick): no phase gates",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := openProject(app)
			if err != nil {
				return err
			}
			defer p.Close()
			artifacts, err := parseArtifactFlags(p, arts, asdd.DefaultMarker)
			if err != nil {
				return err
			}
			out, r, err := applyOp(app, cmd, asdd.Quick{ID: id, Description: args[0], Agent: agent, Artifacts: artifacts}, false)
			if err != nil {
				return err
			}
			for _, e := range r.Events {
				if e.Type == "quick_fix" {
					sliceResult(out, r, e.Slice)
				}
			}
			return finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&id, "id", "", "the slice id (default QUICK-<n>)")
	cmd.Flags().StringVar(&agent, "agent", "implementation", "the agent that made the fix")
	cmd.Flags().StringArrayVar(&arts, "artifact", nil, "a changed file as NAME=PATH (repeatable)")
	return cmd
}

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

func newTasksCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "tasks", Short: "A slice's plan: tasks in waves with dependencies"}
	var wave int
	var deps []string
	var title, by, req string
	add := &cobra.Command{
		Use:   "add SLICE TASK --wave N [--depends-on T]...",
		Short: "Add a task to a slice's plan",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, r, err := applyOp(app, cmd, asdd.AddTask{Slice: args[0], ID: args[1], Title: title, Wave: wave, DependsOn: deps, Requirement: req, By: by}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	add.Flags().IntVar(&wave, "wave", 1, "the wave (1, 2, …): wave N starts after wave N-1 is done")
	add.Flags().StringArrayVar(&deps, "depends-on", nil, "a task this one depends on (repeatable)")
	add.Flags().StringVar(&title, "title", "", "what the task is")
	add.Flags().StringVar(&by, "by", "", "the planning agent")
	add.Flags().StringVar(&req, "req", "", "the requirement (REQ-NNN) the task's sub-agent verifies against")

	ready := &cobra.Command{
		Use:   "ready SLICE",
		Short: "List the tasks that may start now",
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
			list := asdd.Ready(s)
			if list == nil {
				list = []asdd.Task{}
			}
			return app.Render(list, func(w io.Writer) error {
				for _, t := range list {
					fmt.Fprintf(w, "%s\twave %d\t%s\n", t.ID, t.Wave, t.Title)
				}
				return nil
			})
		},
	}
	var agent string
	done := &cobra.Command{
		Use:        "done SLICE TASK",
		SuggestFor: []string{"complete", "finish"},
		Short:      "Mark a ready task done",
		Args:       cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, r, err := applyOp(app, cmd, asdd.CompleteTask{Slice: args[0], ID: args[1], Agent: agent}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	done.Flags().StringVar(&agent, "agent", "implementation", "the agent that did it (its claimer, if it was claimed)")
	var claimer string
	claim := &cobra.Command{
		Use:   "claim SLICE TASK --agent A",
		Short: "Claim a ready task for an agent: of concurrent claims one wins, the others get CONFLICT (exit 4)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := required("agent", claimer); err != nil {
				return err
			}
			out, r, err := applyOp(app, cmd, asdd.ClaimTask{Slice: args[0], ID: args[1], Agent: claimer}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	claim.Flags().StringVar(&claimer, "agent", "", "the claiming agent (a name of its own, e.g. implementation-3)")
	cmd.AddCommand(add, ready, claim, done)
	return cmd
}

func newEscalationsCmd(app *App) *cobra.Command {
	var all bool
	var slice string
	cmd := &cobra.Command{
		Use:   "escalations [--all] [--slice S]",
		Short: "List escalation notices (open ones by default)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(app, cmd)
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
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", tx(e.ID), tx(e.Slice), tx(e.Status), asdd.ModeLabel(e.FailureMode), tx(dash(e.Agent)), tx(strings.Join(e.RouteTo, ",")), tx(e.Path))
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include resolved escalations")
	cmd.Flags().StringVar(&slice, "slice", "", "only this slice's")
	return cmd
}

func newHaltCmd(app *App) *cobra.Command {
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
			if err := required("agent", agent); err != nil {
				return err
			}
			if err := required("mode", mode); err != nil {
				return err
			}
			if err := required("reason", why); err != nil {
				return err
			}
			p, err := openProject(app)
			if err != nil {
				return err
			}
			defer p.Close()
			artifacts, err := parseArtifactFlags(p, arts, asdd.DefaultMarker)
			if err != nil {
				return err
			}
			// The application layer hashes the slice's artifacts as marked:
			// the phase's artifact is marked DRAFT — AGENT HALTED.
			op := asdd.ReportFailure{Agent: agent, Slice: args[0], Mode: strings.ToUpper(mode), Reason: why, Flagged: flagged, Artifacts: artifacts}
			out, r, err := applyOp(app, cmd, op, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	cmd.Flags().StringVar(&agent, "agent", "", "the reporting agent")
	enumFlag(cmd, cmd.Flags(), &mode, "mode", "", []string{asdd.ModeHallucinatedSpec, asdd.ModeConflict, asdd.ModeContradictorySteering}, "the failure mode")
	cmd.Flags().StringVar(&why, "reason", "", "what the agent found")
	cmd.Flags().StringArrayVar(&flagged, "flag", nil, "a section to flag (repeatable)")
	cmd.Flags().StringArrayVar(&arts, "artifact", nil, "a conflicting artifact as NAME=PATH (repeatable)")
	return cmd
}

func newAssumptionCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "assumption", Short: "Assumptions-first discovery: correct a wrong assumption"}
	var role, text string
	correct := &cobra.Command{
		Use:   "correct SLICE N --role R --text TEXT",
		Short: "Correct assumption N of a slice (as numbered by slice show)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[1])
			if err != nil {
				return reason.Usage("assumption number %q is not a number", args[1])
			}
			if err := required("role", role); err != nil {
				return err
			}
			out, r, err := applyOp(app, cmd, asdd.CorrectAssumption{Slice: args[0], Index: n, Role: role, Correction: text}, false)
			if err != nil {
				return err
			}
			sliceResult(out, r, args[0])
			return finish(app, r, nil)
		},
	}
	correct.Flags().StringVar(&role, "role", "", "the correcting role (PO, TL)")
	correct.Flags().StringVar(&text, "text", "", "what is actually the case")
	cmd.AddCommand(correct)
	return cmd
}
