package jsonval

import "unsafe"

// bigArray is a long array of a tree made by PatchTree (the ASDD
// manifest's slices): its elements in chunks of chunkLen (the last may be
// shorter), so that a patch that changes one element copies the list of
// chunks and that element's chunk, not the whole array — a commit on a
// manifest of 10,000 slices copied 160 KB of interface values, and the
// garbage collector scanned them, per commit. A tree holds it as a
// *bigArray; like every container of a tree it is never changed once
// PatchTree has returned it, and successive trees share its chunks.
// Every function of this package that reads a tree reads it as the array
// it stands for (arrayOf).
type bigArray struct {
	chunks [][]any
	n      int
}

// chunkLen is the number of elements of a bigArray's chunks, and
// bigArrayMin the length from which PatchTree keeps a copied array as a
// bigArray: below it, copying the array costs no more than copying the
// list of chunks. Variables so that tests can exercise chunk boundaries
// on small documents (setChunking).
var (
	chunkLen    = 64
	bigArrayMin = 256
)

// newBigArray makes a bigArray of the elements of flat, sharing its
// memory: the chunks are capped subslices of flat, which a tree never
// changes.
func newBigArray(flat []any) *bigArray {
	b := &bigArray{chunks: make([][]any, 0, (len(flat)+chunkLen-1)/chunkLen), n: len(flat)}
	for i := 0; i < len(flat); i += chunkLen {
		j := min(i+chunkLen, len(flat))
		b.chunks = append(b.chunks, flat[i:j:j])
	}
	return b
}

func (b *bigArray) at(i int) any { return b.chunks[i/chunkLen][i%chunkLen] }

// flat returns the elements as one new array.
func (b *bigArray) flat() []any {
	out := make([]any, 0, b.n)
	for _, c := range b.chunks {
		out = append(out, c...)
	}
	return out
}

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
		c = &bigArray{chunks: make([][]any, len(n.chunks), len(n.chunks)+1), n: n.n}
		copy(c.chunks, n.chunks)
		m[unsafe.Pointer(c)] = struct{}{}
	}
	k, j := i/chunkLen, i%chunkLen
	if last && op == "add" { // an append: i == n.n
		ch := make([]any, j+1, chunkLen)
		if k == len(c.chunks) {
			c.chunks = append(c.chunks, ch)
		} else {
			copy(ch, c.chunks[k])
			c.chunks[k] = ch
		}
		ch[j] = val
		m[unsafe.Pointer(unsafe.SliceData(ch))] = struct{}{}
		c.n++
		return c, nil
	}
	ch := c.chunks[k]
	if p := unsafe.Pointer(unsafe.SliceData(ch)); !m.has(p) {
		ch = append([]any(nil), ch...)
		c.chunks[k] = ch
		m[unsafe.Pointer(unsafe.SliceData(ch))] = struct{}{}
	}
	if last {
		ch[j] = val
		return c, nil
	}
	nc, err := m.patchAt(ch[j], segs[1:], op, val)
	if err != nil {
		return nil, err
	}
	ch[j] = nc
	return c, nil
}
