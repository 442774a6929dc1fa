package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/jsonscan"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// asddOps maps the operation names of POST /v1/asdd/{op} to a decoder of
// the operation's JSON (the asdd op structs, fields by their Go names,
// matched case-insensitively; unknown fields are refused).
var asddOps = map[string]func([]byte) (asdd.Op, error){
	"init":          decodeOp[asdd.Init],
	"add-slice":     decodeOp[asdd.AddSlice],
	"quick":         decodeOp[asdd.Quick],
	"lock":          decodeOp[asdd.LockSlice],
	"unlock":        decodeOp[asdd.UnlockSlice],
	"heartbeat":     decodeBeat,
	"propose":       decodeOp[asdd.Proposal],
	"resolve":       decodeOp[asdd.Resolve],
	"approve":       decodeOp[asdd.Approve],
	"add-task":      decodeOp[asdd.AddTask],
	"complete-task": decodeOp[asdd.CompleteTask],
	"clear-review":  decodeOp[asdd.ClearReview],
}

// ASDDOps lists the operation names the daemon runs.
func ASDDOps() []string {
	names := make([]string, 0, len(asddOps))
	for n := range asddOps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func decodeOp[T asdd.Op](body []byte) (asdd.Op, error) {
	var op T
	if err := decodeStrict(body, &op); err != nil {
		return nil, err
	}
	return op, nil
}

// decodeBeat decodes a heartbeat exactly as decodeOp[asdd.Beat] does (the
// most frequent operation; encoding/json's reflection was a tenth of its
// cost). The usual shape — each member once, named by its field in any
// ASCII case, strings without escapes, integers or null for the counts —
// is read without reflection; any other input goes through decodeOp, so
// the value and the errors are always encoding/json's (FuzzDecodeBeat).
func decodeBeat(body []byte) (asdd.Op, error) {
	if b, ok := scanBeat(body); ok {
		return b, nil
	}
	return decodeOp[asdd.Beat](body)
}

func scanBeat(body []byte) (asdd.Beat, bool) {
	var b asdd.Beat
	var seen [6]bool
	p := jsonscan.New(body)
	ok := p.Byte('{') && p.Object(func(k string) bool {
		f := slices.IndexFunc(beatFields[:], func(name string) bool { return asciiFold(k, name) })
		if f < 0 || seen[f] {
			return false
		}
		seen[f] = true
		var ok bool
		switch f {
		case 0:
			b.Agent, ok = p.Str()
		case 1:
			b.Status, ok = p.Str()
		case 2:
			b.Slice, ok = p.Str()
		case 3:
			b.Wave, ok = scanInt(p)
		case 4:
			b.Completed, ok = scanInt(p)
		case 5:
			b.Remaining, ok = scanInt(p)
		}
		return ok
	}) && p.End()
	return b, ok
}

// scanInt reads an integer that fits an int, or null.
func scanInt(p *jsonscan.Parser) (*int, bool) {
	if p.Lit("null") {
		return nil, true
	}
	text, ok := p.Number()
	if !ok {
		return nil, false
	}
	v, err := strconv.Atoi(text)
	return &v, err == nil
}

// beatFields are asdd.Beat's fields, in scanBeat's order.
var beatFields = [6]string{"agent", "status", "slice", "wave", "completed", "remaining"}

// asciiFold reports whether key is name (lower case ASCII) in any ASCII
// case. Keys with other characters are left to encoding/json, whose case
// folding also matches some of them (ſ, K).
func asciiFold(key, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// manifestMemo is what the daemon commits with each manifest it makes
// (store.Change.Memo): the manifest decoded and encoded (asdd.Encoded) and
// the configuration asdd.Apply finalized it under. A store that keeps memos
// (store/file in Hold mode) hands it to the next operation, which then
// neither decodes the manifest nor has its bytes made: an operation costs
// what it changes, not the size of the manifest. Never changed once made.
type manifestMemo struct {
	e   *asdd.Encoded
	cfg *asdd.Config
}

// manifestCache keeps the last manifest the daemon decoded from a value
// that carried no memo (a store without memos, or a value written through
// PUT /v1/doc), so that such a value is decoded once, not per operation.
// An entry is used only for a document whose revision and bytes are
// exactly the ones it was made from.
type manifestCache struct {
	mu  sync.Mutex
	rev uint64
	e   *asdd.Encoded
	// exact is true when e's bytes are byte for byte the stored value, so
	// a patch from them is a patch from the store's value.
	exact bool
}

func (c *manifestCache) get(doc store.Document) (*asdd.Encoded, bool) {
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

func (c *manifestCache) put(rev uint64, e *asdd.Encoded, exact bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rev, c.e, c.exact = rev, e, exact
}

// sameBytes reports whether e encodes to exactly v (trailing white space
// aside), streaming e's bytes rather than making them.
func sameBytes(e *asdd.Encoded, v []byte) bool {
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
func (s *Server) encodedAt(cur store.Document) (*asdd.Encoded, bool, *asdd.Config, error) {
	if mm, ok := cur.Memo.(*manifestMemo); ok {
		return mm.e, true, mm.cfg, nil
	}
	if e, ok := s.asdd.get(cur); ok {
		return e, true, nil, nil
	}
	m, err := asdd.Decode(cur.Value)
	if err != nil {
		return nil, false, nil, reason.New(reason.CorruptState, "%s does not match its schema (run `custodian check` or `custodian rebuild`): %w", asdd.Key, err)
	}
	m.Revision = cur.Revision
	e, err := asdd.NewEncoded(m)
	if err != nil {
		return nil, false, nil, reason.New(reason.CorruptState, "%s: %w", asdd.Key, err)
	}
	exact := sameBytes(e, cur.Value)
	s.asdd.put(cur.Revision, e, exact)
	return e, exact, nil, nil
}

// latest returns the latest committed manifest and its revision: from the
// store's memo when it keeps one, else decoded from the value.
func (s *Server) latest(ctx context.Context) (*asdd.Encoded, uint64, error) {
	if ms, ok := s.st.(memoStore); ok {
		if rev, memo, ok := ms.Latest(ctx, asdd.Key); ok {
			if mm, ok := memo.(*manifestMemo); ok {
				return mm.e, rev, nil
			}
		}
	}
	doc, err := s.st.Get(ctx, asdd.Key)
	if reason.CodeOf(err) == reason.NotFound {
		err = errNoManifest
	}
	if err != nil {
		return nil, 0, err
	}
	e, _, _, err := s.encodedAt(doc)
	if err != nil {
		return nil, 0, err
	}
	return e, doc.Revision, nil
}

var errNoManifest = reason.New(reason.NotFound, "no ASDD manifest at %s: run `custodian init` first", asdd.Key)

// asddOp runs one ASDD operation inside the daemon: the same rule function
// the CLI runs (asdd.Apply) against the in-memory manifest, committed
// through the store, then the file side effects.
func (s *Server) asddOp(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("op")
	dec, ok := asddOps[name]
	if !ok {
		writeError(w, reason.New(reason.NotFound, "no ASDD operation %q (operations: %s)", name, strings.Join(ASDDOps(), ", ")))
		return
	}
	body, err := s.readBody(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	op, err := dec(body)
	if err != nil {
		writeError(w, err)
		return
	}
	cfg, err := s.o.ASDDConfig()
	if err != nil {
		writeError(w, err)
		return
	}
	if p, ok := op.(asdd.Proposal); ok {
		if op, err = s.observe(r, p, cfg); err != nil {
			writeError(w, err)
			return
		}
	}
	create := name == "init"
	var opts []store.UpdateOption
	if create {
		opts = append(opts, store.Create())
	}
	opts = append(opts, store.WithMemo())
	start := time.Now()
	var out *asdd.Outcome
	var encodedEvents []json.RawMessage // out.Events as committed, for the response
	res, err := s.st.Update(r.Context(), asdd.Key, func(cur store.Document) (store.Change, error) {
		var e *asdd.Encoded
		exact := false
		var m *asdd.Manifest
		var finalizedWith *asdd.Config
		if cur.Exists() {
			de, ex, fcfg, err := s.encodedAt(cur)
			if err != nil {
				return store.Change{}, err
			}
			e, exact, m, finalizedWith = de, ex, de.Manifest, fcfg
		} else if !create {
			return store.Change{}, errNoManifest
		}
		apply := asdd.Apply
		if finalizedWith != nil && finalizedWith == cfg {
			// The daemon's own previous result under the same rules:
			// only what the operation touches needs finalizing.
			apply = asdd.ApplyFinalized
		}
		o, err := apply(m, op, cfg, s.o.Now())
		if err != nil {
			return store.Change{}, err
		}
		var ne *asdd.Encoded
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
			if ne, err = asdd.NewEncoded(o.Manifest); err != nil {
				return store.Change{}, err
			}
		}
		events := make([]store.Event, 0, len(o.Events))
		encodedEvents = make([]json.RawMessage, 0, len(o.Events))
		for _, e := range o.Events {
			data, err := e.MarshalJSON()
			if err != nil {
				return store.Change{}, fmt.Errorf("encode event: %w", err)
			}
			events = append(events, store.Event{Type: e.Type, Data: data})
			encodedEvents = append(encodedEvents, data)
		}
		out = o
		ch := store.Change{Memo: &manifestMemo{e: ne, cfg: cfg}, Actor: op.Actor(), Reason: o.Summary, Events: events}
		if exact && patch != nil {
			// The store applies the patch to its own copy and makes the
			// bytes only if someone reads them.
			ch.Lazy, ch.Patch = ne, patch
		} else {
			ch.Value = ne.Bytes()
		}
		return ch, nil
	}, opts...)
	s.observeCommit(start, res, err)
	if err != nil {
		writeError(w, err)
		return
	}
	resp := client.OpResponse{Revision: res.Revision, Committed: true, Outcome: out.Result(), Summary: out.Summary, Events: out.Events, Verdict: out.Verdict}
	if resp.Events == nil {
		resp.Events = []asdd.Event{}
	}
	if id := sliceOf(op, out); id != "" {
		resp.Slice = out.Manifest.Slice(id)
	}
	for _, e := range out.Effects {
		resp.Effects = append(resp.Effects, client.EffectSummary{Kind: e.Kind, Path: e.Path})
	}
	if effs := asdd.CommitEffects(out); len(effs) > 0 && s.o.Root != "" {
		if err := s.applyEffects(effs); err != nil {
			// The commit stands; the effects are derived again by the next
			// operation on the slice.
			resp.Warnings = append(resp.Warnings, err.Error())
			s.o.Logger.Warn("effects not applied", "revision", res.Revision, "error", err)
		}
	}
	answer, err := resp.AppendJSON(make([]byte, 0, 256), encodedEvents)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(append(answer, '\n'))
}

func (s *Server) applyEffects(effs []asdd.Effect) error {
	p, err := effects.Open(s.o.Root)
	if err != nil {
		return err
	}
	defer p.Close()
	return p.Apply(effs)
}

// observe fills in what a proposal's agent may leave to the daemon (it runs
// on the same machine): the hashes of the artifacts it names, and the
// drift check's view of the slice's artifacts on disk.
func (s *Server) observe(r *http.Request, p asdd.Proposal, cfg *asdd.Config) (asdd.Op, error) {
	if s.o.Root == "" {
		return p, nil
	}
	proj, err := effects.Open(s.o.Root)
	if err != nil {
		return nil, err
	}
	defer proj.Close()
	marker := asdd.DefaultMarker
	if a, ok := cfg.Agent(p.Agent); ok {
		marker = a.ArtifactMarker()
	}
	p.Artifacts = append([]asdd.Artifact(nil), p.Artifacts...)
	for i, a := range p.Artifacts {
		if a.SHA256 == "" {
			if p.Artifacts[i], err = proj.Artifact(a.Name, a.Path, marker); err != nil {
				return nil, err
			}
		}
	}
	if p.Trace != nil && p.Trace.SHA256 == "" {
		t, err := proj.Artifact("trace", p.Trace.Path, marker)
		if err != nil {
			return nil, err
		}
		p.Trace = &t
	}
	if p.Observed == nil {
		if e, _, err := s.latest(r.Context()); err == nil {
			if sl := e.Manifest.Slice(p.Slice); sl != nil {
				if p.Observed, err = proj.Observe(sl.Artifacts()); err != nil {
					return nil, err
				}
			}
		}
	}
	return p, nil
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
	}
	return ""
}

// getSlice returns one slice of the latest manifest, as the daemon keeps
// it encoded: no copy of the manifest, no encoding.
func (s *Server) getSlice(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	e, rev, err := s.latest(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	id := r.PathValue("id")
	i := slices.IndexFunc(e.Manifest.Slices, func(sl *asdd.Slice) bool { return sl.SliceID == id })
	if i < 0 {
		_, err := e.Manifest.Find(id)
		writeError(w, err)
		return
	}
	s.m.reads.Observe(time.Since(start).Seconds())
	w.Header().Set("ETag", fmt.Sprintf("%q", fmt.Sprint(rev)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(e.Slice(i))
	w.Write([]byte{'\n'})
}
