package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

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
	if mm, ok := doc.Memo.(*manifestMemo); ok && doc.Value == nil {
		// A held store hands out its memo: a copy keeps callers from
		// changing the daemon's manifest.
		raw := mm.e.Bytes()
		doc.Value = raw
	}
	m, err := asdd.Decode(doc.Value)
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
	opts := []store.UpdateOption{store.WithMemo()}
	if create {
		opts = append(opts, store.Create())
	}
	actor := actorPrefix + op.Actor()
	var out *asdd.Outcome
	var memo *manifestMemo
	res, err := l.o.Store.Update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
		var e *manifestenc.Encoded
		exact := false
		var m *asdd.Manifest
		var finalizedWith *asdd.Config
		if cur.Exists() {
			de, ex, fcfg, err := l.encodedAt(cur)
			if err != nil {
				return store.Change{}, err
			}
			e, exact, m, finalizedWith = de, ex, de.Manifest, fcfg
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
			data, err := e.MarshalJSON()
			if err != nil {
				return store.Change{}, fmt.Errorf("encode event: %w", err)
			}
			events = append(events, store.Event{Type: e.Type, Data: data})
		}
		out = o
		memo = &manifestMemo{e: ne, cfg: cfg}
		ch := store.Change{Memo: memo, Actor: actor, Reason: o.Summary, Events: events}
		if exact && patch != nil {
			// The store applies the patch to its own copy and makes the
			// bytes only if someone reads them.
			ch.Lazy, ch.Patch = ne, patch
		} else {
			ch.Value = ne.Bytes()
		}
		return ch, nil
	}, opts...)
	if err != nil {
		return nil, nil, err
	}
	if res.Changed && memo != nil {
		l.noteRecent(res.Revision, memo.e)
	}
	// out.Manifest is shared with the memo the next operation starts from:
	// it is never written after the commit (its revision is res.Revision).
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
	if id := sliceOf(op, out); id != "" {
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
	p, err := effects.Open(l.o.Root)
	if err != nil {
		return err
	}
	defer p.Close()
	l.fx.Lock()
	defer l.fx.Unlock()
	return p.Apply(effs)
}

