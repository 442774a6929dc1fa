package jsonval

import (
	"bufio"
	"bytes"
	"errors"
	"reflect"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// TreeBytes returns the compact bytes of tree (not nil), a value decoded
// as ParseValue decodes and changed since by patches (PatchTree), keeping
// the member order of anchor, the bytes of an earlier version whose
// decoded tree is anchorTree (nil anchor: none). It walks anchor and tree
// together: a container tree shares with anchorTree (PatchTree copies only
// the containers along a patch's paths) is copied from anchor as it is, a
// member tree removed is left out, and a member it added is written after
// the anchor's, in key order, in canonical form. An anchor jsontext
// refuses (a member named twice, invalid UTF-8) gives tree's canonical
// form instead. The cost is a scan of anchor plus the encoding of what
// changed.
func TreeBytes(anchor []byte, anchorTree, tree any) ([]byte, error) {
	if anchor == nil {
		return CanonicalJSON(tree)
	}
	var buf bytes.Buffer
	buf.Grow(len(anchor) + len(anchor)/8)
	w := bufio.NewWriterSize(&buf, 32<<10)
	dec := jsontext.NewDecoder(bytes.NewReader(anchor))
	if err := merge(w, dec, anchorTree, tree); err != nil {
		return CanonicalJSON(tree)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var errNotAnchor = errors.New("anchor does not match its tree")

// merge writes t, reading from dec the anchor's encoding of a, the value
// at the same place in the anchor's tree.
func merge(w *bufio.Writer, dec *jsontext.Decoder, a, t any) error {
	if shared(a, t) {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		w.Write(v)
		return nil
	}
	switch tv := t.(type) {
	case map[string]any:
		am, ok := a.(map[string]any)
		if !ok || dec.PeekKind() != '{' {
			break
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		w.WriteByte('{')
		n, seen := 0, 0
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			name := tok.String()
			child, kept := tv[name]
			prev, had := am[name]
			if !had {
				return errNotAnchor
			}
			if !kept {
				if err := dec.SkipValue(); err != nil {
					return err
				}
				continue
			}
			seen++
			if n > 0 {
				w.WriteByte(',')
			}
			n++
			writeString(w, name)
			w.WriteByte(':')
			if err := merge(w, dec, prev, child); err != nil {
				return err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
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
				writeString(w, k)
				w.WriteByte(':')
				if err := writeCanonical(w, tv[k]); err != nil {
					return err
				}
			}
		}
		w.WriteByte('}')
		return nil
	case []any:
		aa, ok := a.([]any)
		if !ok || dec.PeekKind() != '[' {
			break
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		w.WriteByte('[')
		i := 0
		for ; dec.PeekKind() != ']'; i++ {
			if i >= len(aa) {
				return errNotAnchor
			}
			if i >= len(tv) {
				if err := dec.SkipValue(); err != nil {
					return err
				}
				continue
			}
			if i > 0 {
				w.WriteByte(',')
			}
			if err := merge(w, dec, aa[i], tv[i]); err != nil {
				return err
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		for ; i < len(tv); i++ {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := writeCanonical(w, tv[i]); err != nil {
				return err
			}
		}
		w.WriteByte(']')
		return nil
	}
	// A scalar that changed, or a container that replaced another kind of
	// value: written anew.
	if err := dec.SkipValue(); err != nil {
		return err
	}
	return writeCanonical(w, t)
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
