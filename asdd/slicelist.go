package asdd

import (
	"iter"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SliceList is a manifest's list of slices: a persistent list kept in
// chunks of a fixed size, so that a list that differs from another in a
// few positions shares every other chunk with it. Set and Append never
// write into memory a list made before them shares: a SliceList value
// copied before a Set or Append is another list, unchanged. Each copies
// only the chunk it changes and the chunk index — O(n/chunk + chunk)
// pointers, not O(n) — so that a commit that changes one slice of a large
// manifest does not copy the whole list. The zero value is an empty list.
//
// Its JSON is an array of slices ([] when empty; null reads as empty).
type SliceList struct {
	chunks []*sliceChunk // never written once shared; the last one may be partly used
	n      int
}

// sliceChunkSize is the number of slices per chunk: a Set copies one
// chunk and an index of n/sliceChunkSize pointers, both a few kilobytes
// at 40,000 slices.
const sliceChunkSize = 128

type sliceChunk [sliceChunkSize]*Slice

// SliceListOf returns a list of the given slices, in order (it does not
// keep s).
func SliceListOf(s ...*Slice) SliceList {
	var l SliceList
	l.Append(s...)
	return l
}

// Len returns the number of slices in the list.
func (l SliceList) Len() int { return l.n }

// At returns the slice at position i; it panics if i is out of range.
func (l SliceList) At(i int) *Slice {
	if uint(i) >= uint(l.n) {
		panic("asdd: SliceList index out of range")
	}
	return l.chunks[i/sliceChunkSize][i%sliceChunkSize]
}

// All returns an iterator over the positions and slices of the list, in
// order.
func (l SliceList) All() iter.Seq2[int, *Slice] {
	return func(yield func(int, *Slice) bool) {
		for c, ch := range l.chunks {
			base := c * sliceChunkSize
			for j, s := range ch[:min(sliceChunkSize, l.n-base)] {
				if !yield(base+j, s) {
					return
				}
			}
		}
	}
}

// Collect returns the slices of the list in a new Go slice (non-nil, even
// when empty).
func (l SliceList) Collect() []*Slice {
	out := make([]*Slice, 0, l.n)
	for c, ch := range l.chunks {
		out = append(out, ch[:min(sliceChunkSize, l.n-c*sliceChunkSize)]...)
	}
	return out
}

// Set replaces the slice at position i (which must be in range) with s,
// copying the chunk that holds it and the chunk index: every other list
// that shared them keeps its slice.
func (l *SliceList) Set(i int, s *Slice) {
	if uint(i) >= uint(l.n) {
		panic("asdd: SliceList index out of range")
	}
	chunks := make([]*sliceChunk, len(l.chunks))
	copy(chunks, l.chunks)
	c := *chunks[i/sliceChunkSize]
	c[i%sliceChunkSize] = s
	chunks[i/sliceChunkSize] = &c
	l.chunks = chunks
}

// Append adds the slices at the end of the list, copying the chunk index
// and the last chunk if it is partly used (the list it was copied from
// keeps its length).
func (l *SliceList) Append(s ...*Slice) {
	if len(s) == 0 {
		return
	}
	n := l.n + len(s)
	chunks := make([]*sliceChunk, len(l.chunks), (n+sliceChunkSize-1)/sliceChunkSize)
	copy(chunks, l.chunks)
	if used := l.n % sliceChunkSize; used != 0 {
		last := *chunks[len(chunks)-1]
		k := copy(last[used:], s)
		chunks[len(chunks)-1] = &last
		s = s[k:]
	}
	for len(s) > 0 {
		c := new(sliceChunk)
		k := copy(c[:], s)
		chunks = append(chunks, c)
		s = s[k:]
	}
	l.chunks, l.n = chunks, n
}

// same reports whether l and o are the same list: made by the same Set,
// Append or SliceListOf (and so holding the same slices), or both empty.
// Every Set and Append makes a new chunk index, so its identity and the
// length name the version.
func (l SliceList) same(o SliceList) bool {
	return l.n == o.n && (l.n == 0 || &l.chunks[0] == &o.chunks[0])
}

// sameChunk reports whether chunk c of l and of o is the same memory (so
// holds the same slices at the positions both lists have).
func (l SliceList) sameChunk(o SliceList, c int) bool {
	return c < len(l.chunks) && c < len(o.chunks) && l.chunks[c] == o.chunks[c]
}

// MarshalJSONTo implements jsonv2.MarshalerTo: the slices as a JSON
// array, [] when there are none.
func (l SliceList) MarshalJSONTo(enc *jsontext.Encoder) error {
	return jsonv2.MarshalEncode(enc, l.Collect())
}

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom: a JSON array of
// slices, or null (an empty list).
func (l *SliceList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var s []*Slice
	if err := jsonv2.UnmarshalDecode(dec, &s); err != nil {
		return err
	}
	*l = SliceListOf(s...)
	return nil
}

// MarshalJSON encodes the list as Marshal does.
func (l SliceList) MarshalJSON() ([]byte, error) { return Marshal(l.Collect()) }

// UnmarshalJSON decodes the list as Decode reads it.
func (l *SliceList) UnmarshalJSON(b []byte) error {
	var s []*Slice
	if err := unmarshal(b, &s); err != nil {
		return err
	}
	*l = SliceListOf(s...)
	return nil
}
