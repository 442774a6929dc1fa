package propose

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
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
			if err := cmdutil.Required("agent", agent); err != nil {
				return err
			}
			if err := cmdutil.Required("slice", slice); err != nil {
				return err
			}
			sc, err := cmdutil.ParseScore(score)
			if err != nil {
				return err
			}
			cfg, err := cmdutil.ASDDConfig(app)
			if err != nil {
				return err
			}
			marker := asdd.DefaultMarker
			if a, ok := cfg.Agent(agent); ok {
				marker = a.ArtifactMarker()
			}
			p, err := cmdutil.OpenProject(app)
			if err != nil {
				return err
			}
			defer p.Close()
			artifacts, err := cmdutil.ParseArtifactFlags(p, arts, marker)
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
			if v, c, m := cmdutil.OptInt(cmd, "validated", validated), cmdutil.OptInt(cmd, "corrected", corrected), cmdutil.OptInt(cmd, "missing", missing); v != nil || c != nil || m != nil {
				prop.Retro = &asdd.Retro{Validated: v, Corrected: c, Missing: m}
			}
			if m, err := cmdutil.LoadManifest(app.Context(cmd), app); err == nil {
				if s := m.Slice(slice); s != nil {
					if prop.Observed, err = p.Observe(s.Artifacts()); err != nil {
						return err
					}
				}
			}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, prop)
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, slice)
			return cmdutil.Finish(app, r, nil)
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
