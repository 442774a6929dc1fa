package jsonval

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/chunked"
)

// longDoc is {"slices":[{"id":"S00000"},…]} with n slices.
func longDoc(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"slices":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"S%05d"}`, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// A patch on one element of a long array copies that element's leaf (and
// the group and root above it), and shares every other leaf with the tree
// it came from.
func TestPatchTreeSharesChunks(t *testing.T) {
	v, err := ParseValue(longDoc(10000), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// The first patch makes the parsed array a chunked one.
	tree, err := PatchTree(v.Tree, []byte(`[{"op":"replace","path":"/slices/0/id","value":"x"}]`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		`[{"op":"replace","path":"/slices/4321/id","value":"x"}]`,
		`[{"op":"replace","path":"/slices/17","value":{}}]`,
		`[{"op":"add","path":"/slices/-","value":{}}]`,
		`[{"op":"replace","path":"/slices/63/id","value":"y"},{"op":"replace","path":"/slices/10/id","value":"z"}]`,
	} {
		next, err := PatchTree(tree, []byte(p), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		nb, ok := next.(map[string]any)["slices"].(*bigArray)
		if !ok {
			t.Fatalf("%s: the slices are a %T, not kept in chunks", p, next.(map[string]any)["slices"])
		}
		prev := tree.(map[string]any)["slices"].(*bigArray)
		fresh := 0
		for i := 0; i < nb.n; i += chunked.LeafLen {
			if !nb.l.SameLeaf(prev.l, i) {
				fresh++
			}
		}
		if fresh != 1 {
			t.Fatalf("%s: %d leaves copied or added, want 1", p, fresh)
		}
		tree = next
	}
}

// What a patch of one element of a 40,000-element array allocates does
// not grow with the array: a leaf, a group and the root (≈ 1.6 KB), not a
// list of every chunk (≈ 16.7 KB before) or the array (640 KB).
func TestPatchTreeLongArrayAllocation(t *testing.T) {
	v, err := ParseValue(longDoc(40000), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := PatchTree(v.Tree, []byte(`[{"op":"replace","path":"/slices/0/id","value":"x"}]`), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`[{"op":"replace","path":"/slices/23456/id","value":"y"}]`)
	var before, after runtime.MemStats
	const runs = 20
	runtime.ReadMemStats(&before)
	for range runs {
		if _, err := PatchTree(tree, patch, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("%d bytes allocated per patch", per)
	if per > 8<<10 {
		t.Fatalf("a patch of one element of 40,000 allocates %d bytes, want < 8 KB", per)
	}
}
