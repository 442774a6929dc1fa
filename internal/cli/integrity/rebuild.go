package integrity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gofrs/flock"
	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/reconcile"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// The ASDD state files, relative to the project root (store/file's names).
var (
	manifestFile = asdd.Key
	JournalFile  = path.Join(path.Dir(asdd.Key), "journal.ndjson")
	tmpFile      = asdd.Key + ".tmp"
)

// RebuildResult is what `custodian rebuild --json` prints.
type RebuildResult struct {
	// Action is "journal" (the store restored the manifest from its intact
	// journal) or "scan" (rebuilt from the files).
	Action    string         `json:"action"`
	Why       string         `json:"why"`
	Revision  uint64         `json:"revision"`
	KeptAside []string       `json:"kept_aside"`
	Slices    []RebuiltSlice `json:"slices"`
	Warnings  []string       `json:"warnings"`
}

// RebuiltSlice is one slice a scan reconstructed.
type RebuiltSlice struct {
	ID        string   `json:"slice_id"`
	Status    string   `json:"status"`
	Artifacts int      `json:"artifacts"`
	Traces    int      `json:"traces"`
	Guessed   []string `json:"needs_human_review"`
	Evidence  []string `json:"evidence"`
}

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
--force scans even when the manifest is readable (keeping it aside too).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF == nil {
				runF = runRebuild
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "scan the files even though the manifest or its journal is readable")
	return cmd
}

// runRebuild rebuilds the manifest and prints what it did.
func runRebuild(ctx context.Context, opts *RebuildOptions) error {
	app := opts.App
	res, err := rebuild(ctx, app, opts.Force)
	if err != nil {
		return err
	}
	return app.Render(res, func(w io.Writer) error { return printRebuild(w, res) })
}

