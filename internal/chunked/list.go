// Package chunked is a persistent list kept in a shallow tree of
// fixed-size chunks, for the long lists a commit changes in a few places
// (a manifest's slices, their encodings): a list made from another by
// changing k elements shares every other chunk with it, and the change
// copies O(k + n/4096) pointers and chunks of 64 elements, not O(n).
package chunked

import (
	"fmt"
	"iter"
)

const (
	leafBits = 6
	// LeafLen is the number of elements of a leaf: positions i and j
	// are in the same leaf when i/LeafLen == j/LeafLen.
	LeafLen   = 1 << leafBits
	groupBits = 6
	groupLen  = 1 << groupBits // leaves per group
	groupSpan = LeafLen * groupLen
)

type leaf[T any] [LeafLen]T

type group[T any] [groupLen]*leaf[T]

// List is a list of n elements in groups of 64 leaves of 64 elements. A
// group or leaf is written only while one list alone holds it; every
// operation that makes a list from another (Set, Append, Grow) makes it a
// new root, so a List value is never changed by what is done to a copy of
// it. The zero value is an empty list.
type List[T any] struct {
	groups []*group[T] // nil entries: groups whose elements are all zero
	n      int
}

// Of returns a list of the given elements (it does not keep v).
func Of[T any](v ...T) List[T] {
	var l List[T]
	l.Append(v...)
	return l
}

// Len returns the number of elements.
func (l List[T]) Len() int { return l.n }

func (l List[T]) check(i int) {
	if uint(i) >= uint(l.n) {
		panic(fmt.Sprintf("chunked: index %d out of range [0:%d]", i, l.n))
	}
}

// leaf returns the leaf holding position i, or nil.
func (l List[T]) leaf(i int) *leaf[T] {
	gi := i / groupSpan
	if gi >= len(l.groups) || l.groups[gi] == nil {
		return nil
	}
	return l.groups[gi][i/LeafLen%groupLen]
}

// At returns element i (the zero value if it was never set since Grow
// made it); it panics if i is out of range.
func (l List[T]) At(i int) T {
	l.check(i)
	if lf := l.leaf(i); lf != nil {
		return lf[i%LeafLen]
	}
	var zero T
	return zero
}

// All returns an iterator over the positions and elements, in order.
func (l List[T]) All() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		var zero leaf[T]
		for i := 0; i < l.n; i += LeafLen {
			lf := l.leaf(i)
			if lf == nil {
				lf = &zero
			}
			for j, v := range lf[:min(LeafLen, l.n-i)] {
				if !yield(i+j, v) {
					return
				}
			}
		}
	}
}

// Leaves returns an iterator over the leaves in order: leaf k holds the
// elements from k*LeafLen, and the last one only those below Len. The
// slices are the list's own memory (a leaf never set is a zero one), to
// read and not keep: a list that holds the leaf alone may write it.
func (l List[T]) Leaves() iter.Seq2[int, []T] {
	return func(yield func(int, []T) bool) {
		var zero leaf[T]
		for i := 0; i < l.n; i += LeafLen {
			lf := l.leaf(i)
			if lf == nil {
				lf = &zero
			}
			if !yield(i/LeafLen, lf[:min(LeafLen, l.n-i)]) {
				return
			}
		}
	}
}

// Collect returns the elements in a new Go slice (not nil).
func (l List[T]) Collect() []T {
	out := make([]T, 0, l.n)
	var zero leaf[T]
	for i := 0; i < l.n; i += LeafLen {
		lf := l.leaf(i)
		if lf == nil {
			lf = &zero
		}
		out = append(out, lf[:min(LeafLen, l.n-i)]...)
	}
	return out
}

// Set replaces element i (which must be in range), copying the root and
// the group and leaf that hold it: every other list keeps its element.
func (l *List[T]) Set(i int, v T) { l.SetFrom(*l, i, v) }

// SetFrom replaces element i (which must be in range) of l, a list made
// from from by Grow, SetFrom or Append and not shared with any other yet
// (Grow's result before it is handed out, a transaction's list): it
// copies the root, group and leaf on the way only if they are from's,
// and writes those l has already copied in place, so that k changes cost
// one copy of each node they touch, however many fall in it.
func (l *List[T]) SetFrom(from List[T], i int, v T) {
	l.check(i)
	if len(l.groups) > 0 && len(from.groups) > 0 && &l.groups[0] == &from.groups[0] {
		l.groups = append(make([]*group[T], 0, len(l.groups)), l.groups...)
	}
	gi, li := i/groupSpan, i/LeafLen%groupLen
	g := l.groups[gi]
	switch {
	case g == nil:
		g = new(group[T])
		l.groups[gi] = g
	case gi < len(from.groups) && g == from.groups[gi]:
		c := *g
		g = &c
		l.groups[gi] = g
	}
	lf := g[li]
	switch {
	case lf == nil:
		lf = new(leaf[T])
		g[li] = lf
	case lf == from.leaf(i): // from's, even past its length (a partly used leaf)
		c := *lf
		lf = &c
		g[li] = lf
	}
	lf[i%LeafLen] = v
}

// Append adds the elements at the end, copying the root and the last
// group and leaf if they are partly used (the list it was copied from
// keeps its length and elements).
func (l *List[T]) Append(v ...T) {
	if len(v) == 0 {
		return
	}
	from := *l
	*l = l.Grow(l.n + len(v))
	for k, x := range v {
		l.SetFrom(from, from.n+k, x)
	}
}

// Grow returns a list of n ≥ l.Len() elements whose first l.Len() are
// l's and the rest zero, sharing l's groups and leaves (set its new
// elements with SetFrom(l, …)).
func (l List[T]) Grow(n int) List[T] {
	if n < l.n {
		panic(fmt.Sprintf("chunked: Grow to %d below the length %d", n, l.n))
	}
	groups := make([]*group[T], (n+groupSpan-1)/groupSpan)
	copy(groups, l.groups)
	return List[T]{groups: groups, n: n}
}

// Same reports whether l and o are the same list: one made by the same
// Set, SetFrom series, Append or Grow (or copies of it), or both empty.
func (l List[T]) Same(o List[T]) bool {
	return l.n == o.n && (l.n == 0 || &l.groups[0] == &o.groups[0])
}

// SameLeaf reports whether the leaf holding position i is one and the
// same in l and o (not nil): then l and o hold the same elements at the
// positions of that leaf that both have.
func (l List[T]) SameLeaf(o List[T], i int) bool {
	a := l.leaf(i)
	return a != nil && a == o.leaf(i)
}
