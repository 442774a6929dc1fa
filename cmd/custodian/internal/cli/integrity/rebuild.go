package integrity

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/reconcile"
	"github.com/custodian-dev/custodian/wire"
)

// The ASDD state files, relative to the project root (store/file's names).
var (
	manifestFile = asdd.Key
	JournalFile  = path.Join(path.Dir(asdd.Key), "journal.ndjson")
)

// RebuildResult is what `custodian rebuild --json` prints: the
// application layer's answer.
type RebuildResult = wire.RebuildResponse

// RebuiltSlice is one slice a scan reconstructed.
type RebuiltSlice = wire.RebuiltSlice

// RebuildOptions is what `custodian rebuild` was asked to do.
type RebuildOptions struct {
	App   *cmdutil.App
	Force bool // scan the files even though the manifest or its journal is readable
}

// NewRebuildCmd returns `custodian rebuild`; it parses the command line
// into RebuildOptions and calls runF with them (runRebuild when runF is nil).
func NewRebuildCmd(app *cmdutil.App, runF func(context.Context, *RebuildOptions) error) *cobra.Command {
	opts := &RebuildOptions{App: app}
	cmd := &cobra.Command{
		Use:   "rebuild [--force]",
		Short: "Rebuild a lost or corrupt ASDD manifest: from its journal if intact, else from the files",
		Long: `Recover .asdd/state/manifest.json (seed 000, manifest recovery after system
failure). An intact journal is always preferred: the manifest is replayed
from it and nothing is guessed. When the manifest and its journal are
missing or corrupt, the files are scanned instead: one slice per directory
under .asdd/specs/, its phase from which phase artifacts exist (intent,
requirements, domain model, design, tasks) and from the reasoning traces in
.asdd/traces/<slice>-<agent>.md, its times from the files, the hashes of what
is there now. Every guessed field is marked NEEDS_HUMAN_REVIEW, and propose
refuses to run the pipeline until ` + "`custodian review SLICE --role ROLE`" + ` clears it.

Old files are never deleted: they are renamed <name>.before-rebuild-<time>.
--force scans even when the manifest is readable (keeping it aside too).
While a daemon serves the project the rebuild runs in it; moving files aside
(--force, a manifest that cannot be recovered) needs the daemon stopped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Run(app, cmd, opts, runF, runRebuild)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "scan the files even though the manifest or its journal is readable")
	return cmd
}

// runRebuild asks the application layer (the daemon's while one runs) to
// rebuild the manifest, and prints what it did.
func runRebuild(ctx context.Context, opts *RebuildOptions) error {
	app := opts.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	prog := cmdutil.NewProgress(app, "scanning")
	res, err := svc.Rebuild(appl.WithProgress(ctx, prog.Update), wire.RebuildRequest{Force: opts.Force, Actor: cmdutil.Actor("")})
	prog.Done()
	if err != nil {
		return err
	}
	return app.Render(res, func(w io.Writer) error { return printRebuild(w, res) })
}

func printRebuild(w io.Writer, res *RebuildResult) error {
	fmt.Fprintf(w, "%s\n", res.Why)
	for _, a := range res.KeptAside {
		fmt.Fprintf(w, "kept aside: %s\n", a)
	}
	if res.Action == "journal" {
		_, err := fmt.Fprintf(w, "%s restored at revision %d\n", asdd.Key, res.Revision)
		return err
	}
	tw := cmdutil.NewTable(w)
	fmt.Fprintln(tw, "SLICE\tSTATUS\tARTIFACTS\tTRACES\tNEEDS_HUMAN_REVIEW")
	for _, s := range res.Slices {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", s.ID, s.Status, s.Artifacts, s.Traces, strings.Join(s.Guessed, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, wmsg := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wmsg)
	}
	_, err := fmt.Fprintf(w, "rebuilt %s at revision %d: %d %s; guessed fields are marked %s and propose refuses until `custodian review SLICE --role ROLE` (and `--project`) clears them\n",
		asdd.Key, res.Revision, len(res.Slices), cmdutil.IntegrityPlural(len(res.Slices), "slice", "slices"), asdd.NeedsHumanReview)
	return err
}

// ReviewResult is what `custodian review --json` prints.
type ReviewResult struct {
	*cmdutil.CommitResult
	Accepted map[string]string `json:"accepted_hashes,omitempty"`
}

// ReviewOptions is what `custodian review` was asked to do.
type ReviewOptions struct {
	App       *cmdutil.App
	Slice     string // "" with Project
	Project   bool   // review the project context
	Role      string // the reviewing role
	By        string // the person
	Rationale string
}

// NewReviewCmd returns `custodian review`; it parses the command line
// into ReviewOptions and calls runF with them (runReview when runF is nil).
func NewReviewCmd(app *cmdutil.App, runF func(context.Context, *ReviewOptions) error) *cobra.Command {
	opts := &ReviewOptions{App: app}
	cmd := &cobra.Command{
		Use:   "review SLICE --role ROLE [--by PERSON] [--rationale TEXT] | review --project --role ROLE",
		Short: "Clear a slice's NEEDS_HUMAN_REVIEW marks after checking what a rebuild guessed",
		Long: `A named role confirms the state a rebuild reconstructed for a slice (or,
with --project, the project context): the NEEDS_HUMAN_REVIEW marks are
cleared and the hashes of the slice's artifacts as they are now are
recorded as accepted. Until every mark is cleared, propose refuses to run
the pipeline. As in resolve and approve, --role is the role that signs off
and --by the person (default $CUSTODIAN_ACTOR or the OS user).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if opts.Project && len(args) != 0 || !opts.Project && len(args) != 1 {
				return reason.Usage("give one SLICE, or --project")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Slice = args[0]
			}
			if opts.Role == "" && opts.By != "" {
				return reason.Usage("review needs --role ROLE (the reviewing role: TL, PO, Security…); --by names the person, as in resolve and approve")
			}
			if err := cmdutil.Required("role", opts.Role); err != nil {
				return err
			}
			return cmdutil.Run(app, cmd, opts, runF, runReview)
		},
	}
	cmd.Flags().StringVar(&opts.Role, "role", "", "the reviewing role (TL, PO, Security…)")
	cmd.Flags().StringVar(&opts.By, "by", "", "the person (default $CUSTODIAN_ACTOR or the OS user)")
	cmd.Flags().StringVar(&opts.Rationale, "rationale", "", "what was checked")
	cmd.Flags().BoolVar(&opts.Project, "project", false, "review the project context instead of a slice")
	return cmd
}

