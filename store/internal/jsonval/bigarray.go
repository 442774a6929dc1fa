package jsonval

import (
	"unsafe"

	"github.com/custodian-dev/custodian/internal/chunked"
)

// bigArray is a long array of a tree made by PatchTree (the ASDD
// manifest's slices): its elements in a persistent chunked list
// (internal/chunked: a root of groups of 64 leaves of 64 elements), so that
// a patch that changes one element copies the root, that element's group
// and its leaf — about 1.6 KB at 40,000 elements — not the whole array (a
// commit on a manifest of 10,000 slices copied 160 KB of interface values,
// and the garbage collector scanned them, per commit), nor a flat list of
// its chunks (16.7 KB at 40,000 elements). A tree holds it as a *bigArray;
// like every container of a tree it is never changed once PatchTree has
// returned it, and successive trees share its groups and leaves. Every
// function of this package that reads a tree reads it as the array it
// stands for (arrayOf).
type bigArray struct {
	l chunked.List[any]
	// from is the list l was made from by the PatchTree call that made
	// this bigArray (the argument of l.SetFrom: what l holds of it is
	// copied before it is written, what l has copied already is written
	// in place). Read only while that call runs.
	from chunked.List[any]
	n    int // l.Len()
}

// bigArrayMin is the length from which PatchTree keeps a copied array as
// a bigArray: below it, copying the array costs no more than copying a
// leaf and a group. A variable so that tests can make small documents'
// arrays big (SmallChunks).
var bigArrayMin = 256

// newBigArray makes a bigArray of the elements of flat (copied: flat is
// not kept).
func newBigArray(flat []any) *bigArray {
	return &bigArray{l: chunked.Of(flat...), n: len(flat)}
}

func (b *bigArray) at(i int) any { return b.l.At(i) }

// flat returns the elements as one new array.
func (b *bigArray) flat() []any { return b.l.Collect() }

// chunks iterates over the elements a leaf at a time (an iter.Seq2 as a
// method value: range x.chunks): each chunk's index and its elements (the
// list's memory: read, never written or kept).
func (b *bigArray) chunks(yield func(int, []any) bool) { b.l.Leaves()(yield) }

// array is an array of a tree as read: a []any or a *bigArray.
type array struct {
	flat []any
	big  *bigArray
}

// arrayOf returns v as an array; ok is false when v is not one.
func arrayOf(v any) (a array, ok bool) {
	switch x := v.(type) {
	case []any:
		return array{flat: x}, true
	case *bigArray:
		return array{big: x}, true
	}
	return array{}, false
}

func (a array) len() int {
	if a.big != nil {
		return a.big.n
	}
	return len(a.flat)
}

func (a array) at(i int) any {
	if a.big != nil {
		return a.big.at(i)
	}
	return a.flat[i]
}

// same reports whether a and b are the same array of a tree (trees are
// never changed in place, so the same array has the same elements).
func (a array) same(b array) bool {
	if a.len() != b.len() {
		return false
	}
	if a.big != nil || b.big != nil {
		return a.big == b.big
	}
	return len(a.flat) == 0 || &a.flat[0] == &b.flat[0]
}

// patchBig is patchAt for an element of a bigArray: index i (checked by
// the caller: within the array, or its length for an append) and the
// rest of the path. An insertion before the end or a removal makes a
// plain array of the result (patchAt again); the next patch makes it a
// bigArray again.
func (m made) patchBig(n *bigArray, i int, segs []string, op string, val any) (any, error) {
	last := len(segs) == 1
	if last && (op == "remove" || op == "add" && i < n.n) {
		return m.patchAt(n.flat(), segs, op, val)
	}
	c := n
	if p := unsafe.Pointer(n); !m.has(p) {
		// A new bigArray over the same list: its first SetFrom copies
		// the root, the group and the leaf it writes.
		c = &bigArray{l: n.l, from: n.l, n: n.n}
		m[unsafe.Pointer(c)] = struct{}{}
	}
	if last && op == "add" { // an append: i == n.n
		c.l = c.l.Grow(c.n + 1)
		c.n++
		c.l.SetFrom(c.from, i, val)
		return c, nil
	}
	if last {
		c.l.SetFrom(c.from, i, val)
		return c, nil
	}
	nc, err := m.patchAt(c.l.At(i), segs[1:], op, val)
	if err != nil {
		return nil, err
	}
	c.l.SetFrom(c.from, i, nc)
	return c, nil
}

// DecodeHeld is DecodeLazy for a value kept to take commits (store/file's
// Hold mode): the top level's long arrays (the manifest's slices) are
// decoded one level further now, as big arrays of lazy elements, rather
// than by the first patch that goes into them, under the commit lock
// (≈ 25 ms at 40,000 slices, while every commit waited). Its tree is for
// the functions DecodeLazy's is for, and DiffTrees.
func DecodeHeld(raw []byte) (any, error) {
	t, err := DecodeLazy(raw)
	if err != nil {
		return nil, err
	}
	m, ok := t.(map[string]any)
	if !ok {
		return t, nil
	}
	for k, v := range m { // m is new: no one else holds it yet
		if _, ok := v.(*lazyNode); !ok {
			continue
		}
		r, err := resolve(v)
		if err != nil {
			return nil, err
		}
		if a, ok := r.([]any); ok && len(a) >= bigArrayMin {
			m[k] = newBigArray(a)
		}
	}
	return m, nil
}
