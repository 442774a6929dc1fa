package jsonval

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

// A patch on one element of a long array copies that element's chunk and
// the list of chunks, and shares every other chunk with the tree it came
// from.
func TestPatchTreeSharesChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"slices":[`)
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"S%05d"}`, i)
	}
	b.WriteString(`]}`)
	v, err := ParseValue([]byte(b.String()), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tree := v.Tree
	for _, p := range []string{
		`[{"op":"replace","path":"/slices/4321/id","value":"x"}]`,
		`[{"op":"replace","path":"/slices/17","value":{}}]`,
		`[{"op":"add","path":"/slices/-","value":{}}]`,
	} {
		next, err := PatchTree(tree, []byte(p), Limits{})
		if err != nil {
			t.Fatal(err)
		}
		nb, ok := next.(map[string]any)["slices"].(*bigArray)
		if !ok {
			t.Fatalf("%s: the slices are a %T, not kept in chunks", p, next.(map[string]any)["slices"])
		}
		prev, _ := arrayOf(tree.(map[string]any)["slices"])
		fresh := 0
		for k, ch := range nb.chunks {
			if k*chunkLen >= prev.len() || unsafe.SliceData(ch) != chunkData(prev, k) {
				fresh++
			}
		}
		if fresh != 1 {
			t.Fatalf("%s: %d chunks copied or added, want 1", p, fresh)
		}
		tree = next
	}
}

// chunkData is the address of chunk k's first element in a.
func chunkData(a array, k int) *any {
	if a.big != nil {
		return unsafe.SliceData(a.big.chunks[k])
	}
	return &a.flat[k*chunkLen]
}
