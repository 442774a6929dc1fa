// Package merge3 is the three-way merge of a JSON document that the file
// store uses to adopt a direct edit (docs/store.md, "Direct edits"): the
// edit was made on one revision (base), commits came after it (head), and
// only what the edit itself changed (base → edit) is carried onto head,
// never what would undo or overwrite what those commits changed.
//
// The rules, member by member (a missing member is a value too):
//
//   - the edit left it as base had it: head's stands;
//   - head left it as base had it, or both made the same change: the edit's;
//   - both changed it, differently: two objects are merged member by
//     member, two arrays element by element while their positions still
//     match (neither side removed an element; at most one of them added
//     elements, at the end, or both added the same ones); anything else is
//     a Conflict naming the member.
//
// Arrays merge by position only: an element inserted or removed in the
// middle shifts the others, so an array that both sides changed and one of
// them shortened is a conflict, never a guess.
package merge3

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// Conflict is a member that the edit and a later commit both changed, in
// different ways; the edit cannot be carried onto head without undoing or
// overwriting that commit's change.
type Conflict struct {
	// Path is the member's RFC 6901 pointer ("" for the whole document).
	Path string
	// Edit and Head say what each side did: "changed", "removed" or "added".
	Edit, Head string
}

func (c *Conflict) Error() string {
	where := c.Path
	if where == "" {
		where = "the whole document"
	}
	return fmt.Sprintf("%s: the edit %s it and a later commit %s it", where, c.Edit, c.Head)
}

// ErrNotJSON wraps a base, edit or head that is not a JSON value.
var ErrNotJSON = errors.New("not a JSON value")

// absent stands for a member that is not there.
type absentT struct{}

var absent any = absentT{}

// Merge carries the change from base to edit onto head and returns the
// result (head's bytes, member order kept, with the edit's change applied)
// and the RFC 6902 patch from head to it ("[]" when the edit changes
// nothing head does not already hold). A *Conflict when the edit and head
// changed the same member differently.
func Merge(base, edit, head []byte) (merged []byte, patch json.RawMessage, err error) {
	var t [3]any
	for i, raw := range [][]byte{base, edit, head} {
		if t[i], err = jsonval.Decode(raw); err != nil {
			return nil, nil, fmt.Errorf("merge: %w: %v", ErrNotJSON, err)
		}
	}
	var m merger
	want, err := m.node("", t[0], t[1], t[2])
	if err != nil {
		return nil, nil, err
	}
	if len(m.ops) == 0 {
		return head, json.RawMessage("[]"), nil
	}
	if patch, err = json.Marshal(m.ops); err != nil {
		return nil, nil, fmt.Errorf("merge: %w", err)
	}
	if equal(t[0], t[2]) {
		return edit, patch, nil // nothing came after the base: the edit as it is
	}
	// The patch keeps head's member order; where the patch library
	// mishandles a path (it ignores one through a member named ""), the
	// result is written from the merged tree instead.
	merged, err = jsonval.ApplyPatch(head, patch)
	if err == nil {
		var got any
		if got, err = jsonval.Decode(merged); err == nil && equal(got, want) {
			return merged, patch, nil
		}
	}
	if merged, err = jsonval.CanonicalJSON(want); err != nil {
		return nil, nil, fmt.Errorf("merge: %w", err)
	}
	return merged, patch, nil
}

// op is one operation of the patch Merge returns; Value is nil for a
// remove (a pointer, so that a null value is written).
type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value *any   `json:"value,omitempty"`
}

type merger struct{ ops []op }

// node merges one member at path: b, e, h are base's, the edit's and
// head's values (absent when missing); ops turn head into the result.
func (m *merger) node(path string, b, e, h any) (any, error) {
	if equal(e, b) || equal(e, h) {
		return h, nil // head's stands (or already is the edit's)
	}
	// Containers are merged member by member even when only the edit
	// changed them, so that the patch is as small as the edit's change
	// and head's member order stays.
	switch bv := b.(type) {
	case map[string]any:
		ev, ok1 := e.(map[string]any)
		hv, ok2 := h.(map[string]any)
		if ok1 && ok2 {
			return m.object(path, bv, ev, hv)
		}
	case []any:
		ev, ok1 := e.([]any)
		hv, ok2 := h.([]any)
		if ok1 && ok2 {
			if r, err := m.array(path, bv, ev, hv); err == nil || !errors.Is(err, errShifted) {
				return r, err
			}
		}
	}
	if equal(h, b) {
		m.take(path, e, h)
		return e, nil
	}
	return nil, &Conflict{Path: path, Edit: change(b, e), Head: change(b, h)}
}

// take makes the member at path the edit's value e (head holds h).
func (m *merger) take(path string, e, h any) {
	switch {
	case e == absent:
		m.ops = append(m.ops, op{Op: "remove", Path: path})
	case h == absent:
		m.ops = append(m.ops, op{Op: "add", Path: path, Value: &e})
	default:
		m.ops = append(m.ops, op{Op: "replace", Path: path, Value: &e})
	}
}

func (m *merger) object(path string, b, e, h map[string]any) (any, error) {
	keys := make([]string, 0, len(b)+len(e)+len(h))
	for _, o := range []map[string]any{b, e, h} {
		for k := range o {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make(map[string]any, len(h))
	for _, k := range slices.Compact(keys) {
		r, err := m.node(path+"/"+escape(k), member(b, k), member(e, k), member(h, k))
		if err != nil {
			return nil, err
		}
		if r != absent {
			out[k] = r
		}
	}
	return out, nil
}

var errShifted = errors.New("array positions shifted")

// array merges two arrays that both sides changed, element by element,
// when their positions still match: nobody removed an element, and at
// most one side appended (or both appended the same elements).
func (m *merger) array(path string, b, e, h []any) (any, error) {
	lb, le, lh := len(b), len(e), len(h)
	if le < lb || lh < lb {
		return nil, errShifted
	}
	if le > lb && lh > lb && !equal(e[lb:], h[lb:]) {
		return nil, errShifted
	}
	out := make([]any, lb, max(le, lh))
	for i := range lb {
		r, err := m.node(path+"/"+strconv.Itoa(i), b[i], e[i], h[i])
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	if lh > lb {
		return append(out, h[lb:]...), nil
	}
	for _, v := range e[lb:] {
		m.ops = append(m.ops, op{Op: "add", Path: path + "/-", Value: &v})
	}
	return append(out, e[lb:]...), nil
}

func member(o map[string]any, k string) any {
	if v, ok := o[k]; ok {
		return v
	}
	return absent
}

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

func change(b, x any) string {
	switch {
	case x == absent:
		return "removed"
	case b == absent:
		return "added"
	}
	return "changed"
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
