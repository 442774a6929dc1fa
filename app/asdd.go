package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

var errNoManifest = reason.New(reason.NotFound, "no ASDD manifest at %s: run `custodian init` first", asdd.Key)

// ErrNoManifest is the error of an ASDD read or operation in a project
// with no manifest.
var ErrNoManifest = errNoManifest

func corrupt(err error) error {
	return reason.New(reason.CorruptState, "%s does not match its schema (run `custodian check` or `custodian rebuild`): %w", asdd.Key, err)
}

// Manifest returns the latest committed ASDD manifest.
func (l *Local) Manifest(ctx context.Context) (*asdd.Manifest, error) {
	doc, err := l.o.Store.Get(ctx, asdd.Key)
	if reason.CodeOf(err) == reason.NotFound || (err == nil && !doc.Exists()) {
		return nil, errNoManifest
	}
	if err != nil {
		return nil, err
	}
	h, err := l.model(doc)
	if err != nil {
		return nil, err
	}
	return h.m, nil
}

// ASDD runs op: the caller's right to ask it, the project's observation
// of the files it names, the rules (asdd.Apply) inside a store update (so
// they run again on a concurrent commit), then the file effects.
func (l *Local) ASDD(ctx context.Context, op asdd.Op) (*wire.OpResponse, error) {
	resp, _, err := l.apply(ctx, op, nil, "")
	return resp, err
}

// ApplyASDD is ASDD with the configuration cfg instead of the project's
// (nil: the project's) and the actor prefixed by actorPrefix: the runner's
// way in, which commits under its own heartbeat policy. The full outcome
// (with the manifest) comes back too.
func (l *Local) ApplyASDD(ctx context.Context, op asdd.Op, cfg *asdd.Config, actorPrefix string) (*wire.OpResponse, *asdd.Outcome, error) {
	return l.apply(ctx, op, cfg, actorPrefix)
}

