package asdd

import (
	"iter"

	"github.com/custodian-dev/custodian/internal/chunked"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SliceList is a manifest's list of slices: a persistent list kept in
// chunks (internal/chunked), so that a list that differs from another in
// a few positions shares every other chunk with it. Set and Append never
// write into memory a list made before them shares: a SliceList value
// copied before a Set or Append is another list, unchanged. Each copies
// only the chunks on the way to the position it changes — a few hundred
// pointers whatever the length — so that a commit that changes one slice
// of a large manifest does not copy the whole list. The zero value is an
// empty list.
//
// Its JSON is an array of slices ([] when empty; null reads as empty).
type SliceList struct {
	l chunked.List[*Slice]
}

// SliceListOf returns a list of the given slices, in order (it does not
// keep s).
func SliceListOf(s ...*Slice) SliceList { return SliceList{chunked.Of(s...)} }

// Len returns the number of slices in the list.
func (l SliceList) Len() int { return l.l.Len() }

// At returns the slice at position i; it panics if i is out of range.
func (l SliceList) At(i int) *Slice { return l.l.At(i) }

// All returns an iterator over the positions and slices of the list, in
// order.
func (l SliceList) All() iter.Seq2[int, *Slice] { return l.l.All() }

// Collect returns the slices of the list in a new Go slice (non-nil, even
// when empty).
func (l SliceList) Collect() []*Slice { return l.l.Collect() }

// Set replaces the slice at position i (which must be in range) with s:
// every other list that shared the chunk keeps its slice.
func (l *SliceList) Set(i int, s *Slice) { l.l.Set(i, s) }

// Append adds the slices at the end of the list (the list it was copied
// from keeps its length and slices).
func (l *SliceList) Append(s ...*Slice) { l.l.Append(s...) }

// setFrom is Set for a transaction's list, made from from (the input's)
// and not handed out yet: the chunks it already copied are written in
// place.
func (l *SliceList) setFrom(from SliceList, i int, s *Slice) { l.l.SetFrom(from.l, i, s) }

// same reports whether l and o are the same list: made by the same Set,
// Append or SliceListOf (and so holding the same slices), or both empty.
func (l SliceList) same(o SliceList) bool { return l.l.Same(o.l) }

// sameChunk reports whether the chunk holding position i is the same in
// l and o (so holds the same slices at the positions both lists have).
func (l SliceList) sameChunk(o SliceList, i int) bool { return l.l.SameLeaf(o.l, i) }

// sliceChunkSize is the number of positions of a chunk (sameChunk).
const sliceChunkSize = chunked.LeafLen

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