// observe fills in what the custodian sees for itself, whatever the caller
// sent: the hashes of the artifacts an operation names (and what they
// will be once marked, should it halt), the hashes of the slice's artifacts
// on disk (drift), and the versions a human accepts by resolving or
// approving.
func (l *Local) observe(ctx context.Context, op asdd.Op, cfg *asdd.Config) (asdd.Op, error) {
	switch op.(type) {
	case asdd.Proposal, asdd.Quick, asdd.ReportFailure, asdd.Resolve, asdd.Approve, asdd.FlagDrift:
	default:
		return op, nil
	}
	if !l.hasRoot() {
		return nil, reason.New(reason.InvalidInput, "this custodian has no project directory to read artifacts from")
	}
	proj, err := effects.Open(l.o.Root)
	if err != nil {
		return nil, err
	}
	defer proj.Close()
	hashAll := func(as []asdd.Artifact, marker string) ([]asdd.Artifact, error) {
		if as == nil {
			return nil, nil
		}
		out := make([]asdd.Artifact, len(as))
		for i, a := range as {
			if out[i], err = proj.Artifact(a.Name, a.Path, marker); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	sliceObserved := func(id string) (map[string]string, error) {
		// A recent manifest (no decoding of the whole document per
		// operation); read only. A path the slice gained since is not
		// observed, and the rules skip what was not observed.
		e, err := l.recent(ctx)
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
		return proj.Observe(s.Artifacts())
	}
	present := func(obs map[string]string) map[string]string {
		for k, v := range obs {
			if v == "" {
				delete(obs, k)
			}
		}
		return obs
	}
	switch o := op.(type) {
	case asdd.Proposal:
		marker := asdd.DefaultMarker
		if a, ok := cfg.Agent(o.Agent); ok {
			marker = a.ArtifactMarker()
		}
		if o.Artifacts, err = hashAll(o.Artifacts, marker); err != nil {
			return nil, err
		}
		if o.Trace != nil {
			t, err := proj.Artifact("trace", o.Trace.Path, marker)
			if err != nil {
				return nil, err
			}
			o.Trace = &t
		}
		if o.Observed, err = sliceObserved(o.Slice); err != nil {
			return nil, err
		}
		return o, nil
	case asdd.Quick:
		if o.Artifacts, err = hashAll(o.Artifacts, asdd.DefaultMarker); err != nil {
			return nil, err
		}
		return o, nil
	case asdd.ReportFailure:
		if o.Artifacts, err = hashAll(o.Artifacts, asdd.DefaultMarker); err != nil {
			return nil, err
		}
		// What the slice's artifacts will hash to once marked DRAFT —
		// AGENT HALTED: the rules mark the phase's artifact (seed 004).
		o.Marked = map[string]string{}
		if m, err := l.Manifest(ctx); err == nil {
			if s := m.Slice(o.Slice); s != nil {
				for name, path := range s.PhaseData {
					if a, err := proj.Artifact(name, path, asdd.DefaultMarker); err == nil && a.MarkedSHA256 != "" {
						o.Marked[path] = a.MarkedSHA256
					}
				}
			}
		}
		return o, nil
	case asdd.Resolve:
		obs, err := sliceObserved(o.Slice)
		if err != nil {
			return nil, err
		}
		o.Hashes = present(obs)
		return o, nil
	case asdd.Approve:
		obs, err := sliceObserved(o.Slice)
		if err != nil {
			return nil, err
		}
		o.Hashes = present(obs)
		return o, nil
	case asdd.FlagDrift:
		// Only paths that really drifted are flagged: the custodian
		// compares them with what the manifest recorded.
		e, _, err := l.Latest(ctx)
		if err != nil {
			return nil, err
		}
		s, err := e.Manifest.Find(o.Slice)
		if err != nil {
			return nil, err
		}
		obs, err := proj.Observe(s.Artifacts())
		if err != nil {
			return nil, err
		}
		recorded := s.ArtifactHashes
		drifted := map[string]string{}
		for p := range o.Paths {
			got, named := obs[p]
			if named && got != recorded[p] {
				drifted[p] = got
			}
		}
		if len(drifted) == 0 {
			return nil, reason.New(reason.InvalidInput, "slice %s: none of the paths given has drifted from the hash the manifest recorded", o.Slice)
		}
		o.Paths = drifted
		return o, nil
	}
	return op, nil
}

// sliceOf is the slice an operation is about (a quick fix's, from its
// event: its id may be the one Apply chose).
func sliceOf(op asdd.Op, out *asdd.Outcome) string {
	switch o := op.(type) {
	case asdd.Quick:
		for _, e := range out.Events {
			if e.Type == "quick_fix" {
				return e.Slice
			}
		}
		return o.ID
	case asdd.Proposal:
		return o.Slice
	case asdd.AddSlice:
		return o.ID
	case asdd.LockSlice:
		return o.Slice
	case asdd.UnlockSlice:
		return o.Slice
	case asdd.Resolve:
		return o.Slice
	case asdd.Approve:
		return o.Slice
	case asdd.AddTask:
		return o.Slice
	case asdd.CompleteTask:
		return o.Slice
	case asdd.ClaimTask:
		return o.Slice
	case asdd.ReportFailure:
		return o.Slice
	case asdd.CorrectAssumption:
		return o.Slice
	case asdd.FlagDrift:
		return o.Slice
	}
	return ""
}

// manifestMemo is what the service commits with each manifest it makes
// (store.Change.Memo): the manifest decoded and encoded (manifestenc.Encoded) and
// the configuration asdd.Apply finalized it under. A store that keeps memos
// (store/file in Hold mode, the daemon's) hands it to the next operation,
// which then neither decodes the manifest nor has its bytes made: an
// operation costs what it changes, not the size of the manifest. Never
// changed once made.
type manifestMemo struct {
	e   *manifestenc.Encoded
	cfg *asdd.Config
}

// manifestCache keeps the last manifest decoded from a value that carried
// no memo (a store without memos, or a value written by a human's PUT), so
// that such a value is decoded once, not per operation. An entry is used
// only for a document whose revision and bytes are exactly the ones it was
// made from.
type manifestCache struct {
	mu  sync.Mutex
	rev uint64
	e   *manifestenc.Encoded
	// exact is true when e's bytes are byte for byte the stored value, so
	// a patch from them is a patch from the store's value.
	exact bool
}

func (c *manifestCache) get(doc store.Document) (*manifestenc.Encoded, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.e == nil || c.rev != doc.Revision || !c.exact {
		return nil, false
	}
	if !sameBytes(c.e, doc.Value) {
		return nil, false
	}
	return c.e, true
}

// at returns the cached manifest of revision rev for reading, exact or
// not.
func (c *manifestCache) at(rev uint64) (*manifestenc.Encoded, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.e, c.e != nil && c.rev == rev
}

func (c *manifestCache) put(rev uint64, e *manifestenc.Encoded, exact bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev, c.e, c.exact = rev, e, exact
}

// sameBytes reports whether e encodes to exactly v (trailing white space
// aside), streaming e's bytes rather than making them.
func sameBytes(e *manifestenc.Encoded, v []byte) bool {
	v = bytes.TrimRight(v, " \t\r\n")
	if e.Len() != len(v) {
		return false
	}
	c := &compareWriter{want: v}
	if _, err := e.WriteTo(c); err != nil {
		return false
	}
	return c.ok && len(c.want) == 0
}

// compareWriter checks that what is written to it is want, in order.
type compareWriter struct {
	want []byte
	ok   bool
}

var errDiffers = errors.New("differs")

func (c *compareWriter) Write(p []byte) (int, error) {
	if len(p) > len(c.want) || !bytes.Equal(p, c.want[:len(p)]) {
		c.ok = false
		return 0, errDiffers
	}
	c.want, c.ok = c.want[len(p):], true
	return len(p), nil
}

// memoStore is what a store offers when it keeps memos: the latest durable
// revision of a document and its memo, without making the value's bytes
// (store/file in Hold mode).
type memoStore interface {
	Latest(ctx context.Context, key string) (rev uint64, memo any, ok bool)
}

// encodedAt returns the manifest of cur, decoded and encoded, whether its
// bytes are exactly cur's, and the configuration asdd.Apply finalized it
// under (nil: unknown).
func (l *Local) encodedAt(cur store.Document) (*manifestenc.Encoded, bool, *asdd.Config, error) {
	if mm, ok := cur.Memo.(*manifestMemo); ok {
		return mm.e, true, mm.cfg, nil
	}
	if e, ok := l.asdd.get(cur); ok {
		return e, true, nil, nil
	}
	m, err := asdd.Decode(cur.Value)
	if err != nil {
		return nil, false, nil, corrupt(err)
	}
	m.Revision = cur.Revision
	e, err := manifestenc.NewEncoded(m)
	if err != nil {
		return nil, false, nil, reason.New(reason.CorruptState, "%s: %w", asdd.Key, err)
	}
	exact := sameBytes(e, cur.Value)
	l.asdd.put(cur.Revision, e, exact)
	return e, exact, nil, nil
}

// Latest returns the latest committed manifest, encoded, and its revision:
// from the store's memo when it keeps one, else decoded from the value.
// The manifest is shared: callers must not change it.
func (l *Local) Latest(ctx context.Context) (*manifestenc.Encoded, uint64, error) {
	if ms, ok := l.o.Store.(memoStore); ok {
		if rev, memo, ok := ms.Latest(ctx, asdd.Key); ok {
			if mm, ok := memo.(*manifestMemo); ok {
				return mm.e, rev, nil
			}
		}
	}
	// One caller decodes a value with no memo; the others wait for its
	// result instead of decoding the same manifest at once (a daemon's
	// first operations on a large manifest).
	l.decoding.Lock()
	defer l.decoding.Unlock()
	doc, err := l.o.Store.Get(ctx, asdd.Key)
	if reason.CodeOf(err) == reason.NotFound || (err == nil && !doc.Exists()) {
		err = errNoManifest
	}
	if err != nil {
		return nil, 0, err
	}
	if mm, ok := doc.Memo.(*manifestMemo); ok {
		return mm.e, doc.Revision, nil
	}
	if e, ok := l.asdd.at(doc.Revision); ok {
		return e, doc.Revision, nil
	}
	e, _, _, err := l.encodedAt(doc)
	if err != nil {
		return nil, 0, err
	}
	return e, doc.Revision, nil
}

// recentManifest is the manifest of the latest commit this service made.
type recentManifest struct {
	rev uint64
	e   *manifestenc.Encoded
}

// noteRecent keeps e (revision rev) as the recent manifest unless a newer
// one is kept.
func (l *Local) noteRecent(rev uint64, e *manifestenc.Encoded) {
	for {
		cur := l.last.Load()
		if cur != nil && cur.rev >= rev {
			return
		}
		if l.last.CompareAndSwap(cur, &recentManifest{rev: rev, e: e}) {
			return
		}
	}
}

// recent returns a recent manifest for observation: the latest this
// service committed, else the store's latest.
func (l *Local) recent(ctx context.Context) (*manifestenc.Encoded, error) {
	if r := l.last.Load(); r != nil {
		return r.e, nil
	}
	e, rev, err := l.Latest(ctx)
	if err == nil {
		l.noteRecent(rev, e)
	}
	return e, err
}
