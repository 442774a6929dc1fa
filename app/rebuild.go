package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gofrs/flock"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/pidfile"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/reconcile"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// PidFile is the daemon's lock file (package pidfile): held for as long as
// a daemon serves the project.
const PidFile = pidfile.Default

// journalLister is a store that keeps a document's journal in files (the
// file store): the files a rebuild must keep aside with the document.
type journalLister interface {
	JournalFiles(key string) ([]string, error)
}

// historyRestarter is a store that remembers a document's history outside
// its files (store/file's witness): a rebuild, which starts a new history,
// tells it so.
type historyRestarter interface {
	StartAnew(key string) error
}

// startAnew tells the store, if it is one that remembers, that key's
// history starts again with the rebuild's commit.
func (l *Local) startAnew(key string) error {
	if r, ok := l.o.Store.(historyRestarter); ok {
		return r.StartAnew(key)
	}
	return nil
}

type progressKey struct{}

// WithProgress returns ctx asking a rebuild's scan to report its progress
// (files read of the total) to f; only a Local service calls it.
func WithProgress(ctx context.Context, f func(done, total int)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

func progressOf(ctx context.Context) func(done, total int) {
	f, _ := ctx.Value(progressKey{}).(func(done, total int))
	return f
}

// Rebuild recovers the ASDD manifest (seed 000, manifest recovery after
// system failure), a human decision. An intact journal is always
// preferred: the store replays it and nothing is guessed. When the
// manifest and its journal are missing or cannot be recovered (or
// req.Force), the project's files are scanned instead and every guessed
// field is marked NEEDS_HUMAN_REVIEW. Old files are never deleted: they are
// renamed <name>.before-rebuild-<time>, which a running daemon refuses
// (CONFLICT): it holds them.
func (l *Local) Rebuild(ctx context.Context, req wire.RebuildRequest) (*wire.RebuildResponse, error) {
	if CallerOf(ctx) == Agent {
		return nil, errHuman("a rebuild")
	}
	if !l.hasRoot() {
		return nil, reason.New(reason.InvalidInput, "rebuild scans the project's files: the service has no project root")
	}
	actor := req.Actor
	if actor == "" {
		actor = "custodian"
	}
	res := &wire.RebuildResponse{KeptAside: []string{}, Slices: []wire.RebuiltSlice{}, Warnings: []string{}}
	before := fileState(l.o.Root, asdd.Key)
	// A daemon (this one, or one this service bypasses) holds the
	// manifest and writes its snapshot behind its journal: then the file
	// on disk says nothing of the state.
	held := daemonServes(l.o.Root)
	setAside := true
	doc, gerr := l.o.Store.Get(ctx, asdd.Key)
	switch code := reason.CodeOf(gerr); {
	case gerr == nil && doc.Exists():
		raw, derr := doc.Bytes()
		if derr == nil {
			_, derr = asdd.Decode(raw)
		}
		switch {
		case req.Force:
			res.Why = fmt.Sprintf("--force: the manifest at revision %d is kept aside and rebuilt from the files", doc.Revision)
		case derr != nil:
			return nil, reason.New(reason.CorruptState, "%s does not match its schema although its journal is intact (%v): roll back to a good revision (`custodian history %s`, `custodian rollback %s --to REV --reason TEXT`) or scan the files with `custodian rebuild --force`", asdd.Key, derr, asdd.Key, asdd.Key)
		case before != "present" && !held:
			res.Action, res.Revision = "journal", doc.Revision
			res.Why = fmt.Sprintf("the manifest was %s; its journal is intact, so it was replayed to revision %d and nothing had to be guessed", before, doc.Revision)
			return res, nil
		default:
			return nil, reason.New(reason.InvalidTransition, "%s is intact at revision %d: nothing to rebuild (--force rebuilds from the files anyway, keeping it aside)", asdd.Key, doc.Revision)
		}
	case code == reason.NotFound || (gerr == nil && !doc.Exists()):
		res.Why = fmt.Sprintf("the manifest is %s and there is no journal: rebuilt from the files", before)
		// Nothing to keep aside unless some of its files are there (an
		// anchor left beside a lost journal, a temporary file).
		setAside = l.manifestFilesLeft()
	case code == reason.CorruptState && before != "present" && !l.journalLeft():
		// Gone whole after it was committed here (the store's witness
		// remembers it): the rebuild is the human's answer.
		res.Why = fmt.Sprintf("the manifest is %s and there is no journal: rebuilt from the files", before)
	case code == reason.CorruptState:
		res.Why = fmt.Sprintf("the state cannot be recovered from its journal (%s): rebuilt from the files", messageOf(gerr))
	default:
		return nil, gerr
	}
	if setAside {
		aside, err := l.keepManifestAside(ctx)
		if err != nil {
			return nil, err
		}
		res.KeptAside = aside
	}

	cfg, err := l.o.Config()
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(l.o.Root)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	defer root.Close()
	scan, err := reconcile.Scan(ctx, root, reconcile.ScanOptions{
		Stages: stagesOf(cfg), Lifecycle: asdd.Lifecycle, Markers: markersOf(cfg), Progress: progressOf(ctx),
	})
	if err != nil {
		return nil, err
	}
	res.Action = "scan"
	res.Warnings = append(res.Warnings, scan.Warnings...)

	if err := l.startAnew(asdd.Key); err != nil {
		return nil, err
	}
	m := l.manifestFromScan(scan)
	for _, bad := range asdd.Invariants(m, cfg) {
		res.Warnings = append(res.Warnings, "rebuilt state breaks a rule invariant (review it): "+bad)
	}
	r, err := l.o.Store.Update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
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
		return store.Change{Value: raw, Actor: actor, Reason: fmt.Sprintf("rebuild from the filesystem: %d slices, guessed fields marked %s", len(m.Slices), asdd.NeedsHumanReview),
			Events: []store.Event{{Type: "rebuilt", Data: data}}}, nil
	}, store.Create())
	if err != nil {
		return nil, err
	}
	l.forgetManifest()
	res.Revision = r.Revision
	for i, s := range scan.Slices {
		ms := m.Slices[i]
		res.Slices = append(res.Slices, wire.RebuiltSlice{ID: ms.SliceID, Status: ms.Status, Artifacts: len(ms.PhaseData), Traces: len(ms.ReasoningTraces),
			Guessed: ms.NeedsHumanReview, Evidence: s.Evidence})
	}
	return res, nil
}

