package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/custodian-dev/custodian/app/internal/manifestenc"
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
	m, err := l.decodeManifest(doc.Value, doc.Sum)
	if err != nil {
		return nil, corrupt(err)
	}
	m.Revision = doc.Revision
	return m, nil
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
	uc := &updateCache{l: l}
	opts := []store.UpdateOption{store.WithCache(uc)}
	if create {
		opts = append(opts, store.Create())
	}
	actor := actorPrefix + op.Actor()
	var out *asdd.Outcome
	read := false // whether the store found a document to read
	res, err := l.update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
		read = true
		uc.next, uc.decoded = nil, nil
		var e *manifestenc.Encoded
		var m *asdd.Manifest
		var finalizedWith *asdd.Config
		if h := uc.current(cur); h != nil {
			var err error
			if e, err = h.encoded(); err != nil {
				return store.Change{}, err
			}
			m, finalizedWith = e.Manifest, h.cfg
		} else if cur.Exists() {
			h, err := l.decodeHeld(cur)
			if err != nil {
				return store.Change{}, err
			}
			uc.decoded = h
			e, m = h.e, h.e.Manifest
		} else if !create {
			return store.Change{}, errNoManifest
		}
		apply := asdd.Apply
		if finalizedWith != nil && finalizedWith == cfg {
			// The previous result of this service under the same rules:
			// only what the operation touches needs finalizing.
			apply = asdd.ApplyFinalized
		}
		o, err := apply(m, op, cfg, l.o.Now())
		if err != nil {
			return store.Change{}, err
		}
		var ne *manifestenc.Encoded
		var patch json.RawMessage
		if e != nil {
			// Only what the operation changed is encoded and validated;
			// the patch spares the store a diff of the whole manifest.
			if ne, patch, err = e.Next(o.Manifest); err != nil {
				return store.Change{}, err
			}
		} else {
			if _, err := asdd.Encode(o.Manifest); err != nil {
				return store.Change{}, err
			}
			if ne, err = manifestenc.NewEncoded(o.Manifest); err != nil {
				return store.Change{}, err
			}
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
		uc.next = &heldManifest{e: ne, cfg: cfg}
		ch := store.Change{Actor: actor, Reason: o.Summary, Events: events}
		if patch != nil {
			// The store applies the patch to its own copy (in the daemon,
			// its decoded one) and makes the bytes only if someone reads
			// them.
			ch.Patch = patch
		} else {
			ch.Value = ne.Bytes()
		}
		return ch, nil
	}, opts...)
	if !read && reason.CodeOf(err) == reason.NotFound {
		err = errNoManifest // the store's "no document", in the words of an ASDD project
	}
	if err != nil {
		return nil, nil, err
	}
	if !res.Changed && uc.decoded != nil {
		// The last run decoded the committed revision it was given.
		l.keep(uc.decoded)
	}
	if res.Changed && uc.decoded != nil && res.Record != nil && res.Record.Sum != "" {
		// A process that read the manifest (no held copy: the CLI without
		// a daemon) marks what it committed valid for the next one: the
		// operation validated what it changed of a manifest that passed.
		l.markValid(validMark{Sum: res.Record.Sum})
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
	e, err := ob.l.recent(ob.ctx)
	if err != nil {
		if errors.Is(err, errNoManifest) {
			return map[string]string{}, nil
		}
		return nil, err
	}
	s := e.Manifest.Slice(id)
	if s == nil {
		return map[string]string{}, nil
	}
	return ob.proj.Observe(s.Artifacts())
}

func (ob observer) Slice(id string) (*asdd.Slice, error) {
	e, _, err := ob.l.Latest(ob.ctx)
	if err != nil {
		return nil, err
	}
	return e.Manifest.Find(id)
}

// heldManifest is the ASDD manifest of one revision, decoded and encoded
// (manifestenc.Encoded), and the configuration asdd.Apply finalized it
// under (nil: unknown). Local keeps the one of the latest revision it
// committed or decoded (Local.held), so that the next operation neither
// decodes the manifest nor has its bytes made: an operation costs what it
// changes, not the size of the manifest. Never changed once made.
//
// It is reused only for the revision it was made for, and only while that
// revision is the store's current one: the store says so under its commit
// lock (store.Cache.Holds), or hands the current value with its revision.
// A revision names one value for the life of a store (every commit makes a
// new one), so a manifest made from revision r's value, or committed as
// revision r, is revision r's.
type heldManifest struct {
	rev uint64
	e   *manifestenc.Encoded // may be deferred (decodeHeld): see encoded
	cfg *asdd.Config
}

