package jsonval_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// A long array (the manifest's slices) patched commit after commit, as the
// daemon's store does: every tree is the value ApplyPatch makes from the
// bytes, its bytes (TreeBytes from the previous version's) and its diff
// from the previous tree are right, and no patch changes the trees before
// it.
func TestPatchTreeLongArray(t *testing.T) {
	for _, small := range []bool{false, true} {
		t.Run(fmt.Sprintf("small-chunks=%v", small), func(t *testing.T) {
			if small {
				jsonval.SmallChunks(t)
			}
			var b strings.Builder
			b.WriteString(`{"slices":[`)
			for i := range 300 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"id":"S%03d","status":"DISCOVERY","chain":[]}`, i)
			}
			b.WriteString(`],"revision":1}`)
			raw := []byte(b.String())
			tree := treeOf(t, string(raw))
			type version struct {
				raw  []byte
				tree any
				sum  string
			}
			var seen []version
			for i, p := range []string{
				`[{"op":"replace","path":"/slices/5/status","value":"SPEC"},{"op":"replace","path":"/revision","value":2}]`,
				`[{"op":"replace","path":"/slices/299","value":{"id":"S299","status":"SPEC"}}]`,
				`[{"op":"add","path":"/slices/0/chain/-","value":{"agent":"discovery","score":0.97}},{"op":"replace","path":"/slices/64/status","value":"SPEC"},{"op":"replace","path":"/slices/63/status","value":"SPEC"}]`,
				`[{"op":"add","path":"/slices/300","value":{"id":"S300"}}]`,
				`[{"op":"add","path":"/slices/-","value":{"id":"S301"}},{"op":"add","path":"/slices/-","value":{"id":"S302"}},{"op":"replace","path":"/slices/301/id","value":"S301b"}]`,
				`[{"op":"replace","path":"/slices/302","value":{"id":"S302","status":"SPEC"}}]`,
				`[{"op":"add","path":"/slices/1","value":{"id":"inserted"}}]`,
				`[{"op":"replace","path":"/slices/100/status","value":"DESIGN"}]`,
				`[{"op":"remove","path":"/slices/2"},{"op":"replace","path":"/slices/2/status","value":"DONE"}]`,
				`[{"op":"replace","path":"/slices/7","value":[1,2,3]},{"op":"add","path":"/slices/7/1","value":0}]`,
				`[{"op":"replace","path":"/slices/400","value":1}]`,
				`[{"op":"add","path":"/slices/305","value":1}]`,
				`[{"op":"replace","path":"/slices/-","value":1}]`,
			} {
				sum0, _ := jsonval.SumTree(tree)
				next, err := jsonval.PatchTree(tree, []byte(p), jsonval.Limits{})
				want, werr := jsonval.ApplyPatch(raw, []byte(p))
				if (err == nil) != (werr == nil) {
					t.Fatalf("step %d: PatchTree error %v, ApplyPatch error %v", i, err, werr)
				}
				if s, _ := jsonval.SumTree(tree); s != sum0 {
					t.Fatalf("step %d: PatchTree changed its input", i)
				}
				if err != nil {
					continue
				}
				ws, _ := jsonval.SumOf(want)
				if gs, _ := jsonval.SumTree(next); gs != ws {
					t.Fatalf("step %d: sum %s, ApplyPatch's %s", i, gs, ws)
				}
				out, err := jsonval.TreeBytes(raw, tree, next)
				if err != nil {
					t.Fatal(err)
				}
				if os, _ := jsonval.SumOf(out); os != ws || !json.Valid(out) {
					t.Fatalf("step %d: TreeBytes made %.200s…", i, out)
				}
				diff, err := jsonval.DiffTrees(tree, next)
				if err != nil {
					t.Fatal(err)
				}
				again, err := jsonval.ApplyPatch(raw, diff)
				if err != nil {
					t.Fatal(err)
				}
				if as, _ := jsonval.SumOf(again); as != ws {
					t.Fatalf("step %d: the diff %s does not make the patched value", i, diff)
				}
				if jsonval.EqualTrees(tree, next) || !jsonval.EqualTrees(next, jsonval.MustDecode(t, want)) {
					t.Fatalf("step %d: EqualTrees is wrong", i)
				}
				seen = append(seen, version{raw, tree, sum0})
				raw, tree = out, next
			}
			for i, v := range seen {
				if s, _ := jsonval.SumTree(v.tree); s != v.sum {
					t.Fatalf("version %d changed by a later patch", i)
				}
				if s, _ := jsonval.SumOf(v.raw); s != v.sum {
					t.Fatalf("version %d's bytes are not its tree", i)
				}
			}
			// A SumCache over the run gives the same sums.
			var c jsonval.SumCache
			for i, v := range seen {
				if s, err := c.Sum(v.tree); err != nil || s != v.sum {
					t.Fatalf("version %d: cached sum %s (%v), want %s", i, s, err, v.sum)
				}
			}
		})
	}
}