// keepManifestAside renames the manifest, its temporary file and every file
// of its journal to <name>.before-rebuild-<time>, under the document's lock
// and only while no daemon serves the project (a daemon holds them in
// memory: it would write them back).
func (l *Local) keepManifestAside(ctx context.Context) ([]string, error) {
	jl, ok := l.o.Store.(journalLister)
	if !ok {
		return nil, reason.New(reason.InvalidInput, "rebuild from the files keeps the manifest's files aside: the store (%T) does not keep them in the project", l.o.Store)
	}
	unlockDaemon, err := tryLock(l.o.Root, PidFile, "a custodian daemon serves this project and holds the manifest: stop it before rebuilding from the files")
	if err != nil {
		return nil, err
	}
	defer unlockDaemon()
	root, err := os.OpenRoot(l.o.Root)
	if err != nil {
		return nil, fmt.Errorf("open project: %w", err)
	}
	defer root.Close()
	unlockDoc, err := tryLock(l.o.Root, path.Join(path.Dir(asdd.Key), ".lock"), "another custodian process is committing to the manifest: try again")
	if err != nil {
		return nil, err
	}
	defer unlockDoc()
	// The journal may have been rotated into segments: they all go aside
	// (listed now that no commit can seal another), or the store would
	// replay them.
	journals, err := jl.JournalFiles(asdd.Key)
	if err != nil {
		return nil, err
	}
	stamp := l.o.Now().UTC().Format("20060102T150405Z")
	aside := []string{}
	for _, f := range append([]string{asdd.Key, asdd.Key + ".tmp"}, journals...) {
		if _, err := root.Lstat(f); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		to := f + ".before-rebuild-" + stamp
		if err := root.Rename(f, to); err != nil {
			return aside, fmt.Errorf("keep %s aside: %w", f, err)
		}
		aside = append(aside, to)
	}
	return aside, nil
}

// manifestFilesLeft reports whether any file of the manifest (snapshot,
// temporary file, journal, anchor, marks) is in the project.
func (l *Local) manifestFilesLeft() bool {
	files := []string{asdd.Key, asdd.Key + ".tmp"}
	if jl, ok := l.o.Store.(journalLister); ok {
		js, err := jl.JournalFiles(asdd.Key)
		if err != nil {
			return true
		}
		files = append(files, js...)
	}
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(l.o.Root, filepath.FromSlash(f))); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// journalLeft reports whether any file of the manifest's journal proper
// (not its anchor or marks) is in the project.
func (l *Local) journalLeft() bool {
	jl, ok := l.o.Store.(journalLister)
	if !ok {
		return true
	}
	files, err := jl.JournalFiles(asdd.Key)
	if err != nil {
		return true
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".ndjson") {
			if _, err := os.Lstat(filepath.Join(l.o.Root, filepath.FromSlash(f))); err == nil {
				return true
			}
		}
	}
	return false
}

// daemonServes reports whether a daemon holds the project's pid file.
func daemonServes(rootDir string) bool {
	r, err := os.OpenRoot(rootDir)
	if err != nil {
		return false
	}
	defer r.Close()
	_, _, held := pidfile.Holder(r, PidFile)
	return held
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

// tryLock takes the flock(2) lock file rel without waiting; held by someone
// else (another process, or this daemon's store), it refuses with CONFLICT
// and the given sentence. The returned function releases it.
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
func (l *Local) manifestFromScan(scan *reconcile.ScanResult) *asdd.Manifest {
	m := asdd.New()
	// Sprint and goals are nowhere in the files.
	m.ProjectContext.NeedsHumanReview = []string{"current_sprint", "product_goals"}
	now := l.o.Now()
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
			ms.CreatedAt, ms.UpdatedAt = asdd.Timestamp(now), asdd.Timestamp(now)
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

// Rebuild asks the daemon to rebuild the manifest.
func (r *Remote) Rebuild(ctx context.Context, req wire.RebuildRequest) (*wire.RebuildResponse, error) {
	return r.c.Rebuild(ctx, req)
}

// forgetManifest drops the manifest the service holds: a rebuilt manifest
// starts its revisions again, so a held one could pass for a later
// revision of it (heldManifest assumes a revision names one value).
func (l *Local) forgetManifest() {
	l.held.Store(nil)
	l.recent.Store(nil)
}