func (l *Local) apply(ctx context.Context, op asdd.Op, cfg *asdd.Config, actorPrefix string) (*wire.OpResponse, *asdd.Outcome, error) {
	if err := checkCaller(ctx, op); err != nil {
		return nil, nil, err
	}
	if cfg == nil {
		c, err := l.o.Config()
		if err != nil {
			return nil, nil, err
		}
		cfg = c
	}
	op, err := l.observe(ctx, op, cfg)
	if err != nil {
		return nil, nil, err
	}
	_, create := op.(asdd.Init)
	var opts []store.UpdateOption
	if create {
		opts = append(opts, store.Create())
	}
	actor := actorPrefix + op.Actor()
	var out *asdd.Outcome
	var decoded *heldManifest // the last run's manifest, when it decoded it
	var next *heldManifest    // the last run's proposal
	read := false             // whether the store found a document to read
	res, err := l.update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
		read = true
		decoded, next = nil, nil
		var prev *heldManifest
		if cur.Exists() {
			h, err := l.model(cur)
			if err != nil {
				return store.Change{}, err
			}
			if h.cfg == nil {
				decoded = h
			}
			prev = h
		} else if !create {
			return store.Change{}, errNoManifest
		}
		apply, from := asdd.Apply, (*asdd.Manifest)(nil)
		if prev != nil {
			from = prev.m
			if prev.cfg == cfg {
				// The previous result of this service under the same
				// rules: only what the operation touches needs
				// finalizing.
				apply = asdd.ApplyFinalized
			}
		}
		o, err := apply(from, op, cfg, l.o.Now())
		if err != nil {
			return store.Change{}, err
		}
		events := make([]store.Event, 0, len(o.Events))
		for _, e := range o.Events {
			data, err := json.Marshal(e) // encoding/json: the journal's form of an event
			if err != nil {
				return store.Change{}, fmt.Errorf("encode event: %w", err)
			}
			events = append(events, store.Event{Type: e.Type, Data: data})
		}
		out = o
		next = &heldManifest{m: o.Manifest, cfg: cfg}
		ch := store.Change{Model: next, Actor: actor, Reason: o.Summary, Events: events}
		ok := false
		if prev != nil {
			// Only what the operation changed is encoded and validated:
			// the patch is the journal's record, the model the value.
			if ch.Patch, ok, err = asdd.Patch(prev.m, o.Manifest); err != nil {
				return store.Change{}, err
			}
		}
		if !ok {
			if ch.Value, err = asdd.Encode(o.Manifest); err != nil {
				return store.Change{}, err
			}
		}
		return ch, nil
	}, opts...)
	if !read && reason.CodeOf(err) == reason.NotFound {
		err = errNoManifest // the store's "no document", in the words of an ASDD project
	}
	if err != nil {
		return nil, nil, err
	}
	if res.Changed {
		l.recent.Store(out.Manifest)
	}
	switch {
	case res.Changed && res.Model == nil:
		// A backend that keeps no model (etcd): this process keeps it.
		l.keep(next, res.Revision)
	case !res.Changed && decoded != nil:
		l.keep(decoded, res.Revision)
	}
	if res.Changed && decoded != nil && res.Value != nil {
		// A process that read the manifest (the CLI without a daemon)
		// marks what it committed valid for the next one: the operation
		// validated what it changed of a manifest that passed.
		l.markValid(res.Value)
	}
	// out.Manifest is shared with the held manifest the next operation
	// starts from: it is never written after the commit (its revision is
	// res.Revision).
	resp := &wire.OpResponse{Revision: res.Revision, Committed: res.Changed, Summary: out.Summary, Events: out.Events, Verdict: out.Verdict}
	_, reported := op.(asdd.ReportFailure) // an agent's report halts the slice
	switch {
	case out.Verdict != nil || reported && res.Changed:
		resp.Outcome = wire.Halted
	case res.Changed:
		resp.Outcome = wire.Accepted
	default:
		resp.Outcome = wire.Unchanged
	}
	if resp.Events == nil {
		resp.Events = []asdd.Event{}
	}
	if id := out.Slice; id != "" {
		resp.Slice = out.Manifest.Slice(id)
	}
	for _, e := range out.Effects {
		resp.Effects = append(resp.Effects, wire.EffectSummary{Kind: e.Kind, Path: e.Path})
	}
	if effs := asdd.CommitEffects(out); len(effs) > 0 && l.hasRoot() {
		if err := l.applyEffects(effs); err != nil {
			// The commit stands; the effects are derived again by the next
			// operation on the slice (asdd.AllEffects).
			resp.Warnings = append(resp.Warnings, l.warn(res.Revision, err))
		}
	}
	return resp, out, nil
}

func (l *Local) applyEffects(effs []asdd.Effect) error {
	p, err := l.project()
	if err != nil {
		return err
	}
	l.fx.Lock()
	defer l.fx.Unlock()
	return p.Apply(effs)
}

// observe fills in what the custodian sees for itself, whatever the caller
// sent (asdd.Observing): the hashes of the artifacts an operation names
// (and what they will be once marked, should it halt), the hashes of the
// slice's files on disk (drift), and the versions a human accepts by
// resolving or approving.
func (l *Local) observe(ctx context.Context, op asdd.Op, cfg *asdd.Config) (asdd.Op, error) {
	o, ok := op.(asdd.Observing)
	if !ok {
		return op, nil
	}
	if !l.hasRoot() {
		return nil, reason.New(reason.InvalidInput, "this custodian has no project directory to read artifacts from")
	}
	proj, err := l.project()
	if err != nil {
		return nil, err
	}
	return o.Observe(observer{ctx: ctx, l: l, proj: proj}, cfg)
}

// observer is what Local sees of the project for an operation
// (asdd.Observer).
type observer struct {
	ctx  context.Context
	l    *Local
	proj *effects.Project
}

