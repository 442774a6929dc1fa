// Package manifestenc keeps an ASDD manifest together with the compact
// JSON encoding of each of its parts, so that the application layer can
// encode, validate and diff the manifest an operation produces by looking
// only at what the operation changed (Encoded.Next), and make the whole
// document's bytes only when someone needs them.
package manifestenc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// Encoded is a manifest together with the compact JSON encoding of each of
// its parts (project context, every slice, every heartbeat, the unknown
// members), so that the next manifest an operation produces (Apply shares
// every slice and heartbeat it did not change with its input) is encoded,
// validated and diffed by looking only at what changed. The whole
// document's bytes are made only when asked for (Bytes, WriteTo), and its
// length is known without making them (Len). The application layer keeps the latest one in memory. An Encoded is
// never changed once made (Bytes only fills in its cache), so it may be
// shared between goroutines; the encodings of unchanged parts are shared
// between successive Encodeds.
type Encoded struct {
	Manifest *asdd.Manifest

	pc        []byte   // compact JSON of Manifest.ProjectContext
	slices    [][]byte // compact JSON of Manifest.Slices[i]; nil: not made yet (deferred)
	slicesLen int      // sum of len(slices[i])
	hbs       []member // Manifest.AgentHeartbeats, in json.Marshal's key order
	hbsLen    int      // sum of len(hbs[i].enc)
	extra     []byte   // `,"key":value` for each of Manifest.Extra, in order
	n         int      // length of the whole document
	// deferred: the slices' encodings are made only when asked for
	// (NewEncodedDeferred): entries of slices may be nil, and slicesLen
	// and n are unknown; complete holds the encoding made in full.
	deferred     bool
	completeOnce sync.Once
	complete     *Encoded
	completeErr  error

	once sync.Once
	made atomic.Bool // raw is set
	raw  []byte
}

// member is one member of a JSON object: its key and its encoding
// `"key":value`, the value starting at enc[at].
type member struct {
	key string
	enc []byte
	at  int
}

func (m member) value() []byte { return m.enc[m.at:] }

// The fixed text around the parts of a manifest's JSON.
const (
	openContext = `{"project_context":`
	openSlices  = `,"slices":[`
	openHBs     = `],"agent_heartbeats":{`
	openRev     = `},"revision":`
	closeDoc    = `}`
)

// NewEncoded encodes m in full (every part). It does not validate m: use
// it on a manifest that came from Decode or passed Encode.
func NewEncoded(m *asdd.Manifest) (*Encoded, error) {
	e := &Encoded{Manifest: m}
	e.slices = make([][]byte, len(m.Slices))
	for i, s := range m.Slices {
		if s == nil {
			return nil, reason.New(reason.InvalidInput, "manifest: slices[%d] is null", i)
		}
		b, err := asdd.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("encode manifest: slice %s: %w", s.SliceID, err)
		}
		e.slices[i] = b
		e.slicesLen += len(b)
	}
	pc, err := asdd.Marshal(&m.ProjectContext)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: project_context: %w", err)
	}
	e.pc = pc
	e.hbs = make([]member, 0, len(m.AgentHeartbeats))
	for k, h := range m.AgentHeartbeats {
		mb, err := encodeMember(k, h)
		if err != nil {
			return nil, fmt.Errorf("encode manifest: heartbeat %s: %w", k, err)
		}
		e.hbs = append(e.hbs, mb)
		e.hbsLen += len(mb.enc)
	}
	slices.SortFunc(e.hbs, func(a, b member) int { return strings.Compare(a.key, b.key) })
	if e.extra, err = asdd.MarshalUnknown(m.Extra); err != nil {
		return nil, fmt.Errorf("encode manifest: unknown members: %w", err)
	}
	e.n = e.length()
	return e, nil
}

// NewEncodedDeferred is NewEncoded leaving the slices' encodings to be
// made when something needs them: Next encodes only the slices an
// operation changed, and the rest are encoded once, by Complete, only if
// the document's bytes, its length or an unchanged slice's encoding are
// asked for. A command that decodes the manifest, applies one operation
// and commits its patch (the CLI without a daemon) never encodes the
// slices it did not touch.
func NewEncodedDeferred(m *asdd.Manifest) (*Encoded, error) {
	for i, s := range m.Slices {
		if s == nil {
			return nil, reason.New(reason.InvalidInput, "manifest: slices[%d] is null", i)
		}
	}
	e, err := NewEncoded(&asdd.Manifest{ProjectContext: m.ProjectContext, AgentHeartbeats: m.AgentHeartbeats, Extra: m.Extra, Revision: m.Revision})
	if err != nil {
		return nil, err
	}
	e.Manifest = m
	e.slices = make([][]byte, len(m.Slices))
	e.deferred = true
	return e, nil
}

