package jsonval

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"sync/atomic"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// A direct-mode commit (a CLI process) reads the snapshot, applies a small
// patch and writes the snapshot and the journal record with the new
// value's canonical sum. Decoding the whole snapshot into a tree for that
// (maps and interface values for every member of every slice) was a fifth
// of such a process on a 1,000-slice manifest, and writing the canonical
// form from that tree another tenth. DecodeLazy decodes only what a patch
// reaches: a container stays its bytes (a *lazyNode) until a patch goes
// into it, with its canonical form written from its bytes as jsontext
// checks them (canonValue), without a tree.

// lazyNode is a container of a value read by DecodeLazy, not decoded yet:
// its bytes (raw, as in the value read), its canonical form (canon, made
// as it was read: one pass checks it and writes it), and, once something
// needed its members (PatchTree going into it, TreeBytes merging it),
// those members decoded one level (v: a map[string]any or []any whose
// containers are *lazyNode in turn). Decoding on first need sets v once
// (atomically: store/file's Hold mode keeps a lazy tree, which PatchTree
// under the commit lock, and TreeBytes on the snapshot writer and on
// readers, may resolve at the same time; one decoding is kept, and every
// caller uses it); SumTree reads only canon.
type lazyNode struct {
	raw   []byte
	canon []byte
	v     atomic.Pointer[any]
}

// DecodeLazy decodes raw (one JSON value) as Decode does, except that the
// containers under the top level are decoded only when PatchTree, TreeBytes
// or TreeBytesIndented need their members: the result is for those and for
// SumTree (and CanonicalJSON), which write a container never decoded in
// the canonical form made when it was read; no other function of this
// package takes it. It is stricter than Decode (jsontext's rules: a member
// named twice or invalid UTF-8 is an error where Decode would take it as
// encoding/json does): a caller that meets an error takes Decode's tree
// instead.
func DecodeLazy(raw []byte) (any, error) {
	return decodeLevel(raw)
}

// resolve returns v decoded one level: a *lazyNode's members (decoded on
// first need), anything else as it is.
func resolve(v any) (any, error) {
	n, ok := v.(*lazyNode)
	if !ok {
		return v, nil
	}
	if p := n.v.Load(); p != nil {
		return *p, nil
	}
	d, err := decodeLevel(n.raw)
	if err != nil {
		return nil, err
	}
	n.v.CompareAndSwap(nil, &d) // or another caller's decoding was kept first
	return *n.v.Load(), nil
}

// lazyDecoder decodes one level of a lazy tree: the containers it meets
// become *lazyNode, their canonical forms written one after the other in
// arena by c (whose duplicate-name check replaces jsontext's), each
// node's sliced from it once the level is read.
type lazyDecoder struct {
	dec   *jsontext.Decoder
	raw   []byte
	c     canonWriter
	arena []byte
	nodes []*lazyNode
	spans []int // the start of each node's canonical form in arena
}

// decodeLevel decodes the one value raw holds: a scalar as readTree does,
// a container with its own containers left as *lazyNode.
func decodeLevel(raw []byte) (any, error) {
	dec := decoders.Get().(*jsontext.Decoder)
	// A bytes.Buffer is read in place: no copy into the decoder's own
	// buffer.
	dec.Reset(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true))
	defer putDecoder(dec)
	ld := &lazyDecoder{dec: dec, raw: raw}
	var v any
	var err error
	switch dec.PeekKind() {
	case '{':
		v, err = ld.object()
	case '[':
		v, err = ld.array()
	default:
		v, _, err = readTree(dec)
	}
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errNotFast
	}
	ld.spans = append(ld.spans, len(ld.arena))
	for i, n := range ld.nodes {
		n.canon = ld.arena[ld.spans[i]:ld.spans[i+1]:ld.spans[i+1]]
	}
	return v, nil
}

