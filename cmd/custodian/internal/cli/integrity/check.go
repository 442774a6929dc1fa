package integrity

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/board"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/progress"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/reconcile"
)

// The integrity commands (DESIGN.md §4, seed 000's custodial rules and
// seed 001's integrity hook): check, hook, rebuild, review, monitor.

// sliceArtifacts lists what the manifest says about one slice's files, as
// reconcile takes it (the board shows the same list).
func sliceArtifacts(s *asdd.Slice) []reconcile.Artifact { return board.Artifacts(s) }

// CheckReport is what `custodian check --json` prints.
type CheckReport struct {
	Clean    bool         `json:"clean"`
	Revision uint64       `json:"revision"`
	Slices   []CheckSlice `json:"slices"` // the slices with findings, in manifest order
	// Halted lists the slices this check halted for drift.
	Halted   []string            `json:"halted"`
	Stats    CheckStats          `json:"stats"`
	Warnings []string            `json:"warnings,omitempty"`
	Findings []reconcile.Finding `json:"-"`
}

// CheckSlice is one slice's findings.
type CheckSlice struct {
	ID       string              `json:"slice_id"` // "" for the project context
	Status   string              `json:"status,omitempty"`
	Findings []reconcile.Finding `json:"findings"`
}

// CheckStats says how much work the check did.
type CheckStats struct {
	Slices      int   `json:"slices"`
	Artifacts   int   `json:"artifacts"`
	Hashed      int   `json:"hashed"`
	Cached      int   `json:"from_stat_cache"`
	BytesHashed int64 `json:"bytes_hashed"`
	Unrecorded  int   `json:"without_recorded_hash"`
}

// CheckOptions is what `custodian check` was asked to do.
type CheckOptions struct {
	App      *cmdutil.App
	Full     bool // hash every file, ignoring the stat cache
	Halt     bool // halt drifted slices
	ReadOnly bool // write no file (no stat cache, no check cache)
}

// NewCheckCmd returns `custodian check`; it parses the command line into
// CheckOptions and calls runF with them (check when runF is nil).
func NewCheckCmd(app *cmdutil.App, runF func(context.Context, *CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{App: app}
	var noHalt bool
	cmd := &cobra.Command{
		Use:   "check [--full] [--halt | --read-only]",
		Short: "Check that every artifact the manifest names exists and is unchanged (exit 5 on findings)",
		Long: `Check the ASDD manifest against the files (seed 000's custodial rules):

  STATE_INCONSISTENCY  an artifact the manifest names does not exist
  STATE_DRIFT          an artifact's SHA-256 differs from the one recorded when
                       it was committed: it changed without a manifest update
  INVALID_INPUT        an artifact path leads outside the project ("..", an
                       absolute path, a symlink to elsewhere)
  NEEDS_HUMAN_REVIEW   fields a rebuild guessed still await a human review

Findings are listed per slice and the exit code is 5; a clean check exits 0.
In a directory that is no project (no .asdd, .impl, .agents/tmp or
.workflow/.cycle at or above it) check exits 3 (NOT_FOUND): a CI job run in
the wrong directory fails.

check only reports. --halt also halts each drifted slice (BLOCKED, with an
escalation notice and a failure-log row) until the artifact is re-proposed or
a named role approves it. --read-only writes no file at all (no stat cache):
the git pre-commit hook runs it, so a commit never changes the state.
(--no-halt, which check once needed in order only to report, is still
accepted and does nothing.)

Files are hashed in parallel; a file whose size, mtime, ctime and inode are
unchanged since it was last hashed is not read again (the stat cache in
.asdd/state/statcache), unless --full. Install as a git pre-commit hook with
` + "`custodian hook install`" + `; in CI run ` + "`custodian check --full`" + `.`,
		Example: `  custodian check --full          # CI: report, exit 5 on findings
  custodian check --read-only     # the pre-commit hook: report, write nothing
  custodian check --halt          # report, and halt the drifted slices`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Run(app, cmd, opts, runF, check)
		},
	}
	cmd.Flags().BoolVar(&opts.Full, "full", false, "hash every file, ignoring the stat cache")
	cmd.Flags().BoolVar(&opts.Halt, "halt", false, "also halt each drifted slice (BLOCKED, escalation notice, failure-log row)")
	cmd.Flags().BoolVar(&opts.ReadOnly, "read-only", false, "write no file: no stat cache, no halt (what the pre-commit hook runs)")
	cmd.MarkFlagsMutuallyExclusive("halt", "read-only")
	// Hooks and CI scripts written when check halted by default pass
	// --no-halt: accepted, hidden, a no-op.
	cmd.Flags().BoolVar(&noHalt, "no-halt", false, "report only (the default now)")
	_ = cmd.Flags().MarkDeprecated("no-halt", "check only reports unless --halt")
	return cmd
}

