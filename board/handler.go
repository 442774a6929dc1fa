package board

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/reconcile"
	"github.com/custodian-dev/custodian/store"
)

//go:embed assets
var assets embed.FS

// Assets are the dashboard's static files (index.html, app.js, style.css).
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the directory is embedded: cannot happen
	}
	return sub
}

// Options configure the dashboard handler.
type Options struct {
	// Store holds the documents the dashboard shows.
	Store store.Store
	// Root is the project root, for the drift marks (artifact hashes on
	// disk) and the escalation notices; "" shows neither.
	Root string
	// Config loads .asdd/config.yaml; nil: the defaults.
	Config func() (*asdd.Config, error)
	// Now is the clock of heartbeat ages and time in phase; time.Now by
	// default.
	Now func() time.Time
	// DriftEvery bounds how often the artifacts are hashed again for the
	// drift marks while the manifest does not change; 5 s by default.
	DriftEvery time.Duration
	// DriftMinInterval is the least time between two hashings even when
	// the manifest changes (a burst of commits hashes once); 1 s by
	// default. The page fetches the board again after a burst.
	DriftMinInterval time.Duration
}

// Handler serves the dashboard: the page and its assets at / and /assets/,
// and the read-only JSON it draws from at /board.json (View), /plan.json
// (the impl plan and the cycles), /notice?slice=ID (an escalation
// notice's text) and /hashes?slice=ID (its artifacts' hashes on disk). Everything live comes from the daemon's /v1/watch stream;
// actions go to the daemon's POST /v1/asdd/{op} with the admin token.
func Handler(o Options) http.Handler {
	if o.Config == nil {
		o.Config = func() (*asdd.Config, error) { return asdd.DefaultConfig(), nil }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.DriftEvery <= 0 {
		o.DriftEvery = 5 * time.Second
	}
	if o.DriftMinInterval <= 0 {
		o.DriftMinInterval = time.Second
	}
	o.DriftMinInterval = min(o.DriftMinInterval, o.DriftEvery)
	h := &handler{o: o}
	mux := http.NewServeMux()
	static := http.FileServerFS(Assets())
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'")
		http.ServeFileFS(w, r, Assets(), "index.html")
	})
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", noCache(static)))
	mux.HandleFunc("GET /board.json", h.board)
	mux.HandleFunc("GET /plan.json", h.plan)
	mux.HandleFunc("GET /notice", h.notice)
	mux.HandleFunc("GET /hashes", h.hashes)
	return mux
}

func noCache(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

type handler struct {
	o Options

	mu         sync.Mutex
	driftRev   uint64
	driftAt    time.Time
	driftMarks map[string][]DriftMark
}

func (h *handler) manifest(ctx context.Context) (*asdd.Manifest, error) {
	doc, err := h.o.Store.Get(ctx, asdd.Key)
	if err != nil {
		return nil, err
	}
	raw, err := doc.Bytes()
	if err != nil {
		return nil, err
	}
	m, err := asdd.Decode(raw)
	if err != nil {
		return nil, reason.New(reason.CorruptState, "%s does not match its schema: %w", asdd.Key, err)
	}
	m.Revision = doc.Revision
	return m, nil
}

func (h *handler) board(w http.ResponseWriter, r *http.Request) {
	m, err := h.manifest(r.Context())
	if reason.CodeOf(err) == reason.NotFound {
		m, err = &asdd.Manifest{}, nil // an empty board until `custodian init`
	}
	if err != nil {
		writeError(w, err)
		return
	}
	cfg, err := h.o.Config()
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, NewView(m, cfg, h.o.Now(), h.drift(r.Context(), m)))
}

// drift returns the drift marks of m's artifacts: hashed again when the
// revision changed (at most every DriftMinInterval), else every DriftEvery.
func (h *handler) drift(ctx context.Context, m *asdd.Manifest) map[string][]DriftMark {
	if h.o.Root == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if age := now.Sub(h.driftAt); h.driftMarks != nil && (age < h.o.DriftMinInterval || h.driftRev == m.Revision && age < h.o.DriftEvery) {
		return h.driftMarks
	}
	root, err := os.OpenRoot(h.o.Root)
	if err != nil {
		return nil
	}
	defer root.Close()
	var arts []reconcile.Artifact
	for _, s := range m.Slices {
		arts = append(arts, Artifacts(s)...)
	}
	rep, err := reconcile.Check(ctx, root, arts, reconcile.Options{NoCache: true})
	if err != nil {
		return nil
	}
	marks := map[string][]DriftMark{}
	for _, f := range rep.Findings {
		marks[f.Slice] = append(marks[f.Slice], DriftMark{Path: f.Path, Code: string(f.Code), Message: f.Message})
	}
	h.driftRev, h.driftAt, h.driftMarks = m.Revision, now, marks
	return marks
}