// runReview clears the marks, recording the slice's artifacts as they are now as accepted.
func runReview(ctx context.Context, opts *ReviewOptions) error {
	app := opts.App
	by, rationale := opts.By, opts.Rationale
	if by == "" {
		by = cmdutil.Actor("")
	}
	if rationale == "" {
		rationale = "fields a rebuild guessed were checked by " + opts.Role
	}
	op := asdd.ClearReview{Role: opts.Role, By: by, Rationale: rationale}
	res := &ReviewResult{}
	var warnings []string
	if !opts.Project {
		m, err := cmdutil.LoadManifest(ctx, app)
		if err != nil {
			return err
		}
		s, err := m.Find(opts.Slice)
		if err != nil {
			return err
		}
		op.Slice = s.SliceID
		// What the files hold now, as this command sees them (the
		// custodian hashes them itself for the commit), and what is missing.
		hashes, w, err := currentHashes(ctx, app, s)
		if err != nil {
			return err
		}
		res.Accepted, warnings = hashes, w
	}
	_, r, err := cmdutil.ApplyOp(ctx, app, op)
	if err != nil {
		return err
	}
	r.Warnings = append(warnings, r.Warnings...)
	res.CommitResult = r
	if err := app.Render(res, func(w io.Writer) error {
		for _, wmsg := range r.Warnings {
			fmt.Fprintf(w, "warning: %s\n", wmsg)
		}
		_, err := fmt.Fprintf(w, "revision %d: %s\n", r.Revision, r.Summary)
		return err
	}); err != nil {
		return err
	}
	return nil
}

// currentHashes hashes the slice's artifacts as they are now; problems are
// returned as warnings.
func currentHashes(ctx context.Context, app *cmdutil.App, s *asdd.Slice) (map[string]string, []string, error) {
	rootDir, err := app.Root()
	if err != nil {
		return nil, nil, err
	}
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, nil, fmt.Errorf("open project: %w", err)
	}
	defer root.Close()
	arts := sliceArtifacts(s)
	for i := range arts {
		arts[i].Hash = "" // accept what is there; report only what is missing or outside
	}
	rep, err := reconcile.Check(ctx, root, arts, reconcile.Options{Now: app.Now})
	if err != nil {
		return nil, nil, err
	}
	hashes := map[string]string{}
	for _, a := range arts {
		if h, ok := rep.Current(a.Path); ok {
			hashes[a.Path] = h
		}
	}
	var warnings []string
	for _, f := range rep.Findings {
		warnings = append(warnings, fmt.Sprintf("%s: %s", f.Code, f.Message))
	}
	return hashes, warnings, nil
}