// Complete returns e with every part encoded: e itself, unless it was
// made by NewEncodedDeferred (or derived from one by Next), in which case
// the slices not encoded yet are encoded once.
func (e *Encoded) Complete() (*Encoded, error) {
	if !e.deferred {
		return e, nil
	}
	e.completeOnce.Do(func() {
		c := &Encoded{Manifest: e.Manifest, pc: e.pc, hbs: e.hbs, hbsLen: e.hbsLen, extra: e.extra}
		c.slices = make([][]byte, len(e.slices))
		for i, b := range e.slices {
			if b == nil {
				s := e.Manifest.Slices[i]
				var err error
				if b, err = asdd.Marshal(s); err != nil {
					e.completeErr = fmt.Errorf("encode manifest: slice %s: %w", s.SliceID, err)
					return
				}
			}
			c.slices[i] = b
			c.slicesLen += len(b)
		}
		c.n = c.length()
		e.complete = c
	})
	return e.complete, e.completeErr
}

// completed is Complete for the methods that cannot fail: the encoding of
// a manifest that was decoded, or built by Apply from one, does not fail.
func (e *Encoded) completed() *Encoded {
	c, err := e.Complete()
	if err != nil {
		panic(fmt.Sprintf("manifestenc: %v", err))
	}
	return c
}

// encodeMember encodes the object member k: v as json.Marshal writes it in
// a map or after a struct's fields.
func encodeMember(k string, v any) (member, error) {
	enc := append(appendString(make([]byte, 0, len(k)+160), k), ':')
	at := len(enc)
	vb, err := asdd.Marshal(v)
	if err != nil {
		return member{}, err
	}
	return member{key: k, enc: append(enc, vb...), at: at}, nil
}

// length is the length of the document from the part lengths.
func (e *Encoded) length() int {
	n := len(openContext) + len(e.pc) + len(openSlices) + e.slicesLen + len(openHBs) + e.hbsLen +
		len(openRev) + digits(e.Manifest.Revision) + len(e.extra) + len(closeDoc)
	if len(e.slices) > 1 {
		n += len(e.slices) - 1 // commas
	}
	if len(e.hbs) > 1 {
		n += len(e.hbs) - 1
	}
	return n
}