// fileState describes a state file before the store touches it.
func fileState(rootDir, rel string) string {
	b, err := os.ReadFile(filepath.Join(rootDir, filepath.FromSlash(rel)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "missing"
	case err != nil:
		return "unreadable"
	case !json.Valid(b) && strings.HasSuffix(rel, ".json"):
		return "corrupt"
	}
	return "present"
}

func rebuild(ctx context.Context, app *cmdutil.App, force bool) (*RebuildResult, error) {
	rootDir, err := app.Root()
	if err != nil {
		return nil, err
	}
	res := &RebuildResult{KeptAside: []string{}, Slices: []RebuiltSlice{}, Warnings: []string{}}
	before := fileState(rootDir, manifestFile)

	st, err := app.Store()
	if err != nil {
		return nil, err
	}
	doc, gerr := st.Get(ctx, asdd.Key)
	switch code := reason.CodeOf(gerr); {
	case gerr == nil && doc.Exists():
		_, derr := asdd.Decode(doc.Value)
		switch {
		case force:
			res.Why = fmt.Sprintf("--force: the manifest at revision %d is kept aside and rebuilt from the files", doc.Revision)
		case derr != nil:
			return nil, reason.New(reason.CorruptState, "%s does not match its schema although its journal is intact (%v): roll back to a good revision (`custodian history %s`, `custodian rollback %s --to REV --reason TEXT`) or scan the files with `custodian rebuild --force`", asdd.Key, derr, asdd.Key, asdd.Key)
		case before != "present":
			res.Action, res.Revision = "journal", doc.Revision
			res.Why = fmt.Sprintf("the manifest was %s; its journal is intact, so it was replayed to revision %d and nothing had to be guessed", before, doc.Revision)
			return res, nil
		default:
			return nil, reason.New(reason.InvalidTransition, "%s is intact at revision %d: nothing to rebuild (--force rebuilds from the files anyway, keeping it aside)", asdd.Key, doc.Revision)
		}
	case code == reason.NotFound || (gerr == nil && !doc.Exists()):
		res.Why = fmt.Sprintf("the manifest is %s and there is no journal: rebuilt from the files", before)
	case code == reason.CorruptState:
		res.Why = fmt.Sprintf("the state cannot be recovered from its journal (%s): rebuilt from the files", messageOfErr(gerr))
	default:
		return nil, gerr
	}
	// Keep the old files aside; the store must forget what it read. No
	// daemon may serve the project meanwhile, and no commit may be under
	// way while the files move.
	if err := app.Close(); err != nil {
		return nil, err
	}
	unlockDaemon, err := tryLock(rootDir, file.DefaultPidFile, "a custodian daemon serves this project: stop it before rebuilding")
	if err != nil {
		return nil, err
	}
	defer unlockDaemon()
	root, err := os.OpenRoot(rootDir)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	defer root.Close()
	unlockDoc, err := tryLock(rootDir, path.Join(path.Dir(asdd.Key), ".lock"), "another custodian process is committing to the manifest: try again")
	if err != nil {
		return nil, err
	}
	// The journal may have been rotated into segments: they all go aside
	// (listed now that no commit can seal another), or the store would
	// replay them.
	journals, err := file.JournalFilesIn(rootDir, asdd.Key)
	if err != nil {
		unlockDoc()
		return nil, err
	}
	stamp := app.Now().UTC().Format("20060102T150405Z")
	for _, f := range append([]string{manifestFile, tmpFile}, journals...) {
		if _, err := root.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		to := f + ".before-rebuild-" + stamp
		if err := root.Rename(f, to); err != nil {
			unlockDoc()
			return nil, fmt.Errorf("keep %s aside: %w", f, err)
		}
		res.KeptAside = append(res.KeptAside, to)
	}
	unlockDoc()

	cfg, err := cmdutil.ASDDConfig(app)
	if err != nil {
		return nil, err
	}
	prog := cmdutil.NewProgress(app, "scanning")
	scan, err := reconcile.Scan(ctx, root, reconcile.ScanOptions{
		Stages: stagesOf(cfg), Lifecycle: asdd.Lifecycle, Markers: markersOf(cfg), Progress: prog.Update,
	})
	prog.Done()
	if err != nil {
		return nil, err
	}
	res.Action = "scan"
	res.Warnings = append(res.Warnings, scan.Warnings...)

	m := manifestFromScan(scan, app)
	for _, bad := range asdd.Invariants(m, cfg) {
		res.Warnings = append(res.Warnings, "rebuilt state breaks a rule invariant (review it): "+bad)
	}
	st, err = app.Store()
	if err != nil {
		return nil, err
	}
	r, err := st.Update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
		if cur.Exists() {
			return store.Change{}, reason.New(reason.Conflict, "%s was created while the rebuild ran; nothing was rebuilt", asdd.Key)
		}
		next := m.Clone()
		next.Revision = cur.Revision + 1
		raw, err := asdd.Encode(next)
		if err != nil {
			return store.Change{}, err
		}
		data, err := json.Marshal(map[string]any{"slices": len(m.Slices), "kept_aside": res.KeptAside})
		if err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: raw, Actor: "custodian", Reason: fmt.Sprintf("rebuild from the filesystem: %d slices, guessed fields marked %s", len(m.Slices), asdd.NeedsHumanReview),
			Events: []store.Event{{Type: "rebuilt", Data: data}}}, nil
	}, store.Create())
	if err != nil {
		return nil, err
	}
	res.Revision = r.Revision
	for i, s := range scan.Slices {
		ms := m.Slices[i]
		res.Slices = append(res.Slices, RebuiltSlice{ID: ms.SliceID, Status: ms.Status, Artifacts: len(ms.PhaseData), Traces: len(ms.ReasoningTraces),
			Guessed: ms.NeedsHumanReview, Evidence: s.Evidence})
	}
	return res, nil
}