func (ob observer) Artifact(name, path, marker string) (asdd.Artifact, error) {
	return ob.proj.Artifact(name, path, marker)
}

func (ob observer) Files(paths []string) (map[string]string, error) { return ob.proj.Observe(paths) }

// Observed reads a recent manifest (no decoding of the whole document per
// operation), read only. A path the slice gained since is not observed,
// and the rules skip what was not observed.
func (ob observer) Observed(id string) (map[string]string, error) {
	m := ob.l.recent.Load()
	var err error
	if m == nil {
		m, _, err = ob.l.Latest(ob.ctx)
	}
	if err != nil {
		if errors.Is(err, errNoManifest) {
			return map[string]string{}, nil
		}
		return nil, err
	}
	s := m.Slice(id)
	if s == nil {
		return map[string]string{}, nil
	}
	return ob.proj.Observe(s.Artifacts())
}

func (ob observer) Slice(id string) (*asdd.Slice, error) {
	m, _, err := ob.l.Latest(ob.ctx)
	if err != nil {
		return nil, err
	}
	return m.Find(id)
}

// heldManifest is the ASDD manifest of one revision, decoded, and the
// configuration asdd.Apply finalized it under (nil: unknown, it was
// decoded). It is the model the application layer commits with the patch
// of each operation (store.Change.Model): the store keeps it as the
// document's value and hands it back with the revision (Document.Model),
// so the next operation neither decodes the manifest nor has its bytes
// made, and an operation costs what it changes, not the size of the
// manifest. Never changed once made: readers share it.
type heldManifest struct {
	m   *asdd.Manifest
	cfg *asdd.Config
}

// MarshalJSON is the manifest's bytes, for the store: a plain encoding,
// without the schema check (the operations validated what they changed).
func (h *heldManifest) MarshalJSON() ([]byte, error) { return asdd.Marshal(h.m) }

// decodedManifest is a manifest this process decoded or committed, and
// its revision (Local.held).
type decodedManifest struct {
	rev uint64
	h   *heldManifest
}

// model returns doc's manifest: the model the store handed back with it,
// or the one this process decoded from the same revision last, or the
// value decoded now.
func (l *Local) model(doc store.Document) (*heldManifest, error) {
	if h, ok := doc.Model.(*heldManifest); ok {
		return h, nil
	}
	if d := l.held.Load(); d != nil && d.rev == doc.Revision && doc.Revision > 0 {
		return d.h, nil
	}
	raw, err := doc.Bytes()
	if err != nil {
		return nil, err
	}
	m, err := l.decodeManifest(raw)
	if err != nil {
		return nil, corrupt(err)
	}
	m.Revision = doc.Revision
	return &heldManifest{m: m}, nil
}

// keep remembers h, revision rev's manifest, for the next operation or
// read of this process (a revision names one value for the life of a
// store; rebuild forgets it, forgetManifest). Revision 0, a file nobody
// journaled yet, names no one value: another tool may rewrite it.
func (l *Local) keep(h *heldManifest, rev uint64) {
	if rev > 0 && h != nil {
		l.held.Store(&decodedManifest{rev: rev, h: h})
	}
}

// Latest returns the latest committed manifest and its revision: the
// model the store holds, else decoded from the value. It reads without the
// commit lock (in the daemon, from the store's memory). The manifest is
// shared: callers must not change it.
func (l *Local) Latest(ctx context.Context) (*asdd.Manifest, uint64, error) {
	doc, err := l.o.Store.Get(ctx, asdd.Key)
	if reason.CodeOf(err) == reason.NotFound || (err == nil && !doc.Exists()) {
		return nil, 0, errNoManifest
	}
	if err != nil {
		return nil, 0, err
	}
	h, err := l.model(doc)
	if err != nil {
		return nil, 0, err
	}
	if doc.Model == nil {
		l.keep(h, doc.Revision)
	}
	l.recent.Store(h.m)
	return h.m, doc.Revision, nil
}
