package jsonval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
)

// TreeBytes returns the bytes of tree (not nil), a value decoded as
// ParseValue decodes and changed since by patches (PatchTree), keeping
// the member order of anchor, the bytes (valid JSON) of an earlier version
// whose decoded tree is anchorTree (nil anchor: none). It walks anchor and
// tree together: a container tree shares with anchorTree (PatchTree copies
// only the containers along a patch's paths) is copied from anchor as it
// is, a member tree removed is left out, and a member it added is written
// after the anchor's, in key order, in canonical form. The result is
// compact where tree changed and as anchor was elsewhere. An anchor that
// does not match its tree (a member named twice, a name that is not valid
// UTF-8) gives tree's canonical form instead. The cost is a scan of anchor
// (skipping what is shared, without decoding it) plus the encoding of what
// changed.
func TreeBytes(anchor []byte, anchorTree, tree any) ([]byte, error) {
	if anchor == nil {
		return CanonicalJSON(tree)
	}
	b, err := treeBytes(anchor, anchorTree, tree, false)
	if err != nil {
		return CanonicalJSON(tree)
	}
	return b, nil
}

// TreeBytesIndented returns IndentValid(TreeBytes(anchor, anchorTree,
// tree)), the snapshot file's form, written indented as it goes instead
// of compact and re-indented afterwards: a container shared with the
// anchor is copied as it is when the anchor has it in that form already
// (checked as it is copied: a snapshot this package indented), so the cost
// is a scan of anchor plus the encoding of what changed. An anchor in
// another form (white space of its own, compact) falls back to indenting
// the whole of TreeBytes' result.
func TreeBytesIndented(anchor []byte, anchorTree, tree any) ([]byte, error) {
	if anchor != nil {
		if b, err := treeBytes(anchor, anchorTree, tree, true); err == nil {
			return b, nil
		}
	}
	raw, err := TreeBytes(anchor, anchorTree, tree)
	if err != nil {
		return nil, err
	}
	return indentValid(raw), nil
}

// treeBytes is TreeBytes' merge, indented (with the final newline) when
// indent is set.
func treeBytes(anchor []byte, anchorTree, tree any, indent bool) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(anchor) + len(anchor)/8)
	tw := &treeWriter{w: bufio.NewWriterSize(&buf, 32<<10), indent: indent}
	sc := &scanner{b: anchor}
	if err := merge(tw, sc, anchorTree, tree, 0); err != nil {
		return nil, err
	}
	if indent {
		tw.w.WriteByte('\n')
	}
	if err := tw.w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// treeWriter is where merge writes: compact, or indented as IndentValid
// indents.
type treeWriter struct {
	w       *bufio.Writer
	indent  bool
	scratch bytes.Buffer // a changed value's canonical form, before it is indented
}

// newline starts a line depth containers deep (indented only).
func (tw *treeWriter) newline(depth int) {
	if tw.indent {
		writeNewline(tw.w, depth)
	}
}

// colon ends a member name.
func (tw *treeWriter) colon() {
	if tw.indent {
		tw.w.WriteString(": ")
	} else {
		tw.w.WriteByte(':')
	}
}

// canonical writes v in canonical form, indented for depth when indenting.
func (tw *treeWriter) canonical(v any, depth int) error {
	if !tw.indent {
		return writeCanonical(tw.w, v)
	}
	tw.scratch.Reset()
	bw := bufio.NewWriterSize(&tw.scratch, 4<<10)
	if err := writeCanonical(bw, v); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	indentBody(tw.w, tw.scratch.Bytes(), depth)
	return nil
}

var errNotIndented = errors.New("anchor is not in the indented form")

