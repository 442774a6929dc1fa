package propose

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// Options is what `custodian propose` was asked to do.
type Options struct {
	App           *cmdutil.App
	Agent         string
	Slice         string
	Score         float64
	Artifacts     []string // NAME=PATH, PATH relative to the current directory
	Uncertainty   []string // uncertainty factors
	Trace         string   // the reasoning trace file
	Assumptions   []string // initial assumptions (assumptions-first discovery)
	To            string   // the status asked for, upper case ("": the next phase)
	BaseRevision  uint64   // the manifest revision the agent read
	FeatureBranch string
	// Retro is the retro-spec counts; nil when none was given.
	Retro *asdd.Retro
}

// NewCmd returns `custodian propose`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	var score string
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
			if err := cmdutil.RequiredFlags(cmd, "agent", "slice"); err != nil {
				return err
			}
			sc, err := cmdutil.ParseScore(score)
			if err != nil {
				return err
			}
			opts.Score = sc
			if v, c, m := cmdutil.OptInt(cmd, "validated", validated), cmdutil.OptInt(cmd, "corrected", corrected), cmdutil.OptInt(cmd, "missing", missing); v != nil || c != nil || m != nil {
				opts.Retro = &asdd.Retro{Validated: v, Corrected: c, Missing: m}
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Agent, "agent", "", "the proposing agent (discovery, spec, validation, …)")
	f.StringVar(&opts.Slice, "slice", "", "the slice id")
	f.StringVar(&score, "score", "", "the agent's confidence score in [0, 1]")
	f.StringArrayVar(&opts.Artifacts, "artifact", nil, "an artifact as NAME=PATH, PATH relative to the current directory as in git (repeatable)")
	f.StringArrayVar(&opts.Uncertainty, "uncertainty", nil, "an uncertainty factor (repeatable; required below 0.95)")
	f.StringVar(&opts.Trace, "trace", "", "the reasoning trace file (relative to the current directory)")
	f.StringArrayVar(&opts.Assumptions, "assumption", nil, "an initial assumption for PO/TL to correct if wrong (assumptions-first discovery; repeatable)")
	f.StringVar(&opts.To, "to", "", "the status asked for (PARTIAL from validation, DONE for a quick fix; default: the next phase)")
	f.Uint64Var(&opts.BaseRevision, "base-revision", 0, "the manifest revision the agent read before it ran (concurrent changes since are merged or escalated)")
	f.StringVar(&opts.FeatureBranch, "feature-branch", "", "the git branch holding the agent's work (recorded in the block record if the proposal halts below the minimum of an agent whose below_action is feature_branch)")
	f.IntVar(&validated, "validated", 0, "retro-spec: requirements validated")
	f.IntVar(&corrected, "corrected", 0, "retro-spec: requirements corrected")
	f.IntVar(&missing, "missing", 0, "retro-spec: requirements missing")
	return cmd
}

// run proposes the agent's result. It names the artifacts and the trace;
// the application layer hashes them (marked as the agent's config says)
// and observes the slice's files itself, whatever door the proposal came
// through.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	artifacts, err := cmdutil.ParseArtifactFlags(app, opts.Artifacts)
	if err != nil {
		return err
	}
	prop := asdd.Proposal{Agent: opts.Agent, Slice: opts.Slice, Score: opts.Score, Artifacts: artifacts, Uncertainty: opts.Uncertainty,
		To: opts.To, BaseRevision: opts.BaseRevision, Assumptions: opts.Assumptions, FeatureBranch: opts.FeatureBranch, Retro: opts.Retro}
	if opts.Trace != "" {
		trace, err := app.ProjectPath(opts.Trace)
		if err != nil {
			return err
		}
		prop.Trace = asdd.TraceFile(trace)
	}
	return cmdutil.Apply(ctx, app, prop)
}