// Artifacts lists the files a slice names (phase data, reasoning traces,
// halted drafts) with the hashes recorded for them, as reconcile checks
// them.
func Artifacts(s *asdd.Slice) []reconcile.Artifact {
	var out []reconcile.Artifact
	seen := map[string]bool{}
	add := func(name, p string) {
		if p == "" || p == asdd.NeedsHumanReview || seen[p] {
			return
		}
		seen[p] = true
		out = append(out, reconcile.Artifact{Slice: s.SliceID, SliceStatus: s.Status, Name: name, Path: p, Hash: s.ArtifactHashes[p]})
	}
	for _, name := range sortedKeys(s.PhaseData) {
		add(name, s.PhaseData[name])
	}
	for _, p := range s.ReasoningTraces {
		add("trace", p)
	}
	for _, name := range sortedKeys(s.HaltedArtifacts) {
		add(name+" (halted draft)", s.HaltedArtifacts[name])
	}
	return out
}

// PlanResponse is GET /plan.json.
type PlanResponse struct {
	Plan   *Plan   `json:"plan"` // null when there is no .impl/manifest.json
	Cycles []Cycle `json:"cycles"`
	// Errors names documents that could not be read.
	Errors []string `json:"errors,omitempty"`
}

func (h *handler) plan(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	resp := PlanResponse{Cycles: []Cycle{}}
	if doc, err := h.o.Store.Get(ctx, impl.Key); err == nil {
		if m, err := impl.Decode(doc.Value); err == nil {
			p := NewPlan(m)
			resp.Plan = &p
		} else {
			resp.Errors = append(resp.Errors, impl.Key+": "+err.Error())
		}
	} else if reason.CodeOf(err) != reason.NotFound {
		resp.Errors = append(resp.Errors, impl.Key+": "+err.Error())
	}
	keys, err := h.o.Store.Keys(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	for _, k := range keys {
		if _, ok := cycle.IDFromKey(k); !ok {
			continue
		}
		doc, err := h.o.Store.Get(ctx, k)
		if err != nil {
			resp.Errors = append(resp.Errors, k+": "+err.Error())
			continue
		}
		st, err := cycle.Decode(doc.Value)
		if err != nil {
			resp.Errors = append(resp.Errors, k+": "+err.Error())
			continue
		}
		resp.Cycles = append(resp.Cycles, NewCycle(st))
	}
	SortCycles(resp.Cycles)
	writeJSON(w, resp)
}

// hashes serves the current hashes of a slice's artifacts on disk
// (?slice=ID), as {"hashes": {path: "sha256:…"}}: the dashboard sends them
// with a resolution, approval or review, as the CLI does, so the files as
// the human saw them are what is accepted (missing files are left out).
func (h *handler) hashes(w http.ResponseWriter, r *http.Request) {
	m, err := h.manifest(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	s, err := m.Find(r.URL.Query().Get("slice"))
	if err != nil {
		writeError(w, err)
		return
	}
	out := map[string]string{}
	if h.o.Root != "" {
		p, err := effects.Open(h.o.Root)
		if err != nil {
			writeError(w, err)
			return
		}
		defer p.Close()
		obs, err := p.Observe(s.Artifacts())
		if err != nil {
			writeError(w, err)
			return
		}
		for k, v := range obs {
			if v != "" {
				out[k] = v
			}
		}
	}
	writeJSON(w, map[string]any{"hashes": out})
}

// maxNotice caps the notice text served.
const maxNotice = 256 << 10

// notice serves the text of a slice's escalation notice (?slice=ID, and
// optionally &id=ESCALATION; the open one by default), read through an
// os.Root so no manifest path can reach outside the project.
func (h *handler) notice(w http.ResponseWriter, r *http.Request) {
	if h.o.Root == "" {
		writeError(w, reason.New(reason.NotFound, "the dashboard has no project root to read notices from"))
		return
	}
	m, err := h.manifest(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	s, err := m.Find(r.URL.Query().Get("slice"))
	if err != nil {
		writeError(w, err)
		return
	}
	id := r.URL.Query().Get("id")
	if id == "" {
		id = s.EscalationID
	}
	path := ""
	for _, e := range s.Escalations {
		if e.ID == id {
			path = e.Path
		}
	}
	if path == "" {
		writeError(w, reason.New(reason.NotFound, "slice %s has no escalation %q", s.SliceID, id))
		return
	}
	root, err := os.OpenRoot(h.o.Root)
	if err != nil {
		writeError(w, err)
		return
	}
	defer root.Close()
	// O_NONBLOCK and a regular-file check: a FIFO in its place must not
	// pin a request (and a thread) forever.
	f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		writeError(w, reason.New(reason.NotFound, "escalation notice %s is not on disk", path))
		return
	}
	if err != nil {
		writeError(w, reason.New(reason.InvalidInput, "escalation notice %s: %v", path, err))
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		writeError(w, reason.New(reason.CorruptState, "escalation notice %s is not a regular file", path))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = io.Copy(w, io.LimitReader(f, maxNotice))
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	e, ok := reason.As(err)
	if !ok {
		e = &reason.Error{Code: "INTERNAL", Message: err.Error()}
	}
	status := http.StatusInternalServerError
	switch e.Code {
	case reason.NotFound:
		status = http.StatusNotFound
	case reason.InvalidInput:
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": e})
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