// skipIndented is skip for a value depth containers deep that the anchor
// must have exactly as IndentValid writes it there (errNotIndented when
// not): a newline and two spaces a level after every '{' or '[' of a
// container that is not empty, after every ',' and before the closing
// bracket, one space after every ':', and no other white space outside
// strings. It checks as it scans: one pass over the bytes it returns.
func (s *scanner) skipIndented(depth int) ([]byte, error) {
	s.space()
	if s.i >= len(s.b) {
		return nil, errNotAnchor
	}
	if c := s.b[s.i]; c != '{' && c != '[' {
		return s.skip()
	}
	v, start, base := s.b, s.i, depth
	for i := s.i; i < len(v); {
		switch v[i] {
		case '"':
			end, err := s.stringEnd(i)
			if err != nil {
				return nil, err
			}
			i = end
		case '{', '[':
			i++
			if i < len(v) && (v[i] == '}' || v[i] == ']') {
				i++
				if depth == base {
					s.i = i
					return v[start:i], nil
				}
				continue
			}
			depth++
			if i = indentEnd(v, i, depth); i < 0 {
				return nil, errNotIndented
			}
		case ',':
			if i = indentEnd(v, i+1, depth); i < 0 {
				return nil, errNotIndented
			}
		case ':':
			i++
			if i+1 >= len(v) || v[i] != ' ' || isSpace(v[i+1]) {
				return nil, errNotIndented
			}
			i++
		case '\n':
			depth--
			if i = indentEnd(v, i, depth); i < 0 || v[i] != '}' && v[i] != ']' {
				return nil, errNotIndented
			}
			i++
			if depth == base {
				s.i = i
				return v[start:i], nil
			}
		case ' ', '\t', '\r', '}', ']':
			return nil, errNotIndented // white space out of place, or a bracket not on a line of its own
		default:
			i++
		}
	}
	return nil, errNotAnchor
}

// indentEnd checks that v[i:] starts with a newline and the indent of
// depth, followed by something other than white space, and returns the
// index past the indent (-1: it does not).
func indentEnd(v []byte, i, depth int) int {
	if i >= len(v) || v[i] != '\n' {
		return -1
	}
	i++
	end := i + 2*depth
	if end >= len(v) {
		return -1
	}
	for ; i < end; i++ {
		if v[i] != ' ' {
			return -1
		}
	}
	if isSpace(v[i]) {
		return -1
	}
	return i
}

var errNotAnchor = errors.New("anchor does not match its tree")

// scanner reads valid JSON (the anchor) without checking it again: it
// finds where values end, and reads member names.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

// peek returns the next byte after white space (0 at the end).
func (s *scanner) peek() byte {
	s.space()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// stringEnd returns the index just past the string starting at i.
func (s *scanner) stringEnd(i int) (int, error) {
	for j := i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errNotAnchor
}

// skip moves past the next value and returns its bytes.
func (s *scanner) skip() ([]byte, error) {
	s.space()
	start := s.i
	if s.i >= len(s.b) {
		return nil, errNotAnchor
	}
	switch s.b[s.i] {
	case '"':
		end, err := s.stringEnd(s.i)
		if err != nil {
			return nil, err
		}
		s.i = end
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				end, err := s.stringEnd(s.i)
				if err != nil {
					return nil, err
				}
				s.i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return s.b[start:s.i], nil
			}
		}
		return nil, errNotAnchor
	default:
		for s.i < len(s.b) {
			c := s.b[s.i]
			if c == ',' || c == '}' || c == ']' || isSpace(c) {
				break
			}
			s.i++
		}
	}
	return s.b[start:s.i], nil
}

// name reads a member name and its colon.
func (s *scanner) name() (string, error) {
	if s.peek() != '"' {
		return "", errNotAnchor
	}
	end, err := s.stringEnd(s.i)
	if err != nil {
		return "", err
	}
	raw := s.b[s.i:end]
	s.i = end
	if s.peek() != ':' {
		return "", errNotAnchor
	}
	s.i++
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return "", errNotAnchor
	}
	return name, nil
}