func (ld *lazyDecoder) object() (any, error) {
	dec := ld.dec
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	m := map[string]any{}
	for {
		switch dec.PeekKind() {
		case '}':
			_, err := dec.ReadToken()
			return m, err
		case '"':
		default:
			return nil, errNotFast
		}
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		k := name.String()
		if _, dup := m[k]; dup {
			return nil, errNotFast
		}
		v, err := ld.member()
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
}

func (ld *lazyDecoder) array() (any, error) {
	dec := ld.dec
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	a := []any{}
	for {
		switch dec.PeekKind() {
		case ']':
			_, err := dec.ReadToken()
			return a, err
		case 0:
			return nil, errNotFast
		}
		v, err := ld.member()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
}

// member reads a member's or an element's value: a container as a
// *lazyNode of its bytes, its canonical form written as it is read, a
// scalar decoded.
func (ld *lazyDecoder) member() (any, error) {
	dec := ld.dec
	switch dec.PeekKind() {
	case '{', '[':
		start := int(dec.InputOffset())
		for start < len(ld.raw) && (isSpace(ld.raw[start]) || ld.raw[start] == ':' || ld.raw[start] == ',') {
			start++
		}
		if ld.arena == nil {
			ld.arena = make([]byte, 0, len(ld.raw))
		}
		ld.spans = append(ld.spans, len(ld.arena))
		var err error
		if ld.arena, err = ld.c.canonValue(dec, ld.raw, ld.arena); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		if end > len(ld.raw) || start >= end {
			return nil, errNotFast
		}
		n := &lazyNode{raw: ld.raw[start:end:end]}
		ld.nodes = append(ld.nodes, n)
		return n, nil
	}
	v, _, err := readTree(dec)
	return v, err
}

// rawMember is a member of an object canonValue is writing: its bytes in
// the output (name, colon and value) from start to end, and its name as
// read, for sorting: raw[key:key+keyLen] (the name as it is in the
// input), or unescaped in canonWriter.escaped[-key-1]. No pointers: the
// sort moves them without write barriers.
type rawMember struct {
	start, end  int
	key, keyLen int
}

// canonValue appends to out the canonical form of the next value dec
// reads from raw (its input): what writeCanonical writes for the value
// Decode gives, read with jsontext without decoding it. A member named
// twice is an error (dec allows them: this check comes with the sort).
func (c *canonWriter) canonValue(dec *jsontext.Decoder, raw, out []byte) ([]byte, error) {
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		obj := len(out)
		out = append(out, '{')
		base := len(c.members)
		for {
			switch dec.PeekKind() {
			case '}':
			case '"':
				name, err := dec.ReadValue()
				if err != nil {
					return nil, err
				}
				m := rawMember{start: len(out)}
				if plainString(name) {
					end := int(dec.InputOffset())
					if end > len(raw) || end < len(name) {
						return nil, errNotFast
					}
					m.key, m.keyLen = end-len(name)+1, len(name)-2
					out = append(out, name...)
				} else {
					k, err := jsontext.AppendUnquote(nil, name)
					if err != nil {
						return nil, err
					}
					c.escaped = append(c.escaped, k)
					m.key = -len(c.escaped)
					if out, err = appendString(out, k); err != nil {
						return nil, err
					}
				}
				out = append(out, ':')
				if out, err = c.canonValue(dec, raw, out); err != nil {
					return nil, err
				}
				m.end = len(out)
				c.members = append(c.members, m)
				out = append(out, ',')
				continue
			default:
				return nil, errNotFast
			}
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
			break
		}
		out, err := c.sortMembers(raw, out, obj, c.members[base:])
		c.members = c.members[:base]
		if base == 0 {
			c.escaped = c.escaped[:0] // no object is being written
		}
		if err != nil {
			return nil, err
		}
		return append(out, '}'), nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		out = append(out, '[')
		for n := 0; ; n++ {
			switch dec.PeekKind() {
			case ']':
				if _, err := dec.ReadToken(); err != nil {
					return nil, err
				}
				return append(out, ']'), nil
			case 0:
				return nil, errNotFast
			}
			if n > 0 {
				out = append(out, ',')
			}
			var err error
			if out, err = c.canonValue(dec, raw, out); err != nil {
				return nil, err
			}
		}
	case '"':
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if plainString(v) {
			return append(out, v...), nil
		}
		s, err := jsontext.AppendUnquote(nil, v)
		if err != nil {
			return nil, err
		}
		return appendString(out, s)
	case 'n', 'f', 't', '0':
		// Literals and numbers as written (numbers are json.Number in a
		// tree, written as read).
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		return append(out, v...), nil
	}
	_, err := dec.ReadToken()
	if err == nil {
		err = errNotFast
	}
	return nil, err
}

// sortMembers puts the members of the object written from out[obj] (its
// '{', then each member followed by a comma) in the order of their names,
// without the last comma. A name given twice is an error.
func (c *canonWriter) sortMembers(raw, out []byte, obj int, ms []rawMember) ([]byte, error) {
	if len(ms) == 0 {
		return out, nil
	}
	key := func(m *rawMember) []byte {
		if m.key < 0 {
			return c.escaped[-m.key-1]
		}
		return raw[m.key : m.key+m.keyLen]
	}
	sorted := true
	for i := 1; i < len(ms); i++ {
		switch bytes.Compare(key(&ms[i-1]), key(&ms[i])) {
		case 0:
			return nil, errNotFast
		case 1:
			sorted = false
		}
	}
	if sorted {
		return out[:len(out)-1], nil
	}
	if len(ms) <= 16 {
		// An insertion sort: the members of the objects of a manifest
		// are a few each.
		for i := 1; i < len(ms); i++ {
			for j := i; j > 0 && bytes.Compare(key(&ms[j-1]), key(&ms[j])) > 0; j-- {
				ms[j-1], ms[j] = ms[j], ms[j-1]
			}
		}
	} else {
		slices.SortFunc(ms, func(a, b rawMember) int { return bytes.Compare(key(&a), key(&b)) })
	}
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(key(&ms[i-1]), key(&ms[i])) {
			return nil, errNotFast
		}
	}
	c.tmp = append(c.tmp[:0], out[obj+1:]...)
	out = out[:obj+1]
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, c.tmp[m.start-obj-1:m.end-obj-1]...)
	}
	return out, nil
}

// plainString reports whether a JSON string (quoted) is written in the
// canonical form as it is: printable ASCII with nothing writeString
// escapes.
func plainString(q []byte) bool {
	if len(q) < 2 {
		return false
	}
	for _, c := range q[1 : len(q)-1] {
		if !plainByte[c] {
			return false
		}
	}
	return true
}

// plainByte tells the bytes writeString writes as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s as writeString writes it.
func appendString(out, s []byte) ([]byte, error) {
	b, err := json.Marshal(string(s))
	if err != nil {
		return nil, err
	}
	return append(out, b...), nil
}