func messageOfErr(err error) string {
	if e, ok := reason.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// stagesOf derives from the configuration what each agent's work tells a
// rebuild: an agent working in phase P whose accepted proposal completes P
// leaves the slice in the next phase; its required artifacts are its
// evidence, and so is its reasoning trace.
func stagesOf(cfg *asdd.Config) []reconcile.Stage {
	var out []reconcile.Stage
	for _, a := range cfg.Agents {
		phase := ""
		for _, p := range a.Phases {
			if asdd.IsPhase(p) {
				phase = p
				break
			}
		}
		if phase == "" {
			continue
		}
		reached := phase
		if a.CompletesPhase(phase) && asdd.Next(phase) != "" {
			reached = asdd.Next(phase)
		}
		if len(a.RequiredArtifacts) == 0 {
			out = append(out, reconcile.Stage{Agent: a.Name, Phase: phase, Reached: reached})
		}
		for _, art := range a.RequiredArtifacts {
			out = append(out, reconcile.Stage{Agent: a.Name, Artifact: art, Phase: phase, Reached: reached})
		}
	}
	return out
}

// markersOf lists the halt markers the configuration's agents use.
func markersOf(cfg *asdd.Config) []string {
	out := []string{asdd.DefaultMarker}
	for i := range cfg.Agents {
		if m := cfg.Agents[i].ArtifactMarker(); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

var badIDChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// manifestFromScan turns the scan into a manifest whose every guess is
// marked NEEDS_HUMAN_REVIEW.
func manifestFromScan(scan *reconcile.ScanResult, app *cmdutil.App) *asdd.Manifest {
	m := asdd.New()
	// Sprint and goals are nowhere in the files.
	m.ProjectContext.NeedsHumanReview = []string{"current_sprint", "product_goals"}
	for _, s := range scan.Slices {
		guessed := slices.Clone(s.Guessed)
		id := badIDChars.ReplaceAllString(s.ID, "-")
		id = strings.TrimLeft(id, ".-_")
		if len(id) > 128 {
			id = id[:128]
		}
		if id == "" {
			id = "SLICE"
		}
		if id != s.ID && !slices.Contains(guessed, "slice_id") {
			guessed = append([]string{"slice_id"}, guessed...)
		}
		for m.Slice(id) != nil {
			id += "-2"
		}
		status := s.Status
		if s.Type == asdd.TypeRetroSpec && (status == asdd.Discovery || status == asdd.Spec) {
			status = asdd.BehaviorCapture
		}
		traces := slices.Clone(s.Traces)
		if traces == nil {
			traces = []string{}
		}
		ms := &asdd.Slice{
			SliceID: id, Name: s.Name, Type: s.Type, Status: status, GovernanceMode: "MANUAL",
			PhaseData: s.PhaseData, ConfidenceChain: []asdd.ChainEntry{}, Blockers: []json.RawMessage{},
			DissentNotices: []json.RawMessage{}, ReasoningTraces: traces, ArtifactHashes: s.Hashes,
			NeedsHumanReview: guessed,
		}
		if !s.Created.IsZero() {
			ms.CreatedAt, ms.UpdatedAt = asdd.Timestamp(s.Created), asdd.Timestamp(s.Updated)
		} else {
			ms.CreatedAt, ms.UpdatedAt = asdd.Timestamp(app.Now()), asdd.Timestamp(app.Now())
		}
		if status == asdd.Blocked {
			ms.BlockedAtPhase, ms.LKGPhase, ms.BlockReason = s.BlockedAtPhase, s.LKGPhase, s.BlockReason
			ms.RollbackTimestamp = ms.UpdatedAt
			ms.NeedsHumanReview = append(ms.NeedsHumanReview, "rollback_timestamp")
		}
		if len(ms.ArtifactHashes) == 0 {
			ms.ArtifactHashes = nil
		}
		m.Slices = append(m.Slices, ms)
	}
	return m
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
			if runF == nil {
				runF = runReview
			}
			return runF(app.Context(cmd), opts)
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
		hashes, w, err := currentHashes(ctx, app, s)
		if err != nil {
			return err
		}
		op.Hashes, res.Accepted, warnings = hashes, hashes, w
	}
	out, r, err := cmdutil.ApplyOp(ctx, app, op)
	if err != nil {
		return err
	}
	if !opts.Project {
		cmdutil.SliceResult(out, r, op.Slice)
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

// tryLock takes the flock(2) lock file rel without waiting; held by someone
// else, it refuses with CONFLICT and the given sentence. The returned
// function releases it.
func tryLock(rootDir, rel, held string) (func(), error) {
	p := filepath.Join(rootDir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", rel, err)
	}
	fl := flock.New(p)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", rel, err)
	}
	if !ok {
		return nil, reason.New(reason.Conflict, "%s (%s is locked)", held, rel)
	}
	return func() { _ = fl.Unlock() }, nil
}
