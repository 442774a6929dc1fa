package chunked

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// A List behaves as a plain Go slice under any sequence of Set, SetFrom,
// Append, Grow, At, All, Leaves and Collect, across leaf and group boundaries,
// and every version made along the way — later versions being made from
// any of them — keeps its elements.
func TestPropertyListIsAPersistentSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type version struct {
			l    List[int]
			want []int
		}
		next := 0
		val := func() int { next++; return next }
		// Lengths up to a little over two groups, often near a boundary.
		length := func(label string) int {
			if rapid.Bool().Draw(t, label+" near a boundary") {
				b := rapid.SampledFrom([]int{LeafLen, 2 * LeafLen, groupSpan, 2 * groupSpan}).Draw(t, label+" boundary")
				return max(0, b+rapid.IntRange(-2, 2).Draw(t, label+" offset"))
			}
			return rapid.IntRange(0, 2*groupSpan+LeafLen).Draw(t, label)
		}
		var first version
		for range length("n") {
			first.want = append(first.want, val())
		}
		if rapid.Bool().Draw(t, "of") {
			first.l = Of(first.want...)
		} else {
			for _, v := range first.want {
				first.l.Append(v)
			}
		}
		versions := []version{first}
		check := func(v version) {
			t.Helper()
			if v.l.Len() != len(v.want) {
				t.Fatalf("Len = %d, want %d", v.l.Len(), len(v.want))
			}
			if c := v.l.Collect(); c == nil || !slices.Equal(c, v.want) {
				t.Fatalf("Collect differs from the model (%d elements)", len(v.want))
			}
			n := 0
			for i, x := range v.l.All() {
				if i != n || x != v.want[i] {
					t.Fatalf("All yields %d at %d, want %d at %d", x, i, v.want[n], n)
				}
				n++
			}
			if n != len(v.want) {
				t.Fatalf("All yields %d elements, want %d", n, len(v.want))
			}
			var leaves []int
			for k, lf := range v.l.Leaves() {
				if k*LeafLen != len(leaves) || len(lf) == 0 || len(lf) > LeafLen {
					t.Fatalf("Leaves yields leaf %d of %d elements after %d elements", k, len(lf), len(leaves))
				}
				leaves = append(leaves, lf...)
			}
			if !slices.Equal(leaves, v.want) {
				t.Fatalf("Leaves yields %d elements that differ from the model (%d elements)", len(leaves), len(v.want))
			}
			for range 20 {
				if len(v.want) == 0 {
					break
				}
				i := rapid.IntRange(0, len(v.want)-1).Draw(t, "probe")
				if v.l.At(i) != v.want[i] {
					t.Fatalf("At(%d) = %d, want %d", i, v.l.At(i), v.want[i])
				}
			}
		}
		pos := func(n int) int {
			i := rapid.IntRange(0, n-1).Draw(t, "i")
			if rapid.Bool().Draw(t, "edge") { // a leaf's or group's first or last position
				span := rapid.SampledFrom([]int{LeafLen, groupSpan}).Draw(t, "span")
				i = min(n-1, i/span*span+rapid.SampledFrom([]int{0, span - 1}).Draw(t, "end"))
			}
			return i
		}
		for range rapid.IntRange(1, 12).Draw(t, "steps") {
			from := versions[rapid.IntRange(0, len(versions)-1).Draw(t, "from")]
			v := version{l: from.l, want: slices.Clone(from.want)}
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0: // Set, a few times
				for range rapid.IntRange(1, 3).Draw(t, "sets") {
					if len(v.want) == 0 {
						break
					}
					i, x := pos(len(v.want)), val()
					v.l.Set(i, x)
					v.want[i] = x
				}
			case 1: // Append
				k := length("added") % (groupSpan + 3)
				add := make([]int, k)
				for j := range add {
					add[j] = val()
				}
				v.want = append(v.want, add...)
				if rapid.Bool().Draw(t, "one by one") {
					for _, x := range add {
						v.l.Append(x)
					}
				} else {
					v.l.Append(add...)
				}
			default: // Grow, then SetFrom anywhere (old or new positions)
				n := len(v.want) + rapid.IntRange(0, groupSpan+3).Draw(t, "grown")
				v.l = from.l.Grow(n)
				v.want = append(v.want, make([]int, n-len(v.want))...)
				for range rapid.IntRange(0, 40).Draw(t, "setFroms") {
					if n == 0 {
						break
					}
					i, x := pos(n), val()
					v.l.SetFrom(from.l, i, x)
					v.want[i] = x
				}
			}
			versions = append(versions, v)
			for _, v := range versions {
				check(v)
			}
		}
		for i, v := range versions {
			if c := v.l; !v.l.Same(c) {
				t.Fatalf("version %d is not the same as its copy", i)
			}
			if o := Of(v.want...); len(v.want) > 0 && v.l.Same(o) {
				t.Fatalf("version %d is the same as a list built apart", i)
			}
		}
	})
}

// SetFrom copies each node once: after the first change in a leaf, the
// next ones in it write in place, and from is untouched.
func TestSetFromCopiesOnce(t *testing.T) {
	from := Of(make([]int, 3*groupSpan)...)
	l := from.Grow(from.Len())
	l.SetFrom(from, 5, 1)
	lf := l.leaf(5)
	if lf == from.leaf(5) {
		t.Fatal("the first SetFrom in a leaf wrote into from's leaf")
	}
	l.SetFrom(from, 6, 2)
	if l.leaf(6) != lf {
		t.Fatal("a second SetFrom in the same leaf copied it again")
	}
	if from.At(5) != 0 || from.At(6) != 0 || l.At(5) != 1 || l.At(6) != 2 {
		t.Fatalf("from %d %d, l %d %d", from.At(5), from.At(6), l.At(5), l.At(6))
	}
	if !l.SameLeaf(from, groupSpan) || l.SameLeaf(from, 0) {
		t.Fatal("SameLeaf does not tell shared leaves from copied ones")
	}
}

func TestOutOfRange(t *testing.T) {
	l := Of(1)
	for name, f := range map[string]func(){
		"At(-1)":  func() { l.At(-1) },
		"At(1)":   func() { l.At(1) },
		"Set(1)":  func() { l.Set(1, 0) },
		"Grow(0)": func() { l.Grow(0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s on a list of 1 did not panic", name)
				}
			}()
			f()
		}()
	}
}
