package asdd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"pgregory.net/rapid"
)

// A SliceList behaves as a plain Go slice under any sequence of Set,
// Append, At, All and Collect, and every version made along the way — of
// which later versions are made, on several branches — keeps its slices.
func TestPropertySliceListIsAPersistentSlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		type version struct {
			l    SliceList
			want []*Slice
		}
		next := 0
		newSlice := func() *Slice {
			next++
			return &Slice{SliceID: fmt.Sprintf("S%d", next)}
		}
		// The first list: built at once or slice by slice, up to a few
		// chunks long.
		var first version
		n := rapid.IntRange(0, 3*sliceChunkSize+5).Draw(t, "n")
		for range n {
			first.want = append(first.want, newSlice())
		}
		if rapid.Bool().Draw(t, "of") {
			first.l = SliceListOf(first.want...)
		} else {
			for _, s := range first.want {
				first.l.Append(s)
			}
		}
		versions := []version{first}
		check := func(v version) {
			t.Helper()
			if v.l.Len() != len(v.want) {
				t.Fatalf("Len = %d, want %d", v.l.Len(), len(v.want))
			}
			for i, s := range v.want {
				if v.l.At(i) != s {
					t.Fatalf("At(%d) = %v, want %v", i, v.l.At(i), s)
				}
			}
			var got []*Slice
			for i, s := range v.l.All() {
				if i != len(got) {
					t.Fatalf("All yields position %d after %d slices", i, len(got))
				}
				got = append(got, s)
			}
			if !slices.Equal(got, v.want) {
				t.Fatalf("All = %v, want %v", got, v.want)
			}
			if c := v.l.Collect(); c == nil || !slices.Equal(c, v.want) {
				t.Fatalf("Collect = %v, want %v", c, v.want)
			}
		}
		for range rapid.IntRange(1, 30).Draw(t, "steps") {
			// Derive from any version made so far, not only the latest.
			from := versions[rapid.IntRange(0, len(versions)-1).Draw(t, "from")]
			v := version{l: from.l, want: slices.Clone(from.want)}
			switch k := rapid.IntRange(0, 3).Draw(t, "op"); {
			case k <= 1 && len(v.want) > 0:
				i := rapid.IntRange(0, len(v.want)-1).Draw(t, "i")
				if rapid.Bool().Draw(t, "edge") { // at a chunk's end or start
					c := rapid.IntRange(0, (len(v.want)-1)/sliceChunkSize).Draw(t, "chunk")
					i = min(len(v.want)-1, c*sliceChunkSize+rapid.SampledFrom([]int{0, sliceChunkSize - 1}).Draw(t, "end"))
				}
				s := newSlice()
				v.l.Set(i, s)
				v.want[i] = s
			default:
				for range rapid.IntRange(0, sliceChunkSize+3).Draw(t, "added") {
					v.want = append(v.want, newSlice())
				}
				if rapid.Bool().Draw(t, "one by one") {
					for _, s := range v.want[from.l.Len():] {
						v.l.Append(s)
					}
				} else {
					v.l.Append(v.want[from.l.Len():]...)
				}
			}
			versions = append(versions, v)
			for _, v := range versions {
				check(v)
			}
		}
		// same names a version: a list is the same as itself and its
		// copies, not as another list with the same slices.
		for i, v := range versions {
			w := v.l
			if !v.l.same(w) {
				t.Fatalf("version %d is not the same as its copy", i)
			}
			if o := SliceListOf(v.want...); len(v.want) > 0 && v.l.same(o) {
				t.Fatalf("version %d is the same as a list built apart", i)
			}
		}
	})
}

func TestSliceListAtOutOfRange(t *testing.T) {
	l := SliceListOf(&Slice{SliceID: "A"})
	for _, i := range []int{-1, 1, sliceChunkSize} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("At(%d) of a list of 1 did not panic", i)
				}
			}()
			l.At(i)
		}()
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Set(%d) of a list of 1 did not panic", i)
				}
			}()
			l.Set(i, nil)
		}()
	}
}

// A list's JSON is an array of slices, as a []*Slice's: [] when empty,
// null reads as an empty list, and both JSON libraries agree.
func TestSliceListJSON(t *testing.T) {
	var empty SliceList
	for _, marshal := range []func(any) ([]byte, error){Marshal, json.Marshal} {
		if b, err := marshal(empty); err != nil || string(b) != "[]" {
			t.Fatalf("empty list = %s, %v; want []", b, err)
		}
	}
	l := SliceListOf(&Slice{SliceID: "A", Status: Spec}, nil)
	b, err := Marshal(l)
	if err != nil || string(b) != `[{"slice_id":"A","status":"SPEC"},null]` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	for _, raw := range []string{"null", "[]"} {
		got := SliceListOf(&Slice{SliceID: "old"})
		if err := json.Unmarshal([]byte(raw), &got); err != nil || got.Len() != 0 {
			t.Fatalf("json.Unmarshal(%s) = %d slices, %v", raw, got.Len(), err)
		}
		got = SliceListOf(&Slice{SliceID: "old"})
		if err := unmarshal([]byte(raw), &got); err != nil || got.Len() != 0 {
			t.Fatalf("unmarshal(%s) = %d slices, %v", raw, got.Len(), err)
		}
	}
}

// Decoding a list reads what decoding a []*Slice reads, and writes it
// back the same: same error or none, same slices, same bytes.
func FuzzSliceListJSON(f *testing.F) {
	for _, seed := range []string{
		`[]`, `null`, `[null]`, `{}`, `[{"slice_id":"A","status":"SPEC","x":[1,{"y":null}]}]`,
		`[{"slice_id":"A","status":"SPEC"},{"slice_id":"B","status":"DONE","ccs":0.5}]`,
		`[{"slice_id":"A","slice_id":"B"}]`, `[{"slice_id":"\u2028<&>\xff"}]`, `[1]`, `[{"confidence_chain":[{"agent":"a","agent":"b"}]}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var l SliceList
		var s []*Slice
		errL := jsonv2.Unmarshal(raw, &l, decodeOptions)
		errS := jsonv2.Unmarshal(raw, &s, decodeOptions)
		if (errL == nil) != (errS == nil) {
			t.Fatalf("list: %v; []*Slice: %v", errL, errS)
		}
		if errL != nil {
			return
		}
		if l.Len() != len(s) {
			t.Fatalf("list of %d slices, []*Slice of %d", l.Len(), len(s))
		}
		bl, errL := Marshal(l)
		if s == nil {
			s = []*Slice{}
		}
		bs, errS := Marshal(s)
		if (errL == nil) != (errS == nil) || !bytes.Equal(bl, bs) {
			t.Fatalf("list encodes as %s, %v; []*Slice as %s, %v", bl, errL, bs, errS)
		}
		var again SliceList
		if errL == nil {
			if err := json.Unmarshal(bl, &again); err != nil || again.Len() != l.Len() {
				t.Fatalf("encoding/json reads %s back as %d slices, %v", bl, again.Len(), err)
			}
		}
	})
}