// encoded returns the held manifest's encoding complete: one decoded by
// decodeHeld has only the parts its operation changed encoded (a CLI
// process applies one operation and exits), and is completed, once, when
// a later operation or a reader of this process takes it up.
func (h *heldManifest) encoded() (*manifestenc.Encoded, error) {
	e, err := h.e.Complete()
	if err != nil {
		return nil, reason.New(reason.CorruptState, "%s: %w", asdd.Key, err)
	}
	return e, nil
}

// keep makes h the held manifest unless one of a later revision is held.
// A manifest of revision 0 (a file nobody journaled yet) is not kept:
// revision 0 names no one value, another tool may rewrite the file.
func (l *Local) keep(h *heldManifest) {
	if h.rev == 0 {
		return
	}
	for {
		cur := l.held.Load()
		if cur != nil && cur.rev >= h.rev {
			return
		}
		if l.held.CompareAndSwap(cur, h) {
			return
		}
	}
}

// updateCache is Local's store.Cache for one ASDD update: the store asks
// it, under its commit lock, whether the held manifest is the current
// revision's, and tells it the revision the update committed.
type updateCache struct {
	l    *Local
	have *heldManifest // what Holds vouched for, for the run that follows
	next *heldManifest // the manifest the update function proposed last
	// decoded is the manifest the update function's last run decoded from
	// the value it was given. It is kept only once Update has returned: a
	// backend that batches commits (etcd) may run the function on a state
	// that never commits (another writer wins the transaction), and a held
	// manifest of that revision would then shadow the real one.
	decoded *heldManifest
}

func (c *updateCache) Holds(rev uint64) bool {
	c.have = nil
	if h := c.l.held.Load(); h != nil && h.rev == rev {
		c.have = h
	}
	return c.have != nil
}

func (c *updateCache) Committed(rev uint64) {
	if c.next != nil {
		c.next.rev = rev
		c.l.keep(c.next)
	}
}

// current returns the held manifest when it is cur's: the store vouched
// for it (cur has no value), or cur's revision is the one it was made for.
func (c *updateCache) current(cur store.Document) *heldManifest {
	if cur.Value == nil && cur.Revision > 0 && c.have != nil && c.have.rev == cur.Revision {
		return c.have
	}
	if h := c.l.held.Load(); cur.Value != nil && h != nil && h.rev == cur.Revision {
		return h
	}
	return nil
}

// decodeHeld decodes cur's manifest. The caller keeps it as the held one
// (Local.keep) once the store has said cur was committed: Update returned.
func (l *Local) decodeHeld(cur store.Document) (*heldManifest, error) {
	m, err := l.decodeManifest(cur.Value, cur.Sum)
	if err != nil {
		return nil, corrupt(err)
	}
	m.Revision = cur.Revision
	e, err := manifestenc.NewEncodedDeferred(m)
	if err != nil {
		return nil, reason.New(reason.CorruptState, "%s: %w", asdd.Key, err)
	}
	return &heldManifest{rev: cur.Revision, e: e}, nil
}

// Latest returns the latest committed manifest, encoded, and its revision:
// the held one when the store says it is still current, else decoded from
// the value. The manifest is shared: callers must not change it.
func (l *Local) Latest(ctx context.Context) (*manifestenc.Encoded, uint64, error) {
	var h *heldManifest
	decoded := false
	uc := &updateCache{l: l}
	read := func() error {
		_, err := l.o.Store.Update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
			if h, decoded = uc.current(cur), false; h != nil {
				return store.Change{}, nil
			}
			if !cur.Exists() {
				return store.Change{}, errNoManifest
			}
			var err error
			h, err = l.decodeHeld(cur)
			decoded = err == nil
			return store.Change{}, err // commits nothing
		}, store.WithCache(uc))
		if reason.CodeOf(err) == reason.NotFound {
			err = errNoManifest
		}
		return err
	}
	if err := read(); err != nil {
		return nil, 0, err
	}
	if decoded {
		l.keep(h)
	}
	e, err := h.encoded()
	if err != nil {
		return nil, 0, err
	}
	return e, h.rev, nil
}

// recent returns a recent manifest for observation: the held one, else
// the store's latest.
func (l *Local) recent(ctx context.Context) (*manifestenc.Encoded, error) {
	if h := l.held.Load(); h != nil {
		return h.encoded()
	}
	e, _, err := l.Latest(ctx)
	return e, err
}