// check runs the check and prints its report; findings exit 5.
func check(ctx context.Context, opts *CheckOptions) error {
	app := opts.App
	rep, err := runCheck(ctx, opts)
	if err != nil {
		return err
	}
	if err := app.Render(rep, func(w io.Writer) error { return printCheck(w, rep) }); err != nil {
		return err
	}
	if !rep.Clean {
		return &cmdutil.ExitError{Code: reason.ExitIntegrity}
	}
	return nil
}

// runCheck checks the manifest against the files and halts drifted slices.
func runCheck(ctx context.Context, o *CheckOptions) (*CheckReport, error) {
	app := o.App
	full, halt := o.Full, o.Halt
	app.ReadOnly = o.ReadOnly // before the service opens: no validity mark either
	rootDir, err := app.Root()
	if err != nil {
		return nil, err
	}
	rep := &CheckReport{Slices: []CheckSlice{}, Halted: []string{}}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	defer root.Close()
	in, err := loadCheckInput(ctx, app, root, full, o.ReadOnly)
	if errors.Is(err, appl.ErrNoManifest) {
		// Never initialised, or lost with its journal.
		if _, serr := root.Stat(reconcile.SpecsDir); serr == nil {
			f := reconcile.Finding{Code: reason.StateInconsistency, Path: asdd.Key,
				Message: fmt.Sprintf("%s and its journal are missing but %s holds specs: run `custodian rebuild`", asdd.Key, reconcile.SpecsDir)}
			rep.Slices = append(rep.Slices, CheckSlice{Findings: []reconcile.Finding{f}})
			rep.Findings = append(rep.Findings, f)
			return rep, nil
		}
		// No project here at all: a CI job pointed at the wrong
		// directory must fail, not pass having checked nothing.
		if err := app.RequireProject(); err != nil {
			return nil, err
		}
		rep.Clean = true
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no ASDD state under %s: nothing to check", rootDir))
		return rep, nil
	}
	if err != nil {
		return nil, err
	}
	rep.Revision = in.Revision
	rep.Stats.Slices = len(in.Slices)

	bar := progress.Start(app.Err, len(in.Artifacts), "checking artifacts")
	res, err := reconcile.Check(ctx, root, in.Artifacts, reconcile.Options{Full: full, ReadOnly: o.ReadOnly, Now: app.Now, Progress: bar.Add})
	bar.Finish()
	if err != nil {
		return nil, err
	}
	rep.Stats.Artifacts, rep.Stats.Hashed, rep.Stats.Cached = res.Artifacts, res.Hashed, res.Cached
	rep.Stats.BytesHashed, rep.Stats.Unrecorded = res.BytesHashed, res.Unrecorded
	if res.CacheError != "" {
		rep.Warnings = append(rep.Warnings, "stat cache not saved: "+res.CacheError)
	}

	// Review markers are findings too: the pipeline is stopped until a
	// human clears them.
	findings := slices.Clone(res.Findings)
	if len(in.ProjectReview) > 0 {
		findings = append(findings, reconcile.Finding{Code: reason.NeedsReview,
			Message: fmt.Sprintf("project context fields guessed by a rebuild await review (%s): custodian review --project --role ROLE", strings.Join(in.ProjectReview, ", "))})
	}
	for _, s := range in.Slices {
		// Seed 000: "two confidence chain entries for the same agent in
		// the same slice" is an inconsistency.
		for _, a := range s.DuplicateChain {
			findings = append(findings, reconcile.Finding{Code: reason.StateInconsistency, Slice: s.ID,
				Message: fmt.Sprintf("the confidence chain holds two current entries for the %s agent (earlier attempts belong in confidence_chain_history): review the chain, then `custodian approve` or `rollback`", a)})
		}
		if len(s.NeedsReview) > 0 {
			findings = append(findings, reconcile.Finding{Code: reason.NeedsReview, Slice: s.ID,
				Message: fmt.Sprintf("fields guessed by a rebuild await review (%s): custodian review %s --role ROLE", strings.Join(s.NeedsReview, ", "), s.ID)})
		}
	}
	rep.Findings = findings

	bySlice := map[string][]reconcile.Finding{}
	for _, f := range findings {
		bySlice[f.Slice] = append(bySlice[f.Slice], f)
	}
	if fs := bySlice[""]; len(fs) > 0 {
		rep.Slices = append(rep.Slices, CheckSlice{Findings: fs})
	}
	for _, s := range in.Slices {
		if fs := bySlice[s.ID]; len(fs) > 0 {
			rep.Slices = append(rep.Slices, CheckSlice{ID: s.ID, Status: s.Status, Findings: fs})
		}
	}
	rep.Clean = len(findings) == 0

	if halt {
		haltDrift(ctx, app, rep)
	}
	return rep, nil
}

