package jsonval_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// store/file's Hold mode keeps a large value as a lazy tree (DecodeHeld:
// DecodeLazy's, its top-level arrays decoded one level further): its sum,
// the diff from it (a commit by value), and the bytes made from it after
// a patch are the decoded tree's, before and after patches went into it.
func FuzzDiffTreesFromLazy(f *testing.F) {
	f.Add([]byte(`{"z":1,"a":{"y":[1,2,{"q":null}],"b":"<é>"},"m":true}`), []byte(`{"z":1,"a":{"y":[1,{"q":0}],"b":"<é>","c":[]}}`), []byte(`[{"op":"add","path":"/a/c","value":4}]`))
	f.Add([]byte(`{"s":[{"b":1,"a":{"d":[1],"c":2}},{"b":2},{"c":[3]}],"h":{}}`), []byte(`{"s":[{"b":1,"a":{"d":[1,2],"c":2}}],"h":{"x":1}}`), []byte(`[{"op":"replace","path":"/s/1/b","value":3},{"op":"add","path":"/s/-","value":{"n":1}}]`))
	f.Add([]byte(`[1,[2,3],{"x":"\u00e9"}]`), []byte(`{"x":[2,3]}`), []byte(`[{"op":"remove","path":"/1/0"}]`))
	f.Fuzz(func(t *testing.T, base, other, patch []byte) {
		diffFromLazy(t, base, other, patch)
		jsonval.SmallChunks(t) // arrays of three or more held as big arrays
		diffFromLazy(t, base, other, patch)
	})
}

func diffFromLazy(t *testing.T, base, other, patch []byte) {
	lim := jsonval.Limits{MaxBytes: 1 << 16, MaxDepth: 32}
	v, err := jsonval.ParseValue(base, lim)
	if err != nil {
		return
	}
	o, err := jsonval.ParseValue(other, lim)
	if err != nil {
		return
	}
	for name, decode := range map[string]func([]byte) (any, error){"DecodeLazy": jsonval.DecodeLazy, "DecodeHeld": jsonval.DecodeHeld} {
		lazy, err := decode(base)
		if err != nil {
			continue // stricter than Decode: the caller keeps the decoded tree
		}
		if sum, err := jsonval.SumTree(lazy); err != nil || sum != v.Sum {
			t.Fatalf("%s(%q): sum %s (%v), want %s", name, base, sum, err, v.Sum)
		}
		check := func(what string, decoded, lazy any) {
			want, werr := jsonval.DiffTrees(decoded, o.Tree)
			got, gerr := jsonval.DiffTrees(lazy, o.Tree)
			if (werr == nil) != (gerr == nil) || !bytes.Equal(want, got) {
				t.Fatalf("DiffTrees from %s's %s of %q to %q: %s (%v), from the decoded tree %s (%v)", name, what, base, other, got, gerr, want, werr)
			}
		}
		check("value", v.Tree, lazy)
		pd, derr := jsonval.PatchTree(v.Tree, patch, lim)
		pl, lerr := jsonval.PatchTree(lazy, patch, lim)
		if (derr == nil) != (lerr == nil) {
			t.Fatalf("%s: PatchTree %s: %v, on the decoded tree %v", name, patch, lerr, derr)
		}
		if derr != nil {
			continue
		}
		wb, werr := jsonval.TreeBytes(base, v.Tree, pd)
		gb, gerr := jsonval.TreeBytes(base, lazy, pl)
		if werr != nil || gerr != nil || !bytes.Equal(wb, gb) {
			t.Fatalf("%s: TreeBytes of %q after %s: %q (%v), from the decoded tree %q (%v)", name, base, patch, gb, gerr, wb, werr)
		}
		check("patched value", pd, pl)
	}
}

// A lazy tree read by several goroutines at once — the snapshot writer
// and readers making bytes, a commit patching or diffing — decodes each
// container once for all of them (run with -race).
func TestLazyTreeConcurrentReaders(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"slices":[`)
	for i := range 400 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"S%03d","chain":[{"n":%d}],"m":{"b":1,"a":2}}`, i, i)
	}
	b.WriteString(`],"revision":1}`)
	raw := []byte(b.String())
	decoded := jsonval.MustDecode(t, raw)
	other := jsonval.MustDecode(t, bytes.Replace(raw, []byte(`"S123"`), []byte(`"x"`), 1))
	wantDiff, err := jsonval.DiffTrees(decoded, other)
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`[{"op":"replace","path":"/slices/7/m/a","value":3}]`)
	wantPatched, err := jsonval.PatchTree(decoded, patch, jsonval.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	wantBytes, err := jsonval.TreeBytes(raw, decoded, wantPatched)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		decode := jsonval.DecodeLazy
		if i%2 == 1 {
			decode = jsonval.DecodeHeld
		}
		lazy, err := decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if g%2 == 0 {
					d, err := jsonval.DiffTrees(lazy, other)
					if err != nil || !bytes.Equal(d, wantDiff) {
						t.Errorf("DiffTrees: %s (%v), want %s", d, err, wantDiff)
					}
					return
				}
				p, err := jsonval.PatchTree(lazy, patch, jsonval.Limits{})
				if err != nil {
					t.Error(err)
					return
				}
				if got, err := jsonval.TreeBytes(raw, lazy, p); err != nil || !bytes.Equal(got, wantBytes) {
					t.Errorf("TreeBytes: %v, or not the decoded tree's bytes", err)
				}
			}()
		}
		wg.Wait()
	}
}