// merge writes t, reading from sc the anchor's encoding of a, the value at
// the same place in the anchor's tree, depth containers deep.
func merge(tw *treeWriter, sc *scanner, a, t any, depth int) error {
	w := tw.w
	if shared(a, t) {
		var v []byte
		var err error
		if tw.indent {
			v, err = sc.skipIndented(depth)
		} else {
			v, err = sc.skip()
		}
		if err != nil {
			return err
		}
		w.Write(v)
		return nil
	}
	switch tv := t.(type) {
	case map[string]any:
		am, ok := a.(map[string]any)
		if !ok || sc.peek() != '{' {
			break
		}
		sc.i++
		w.WriteByte('{')
		n, seen, members := 0, 0, 0
		for {
			c := sc.peek()
			if c == '}' {
				sc.i++
				break
			}
			if c == ',' {
				sc.i++
			} else if members > 0 {
				return errNotAnchor
			}
			name, err := sc.name()
			if err != nil {
				return err
			}
			members++
			child, kept := tv[name]
			prev, had := am[name]
			if !had {
				return errNotAnchor
			}
			if !kept {
				if _, err := sc.skip(); err != nil {
					return err
				}
				continue
			}
			seen++
			if n > 0 {
				w.WriteByte(',')
			}
			n++
			tw.newline(depth + 1)
			writeString(w, name)
			tw.colon()
			if err := merge(tw, sc, prev, child, depth+1); err != nil {
				return err
			}
		}
		if members != len(am) {
			return errNotAnchor // a member named twice
		}
		if seen < len(tv) {
			added := make([]string, 0, len(tv)-seen)
			for k := range tv {
				if _, had := am[k]; !had {
					added = append(added, k)
				}
			}
			slices.Sort(added)
			for _, k := range added {
				if n > 0 {
					w.WriteByte(',')
				}
				n++
				tw.newline(depth + 1)
				writeString(w, k)
				tw.colon()
				if err := tw.canonical(tv[k], depth+1); err != nil {
					return err
				}
			}
		}
		if n > 0 {
			tw.newline(depth)
		}
		w.WriteByte('}')
		return nil
	case []any:
		aa, ok := a.([]any)
		if !ok || sc.peek() != '[' {
			break
		}
		ta := tv
		sc.i++
		w.WriteByte('[')
		i := 0
		for ; ; i++ {
			c := sc.peek()
			if c == ']' {
				sc.i++
				break
			}
			if c == ',' {
				sc.i++
			} else if i > 0 {
				return errNotAnchor
			}
			if i >= len(aa) {
				return errNotAnchor
			}
			if i >= len(ta) {
				if _, err := sc.skip(); err != nil {
					return err
				}
				continue
			}
			if i > 0 {
				w.WriteByte(',')
			}
			tw.newline(depth + 1)
			if err := merge(tw, sc, aa[i], ta[i], depth+1); err != nil {
				return err
			}
		}
		if i != len(aa) {
			return errNotAnchor
		}
		for ; i < len(ta); i++ {
			if i > 0 {
				w.WriteByte(',')
			}
			tw.newline(depth + 1)
			if err := tw.canonical(ta[i], depth+1); err != nil {
				return err
			}
		}
		if len(ta) > 0 {
			tw.newline(depth)
		}
		w.WriteByte(']')
		return nil
	}
	// A scalar that changed, or a container that replaced another kind of
	// value: written anew.
	if _, err := sc.skip(); err != nil {
		return err
	}
	return tw.canonical(t, depth)
}

// shared reports whether t is a, unchanged: the same container (trees are
// never changed in place, so the same map or slice has the same
// contents), or an equal scalar.
func shared(a, t any) bool {
	switch x := t.(type) {
	case map[string]any:
		y, ok := a.(map[string]any)
		return ok && len(x) == len(y) && reflect.ValueOf(x).Pointer() == reflect.ValueOf(y).Pointer()
	case []any:
		y, ok := a.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	}
	switch a.(type) {
	case map[string]any, []any:
		return false
	}
	return scalarEqual(a, t)
}

// EqualTrees reports whether two decoded trees are the same value (numbers
// compared as written, as the canonical form writes them).
func EqualTrees(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !EqualTrees(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualTrees(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return scalarEqual(a, b)
}