// haltDrift halts every slice with drifted artifacts (seed 000: "flags a
// STATE_DRIFT warning and halts the pipeline for the affected slice"),
// through asdd.FlagDrift inside a store update. Slices already halted stay
// as they are.
func haltDrift(ctx context.Context, app *cmdutil.App, rep *CheckReport) {
	for i := range rep.Slices {
		cs := &rep.Slices[i]
		if cs.ID == "" || cs.Status == asdd.Blocked {
			continue
		}
		paths := map[string]string{}
		for _, f := range cs.Findings {
			if f.Code == reason.StateDrift {
				paths[f.Path] = f.Actual
			}
		}
		if len(paths) == 0 {
			continue
		}
		_, r, err := cmdutil.ApplyOp(ctx, app, asdd.FlagDrift{Slice: cs.ID, Paths: paths})
		if err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("could not halt %s: %v", cs.ID, err))
			continue
		}
		rep.Halted = append(rep.Halted, cs.ID)
		rep.Revision = r.Revision
		cs.Status = asdd.Blocked
		rep.Warnings = append(rep.Warnings, r.Warnings...)
	}
}

func printCheck(w io.Writer, rep *CheckReport) error {
	for _, cs := range rep.Slices {
		title := cs.ID
		if title == "" {
			title = "project"
		}
		if cs.Status != "" {
			title += " (" + cs.Status + ")"
		}
		fmt.Fprintln(w, title)
		for _, f := range cs.Findings {
			fmt.Fprintf(w, "  %-19s %s\n", f.Code, f.Message)
		}
	}
	for _, id := range rep.Halted {
		fmt.Fprintf(w, "halted %s: STATE_DRIFT; re-propose the changed artifacts or `custodian approve %s --role ROLE --rationale TEXT`\n", id, id)
	}
	for _, wmsg := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wmsg)
	}
	if rep.Clean {
		_, err := fmt.Fprintf(w, "clean: %d artifacts of %d slices match the manifest\n", rep.Stats.Artifacts, rep.Stats.Slices)
		return err
	}
	n := len(rep.Findings)
	_, err := fmt.Fprintf(w, "%d %s (%d artifacts of %d slices checked)\n", n, cmdutil.IntegrityPlural(n, "finding", "findings"), rep.Stats.Artifacts, rep.Stats.Slices)
	return err
}