func digits(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// Len is the length of the manifest's compact JSON (Bytes), known without
// making it.
func (e *Encoded) Len() int {
	if e.deferred {
		return e.completed().n
	}
	return e.n
}

// Bytes returns the compact JSON of Manifest, byte for byte json.Marshal's.
// It is made on the first call; every call returns the same slice, which
// must not be modified. Safe for concurrent use.
func (e *Encoded) Bytes() []byte {
	if e.deferred {
		return e.completed().Bytes()
	}
	e.once.Do(func() {
		var buf bytes.Buffer
		buf.Grow(e.n)
		if _, err := e.writeParts(&buf); err != nil {
			panic(err) // bytes.Buffer does not fail
		}
		if buf.Len() != e.n {
			// Len has been promised to the store: a mismatch is a bug
			// that would corrupt what it writes.
			panic(fmt.Sprintf("manifestenc: encoded manifest is %d bytes, Len said %d", buf.Len(), e.n))
		}
		e.raw = buf.Bytes()
		e.made.Store(true)
	})
	return e.raw
}

// WriteTo writes Bytes to w, from the parts when Bytes was not made yet
// (without making the whole document: small parts are gathered in a
// buffer of a few tens of kilobytes).
func (e *Encoded) WriteTo(w io.Writer) (int64, error) {
	if e.deferred {
		c, err := e.Complete()
		if err != nil {
			return 0, err
		}
		return c.WriteTo(w)
	}
	if e.made.Load() {
		n, err := w.Write(e.raw)
		if err == nil && n < len(e.raw) {
			err = io.ErrShortWrite
		}
		return int64(n), err
	}
	bw := writeBufs.Get().(*gatherWriter)
	bw.w, bw.n, bw.err = w, 0, nil
	defer func() {
		bw.w, bw.buf = nil, bw.buf[:0]
		writeBufs.Put(bw)
	}()
	if _, err := e.writeParts(bw); err != nil {
		return bw.n, err
	}
	bw.flush()
	return bw.n, bw.err
}

// writeParts writes the document to w part by part.
func (e *Encoded) writeParts(w io.Writer) (int64, error) {
	var n int64
	write := func(b []byte) error {
		k, err := w.Write(b)
		n += int64(k)
		return err
	}
	var rev [20]byte
	for _, b := range [][]byte{[]byte(openContext), e.pc, []byte(openSlices)} {
		if err := write(b); err != nil {
			return n, err
		}
	}
	for i, b := range e.slices {
		if i > 0 {
			if err := write(comma); err != nil {
				return n, err
			}
		}
		if err := write(b); err != nil {
			return n, err
		}
	}
	if err := write([]byte(openHBs)); err != nil {
		return n, err
	}
	for i, h := range e.hbs {
		if i > 0 {
			if err := write(comma); err != nil {
				return n, err
			}
		}
		if err := write(h.enc); err != nil {
			return n, err
		}
	}
	for _, b := range [][]byte{[]byte(openRev), strconv.AppendUint(rev[:0], e.Manifest.Revision, 10), e.extra, []byte(closeDoc)} {
		if err := write(b); err != nil {
			return n, err
		}
	}
	return n, nil
}

var comma = []byte{','}

// gatherWriter gathers small writes into buf and passes large ones
// through, so that WriteTo makes a few large writes whatever the number of
// parts.
type gatherWriter struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

const gatherSize = 32 << 10

var writeBufs = sync.Pool{New: func() any { return &gatherWriter{buf: make([]byte, 0, gatherSize)} }}

func (g *gatherWriter) Write(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(g.buf)+len(p) > cap(g.buf) {
		g.flush()
		if g.err != nil {
			return 0, g.err
		}
	}
	if len(p) >= cap(g.buf) {
		k, err := g.w.Write(p)
		g.n += int64(k)
		if err == nil && k < len(p) {
			err = io.ErrShortWrite
		}
		g.err = err
		return k, err
	}
	g.buf = append(g.buf, p...)
	return len(p), nil
}

func (g *gatherWriter) flush() {
	if g.err != nil || len(g.buf) == 0 {
		return
	}
	k, err := g.w.Write(g.buf)
	g.n += int64(k)
	if err == nil && k < len(g.buf) {
		err = io.ErrShortWrite
	}
	g.err = err
	g.buf = g.buf[:0]
}

// Next encodes next, a manifest Apply made from e.Manifest, re-encoding
// only the slices, heartbeats and members whose values are not shared with
// e.Manifest, and checks those against the manifest schema (the rest passed
// when e was made). It returns next encoded and the RFC 6902 patch from
// e.Bytes() to its Bytes(), without making either. Its cost is that of
// the changed parts plus a pointer comparison per heartbeat, and per slice
// only when Apply did not say which slices it changed
// (asdd.Manifest.SlicesChanged).
// When next does not share its structure with e.Manifest the way Apply's
// output does, it falls back to the full path: the whole manifest is
// encoded and validated, and the patch is nil (the caller diffs).
func (e *Encoded) Next(next *asdd.Manifest) (*Encoded, json.RawMessage, error) {
	prev := e.Manifest
	nextLen, prevLen := len(next.Slices), len(prev.Slices)
	if nextLen < prevLen || !sameExtra(prev.Extra, next.Extra) {
		return fullEncoded(next)
	}
	// ne shares e's slice encodings until it encodes a slice (then copies
	// them: a heartbeat copies none). Every added slice is encoded, so a
	// shared list has next's length.
	ne := &Encoded{Manifest: next, slices: e.slices, slicesLen: e.slicesLen, extra: e.extra, deferred: e.deferred}
	copied := false
	var ops []patchOp
	var added []int
	// encode encodes slice i unless it is prev's (shared: so is its
	// encoding), and adds it to the patch.
	encode := func(i int) error {
		s := next.Slices[i]
		if s == nil {
			return reason.New(reason.InvalidInput, "encoded manifest fails its schema: slices[%d] is null", i)
		}
		if i < prevLen && s == prev.Slices[i] {
			return nil
		}
		b, err := asdd.Marshal(s)
		if err != nil {
			return fmt.Errorf("encode manifest: slice %s: %w", s.SliceID, err)
		}
		if !asdd.SliceSurelyValid(s) {
			if err := asdd.ValidatePart(asdd.PartSlice, b, "/slices/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		if !copied {
			ne.slices = make([][]byte, nextLen)
			copy(ne.slices, e.slices)
			copied = true
		}
		ne.slices[i] = b
		ne.slicesLen += len(b)
		op := "replace"
		if i >= prevLen {
			op = "add"
			added = append(added, i)
		} else if !e.deferred {
			ne.slicesLen -= len(e.slices[i])
		}
		ops = append(ops, patchOp{Op: op, Path: "/slices/" + strconv.Itoa(i), Value: b})
		return nil
	}
	if changed, ok := next.SlicesChanged(prev); ok {
		// Apply says which slices are not prev's: no comparison of the
		// others' pointers.
		for _, i := range changed {
			if err := encode(i); err != nil {
				return nil, nil, err
			}
		}
	} else {
		// Compare every slice's pointer (encode skips prev's).
		for i := range nextLen {
			if err := encode(i); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(added) > 0 {
		seen := make(map[string]bool, nextLen)
		for i, s := range next.Slices {
			if seen[s.SliceID] {
				return nil, nil, reason.New(reason.InvalidInput, "encoded manifest fails its schema: slices[%d]: duplicate slice_id %q", i, s.SliceID)
			}
			seen[s.SliceID] = true
		}
	}
	if sameContext(&prev.ProjectContext, &next.ProjectContext) {
		ne.pc = e.pc
	} else if pc, err := asdd.Marshal(&next.ProjectContext); err != nil {
		return nil, nil, fmt.Errorf("encode manifest: project_context: %w", err)
	} else if bytes.Equal(pc, e.pc) {
		ne.pc = e.pc
	} else {
		if err := asdd.ValidatePart(asdd.PartContext, pc, "/project_context"); err != nil {
			return nil, nil, err
		}
		ne.pc = pc
		ops = append(ops, patchOp{Op: "replace", Path: "/project_context", Value: pc})
	}
	hbOps, err := ne.nextHeartbeats(e)
	if err != nil {
		return nil, nil, err
	}
	ops = append(ops, hbOps...)
	if next.Revision != prev.Revision {
		// "add" sets the member whether or not the document has one: a
		// manifest another tool wrote may have none.
		ops = append(ops, patchOp{Op: "add", Path: "/revision", Value: json.RawMessage(strconv.FormatUint(next.Revision, 10))})
	}
	if !ne.deferred {
		ne.n = ne.length()
	}
	if len(ops) == 0 {
		return ne, json.RawMessage("[]"), nil
	}
	return ne, appendPatch(nil, ops), nil
}

// appendPatch appends the patch operations as json.Marshal encodes them:
// their values are this package's own encodings, already compact and
// escaped as Marshal would leave them.
func appendPatch(b []byte, ops []patchOp) []byte {
	n := 2
	for _, op := range ops {
		n += len(op.Op) + len(op.Path) + len(op.Value) + 32
	}
	if cap(b)-len(b) < n {
		b = append(make([]byte, 0, len(b)+n), b...)
	}
	b = append(b, '[')
	for i, op := range ops {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"op":`...), op.Op)
		b = appendString(append(b, `,"path":`...), op.Path)
		if len(op.Value) > 0 {
			b = append(append(b, `,"value":`...), op.Value...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// nextHeartbeats sets ne's heartbeat encodings from e's, encoding only the
// heartbeats whose pointers changed, and returns the patch operations for
// them (adds in key order, then removals in key order).
func (ne *Encoded) nextHeartbeats(e *Encoded) ([]patchOp, error) {
	prev, next := e.Manifest.AgentHeartbeats, ne.Manifest.AgentHeartbeats
	var changed []member   // new encodings, sorted below
	kept, replaced := 0, 0 // keys of next also in prev; those changed
	for k, h := range next {
		if h == nil {
			return nil, reason.New(reason.InvalidInput, "encoded manifest fails its schema: agent_heartbeats.%s is null", k)
		}
		old, ok := prev[k]
		if ok {
			kept++
			if old == h {
				continue
			}
			replaced++
		}
		mb, err := encodeMember(k, h)
		if err != nil {
			return nil, fmt.Errorf("encode manifest: heartbeat %s: %w", k, err)
		}
		if !asdd.HeartbeatSurelyValid(h) {
			if err := asdd.ValidatePart(asdd.PartHeartbeat, mb.value(), "/agent_heartbeats/"+k); err != nil {
				return nil, err
			}
		}
		changed = append(changed, mb)
	}
	slices.SortFunc(changed, func(a, b member) int { return strings.Compare(a.key, b.key) })
	var ops []patchOp
	for _, mb := range changed {
		ops = append(ops, patchOp{Op: "add", Path: "/agent_heartbeats/" + escapePointer(mb.key), Value: mb.value()})
	}
	added, removed := len(changed)-replaced, len(prev)-kept
	if len(changed) == 0 && removed == 0 {
		ne.hbs, ne.hbsLen = e.hbs, e.hbsLen
		return ops, nil
	}
	if added == 0 && removed == 0 {
		// Only replacements: the key order is unchanged.
		ne.hbs, ne.hbsLen = slices.Clone(e.hbs), e.hbsLen
		for _, mb := range changed {
			i, _ := slices.BinarySearchFunc(ne.hbs, mb.key, func(m member, k string) int { return strings.Compare(m.key, k) })
			ne.hbsLen += len(mb.enc) - len(ne.hbs[i].enc)
			ne.hbs[i] = mb
		}
		return ops, nil
	}
	// Keys added or removed: merge the kept encodings with the new ones.
	ne.hbs = make([]member, 0, len(next))
	c := 0
	for _, mb := range e.hbs {
		for c < len(changed) && changed[c].key < mb.key {
			ne.hbs = append(ne.hbs, changed[c])
			c++
		}
		switch {
		case c < len(changed) && changed[c].key == mb.key:
			ne.hbs = append(ne.hbs, changed[c])
			c++
		case next[mb.key] != nil:
			ne.hbs = append(ne.hbs, mb)
		default:
			ops = append(ops, patchOp{Op: "remove", Path: "/agent_heartbeats/" + escapePointer(mb.key)})
		}
	}
	ne.hbs = append(ne.hbs, changed[c:]...)
	for _, mb := range ne.hbs {
		ne.hbsLen += len(mb.enc)
	}
	return ops, nil
}

// fullEncoded is Next's fallback: everything encoded and validated.
func fullEncoded(m *asdd.Manifest) (*Encoded, json.RawMessage, error) {
	e, err := NewEncoded(m)
	if err != nil {
		return nil, nil, err
	}
	if err := asdd.Validate(e.Bytes()); err != nil {
		return nil, nil, fmt.Errorf("encoded manifest fails its schema: %w", err)
	}
	return e, nil, nil
}

// Slice returns the compact JSON of slice i, as in Bytes.
func (e *Encoded) Slice(i int) []byte {
	if b := e.slices[i]; b != nil || !e.deferred {
		return b
	}
	return e.completed().slices[i]
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value,omitempty"`
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// sameExtra reports whether two manifests' unknown members are alike.
func sameExtra(a, b asdd.Extra) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// sameContext reports whether two project contexts certainly encode alike
// (Apply copies the context on every operation, so pointers say nothing).
func sameContext(a, b *asdd.ProjectContext) bool {
	scoreEq := a.GlobalConfidenceScore == b.GlobalConfidenceScore ||
		a.GlobalConfidenceScore != nil && b.GlobalConfidenceScore != nil &&
			math.Float64bits(*a.GlobalConfidenceScore) == math.Float64bits(*b.GlobalConfidenceScore)
	return scoreEq && a.CurrentSprint == b.CurrentSprint && a.ConfigSHA256 == b.ConfigSHA256 && slices.Equal(a.ProductGoals, b.ProductGoals) &&
		slices.Equal(a.NeedsHumanReview, b.NeedsHumanReview) && (a.ProductGoals == nil) == (b.ProductGoals == nil) &&
		(a.NeedsHumanReview == nil) == (b.NeedsHumanReview == nil) &&
		(a.Extra == nil) == (b.Extra == nil) && bytes.Equal(a.Extra, b.Extra)
}

// appendString appends s as json.Marshal encodes a string: printable
// ASCII other than the characters it escapes is copied as it is; anything
// else takes json.Marshal itself.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(s)
			if err != nil {
				panic(err) // a string always encodes
			}
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
