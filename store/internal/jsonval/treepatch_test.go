package jsonval_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

func treeOf(t testing.TB, raw string) any {
	t.Helper()
	v, err := jsonval.ParseValue([]byte(raw), jsonval.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return v.Tree
}

// PatchTree gives the value ApplyPatch gives, and never changes its input.
func TestPatchTree(t *testing.T) {
	base := `{"a":{"b":[1,2,3],"c":"x"},"list":[{"id":"S1"},{"id":"S2"}],"n":1,"k/e~y":true}`
	for _, tc := range []struct {
		name, patch string
		fail        bool
	}{
		{"replace member", `[{"op":"replace","path":"/n","value":2}]`, false},
		{"add member", `[{"op":"add","path":"/a/d","value":{"e":[]}}]`, false},
		{"add replaces", `[{"op":"add","path":"/a/c","value":"y"}]`, false},
		{"remove member", `[{"op":"remove","path":"/a/c"}]`, false},
		{"replace element", `[{"op":"replace","path":"/list/1","value":{"id":"S2","s":"DONE"}}]`, false},
		{"append element", `[{"op":"add","path":"/list/2","value":{"id":"S3"}}]`, false},
		{"append with dash", `[{"op":"add","path":"/list/-","value":{"id":"S3"}}]`, false},
		{"insert element", `[{"op":"add","path":"/a/b/0","value":0}]`, false},
		{"remove element", `[{"op":"remove","path":"/a/b/1"}]`, false},
		{"escaped key", `[{"op":"replace","path":"/k~1e~0y","value":false}]`, false},
		{"several", `[{"op":"replace","path":"/n","value":3},{"op":"add","path":"/list/0/x","value":[1]},{"op":"remove","path":"/a"}]`, false},
		{"several in one container", `[{"op":"replace","path":"/n","value":3},{"op":"add","path":"/a/d","value":1},{"op":"replace","path":"/a/c","value":"z"},{"op":"replace","path":"/list/0/id","value":"S9"},{"op":"add","path":"/list/0/x","value":1},{"op":"remove","path":"/a/b/0"},{"op":"replace","path":"/a/b/0","value":7}]`, false},
		{"into an added value", `[{"op":"add","path":"/q","value":{"r":{}}},{"op":"add","path":"/q/r/s","value":1},{"op":"replace","path":"/q/r/s","value":2}]`, false},
		{"fails after changes", `[{"op":"replace","path":"/n","value":3},{"op":"add","path":"/a/d","value":1},{"op":"remove","path":"/a/zz"}]`, true},
		{"replace missing", `[{"op":"replace","path":"/zz","value":1}]`, true},
		{"remove missing", `[{"op":"remove","path":"/a/zz"}]`, true},
		{"index past end", `[{"op":"add","path":"/list/3","value":1}]`, true},
		{"leading zero", `[{"op":"replace","path":"/list/01","value":1}]`, true},
		{"into a scalar", `[{"op":"add","path":"/n/x","value":1}]`, true},
		{"whole document", `[{"op":"replace","path":"","value":1}]`, true},
		{"move", `[{"op":"move","from":"/n","path":"/m"}]`, true},
		{"no value", `[{"op":"add","path":"/q"}]`, true},
		{"not a patch", `{"op":"add"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patchTreeCase(t, base, tc.patch, tc.fail)
		})
	}
}

func patchTreeCase(t *testing.T, base, patch string, fail bool) {
	t.Helper()
	tree := treeOf(t, base)
	before, _ := sumTree(tree)
	got, err := jsonval.PatchTree(tree, []byte(patch), jsonval.Limits{})
	if after, _ := sumTree(tree); after != before {
		t.Fatal("PatchTree changed its input tree")
	}
	if fail {
		if err == nil {
			t.Fatalf("patch %s applied", patch)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	want, err := jsonval.ApplyPatch([]byte(base), []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := jsonval.SumOf(want)
	gs, _ := sumTree(got)
	if gs != ws {
		t.Fatalf("PatchTree gave sum %s, ApplyPatch %s (%s)", gs, ws, want)
	}
}

// A patch nested deeper than the limit is refused.
func TestPatchTreeDepth(t *testing.T) {
	tree := treeOf(t, `{"a":{}}`)
	if _, err := jsonval.PatchTree(tree, []byte(`[{"op":"add","path":"/a/b","value":[[[1]]]}]`), jsonval.Limits{MaxDepth: 4}); err == nil {
		t.Fatal("a value nested past the limit was applied")
	}
}

func FuzzPatchTree(f *testing.F) {
	f.Add(`{"a":[1,{"b":2}],"c":"d"}`, `[{"op":"add","path":"/a/1/x","value":[3]}]`)
	f.Add(`{"a":[1]}`, `[{"op":"remove","path":"/a/0"},{"op":"replace","path":"/a","value":{}}]`)
	f.Add(`[1,2]`, `[{"op":"add","path":"/-","value":3}]`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		fuzzPatchTree(t, doc, patch)
	})
}

func fuzzPatchTree(t *testing.T, doc, patch string) {
	v, err := jsonval.ParseValue([]byte(doc), jsonval.Limits{MaxBytes: 1 << 16, MaxDepth: 16})
	if err != nil {
		return
	}
	got, err := jsonval.PatchTree(v.Tree, []byte(patch), jsonval.Limits{MaxBytes: 1 << 16, MaxDepth: 16})
	if again, _ := sumTree(v.Tree); again != v.Sum {
		t.Fatal("PatchTree changed its input tree")
	}
	if err != nil {
		return
	}
	want, err := jsonval.ApplyPatch([]byte(doc), []byte(patch))
	if err != nil {
		return // the libraries differ on edge cases the daemon never sends
	}
	ws, err := jsonval.SumOf(want)
	if err != nil {
		return
	}
	if gs, _ := sumTree(got); gs != ws {
		t.Fatalf("PatchTree and ApplyPatch disagree on %s", patch)
	}
}

// Indent writes exactly what encoding/json.Indent writes.
func FuzzIndent(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":[]},{}],"c":"x\"y\\"}`, " { \"a\" : [ 1 , 2 ] } \n", `"s"`, `[[],[[]],{"k":{}}]`, `{"<":"&"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := jsonval.Indent(raw)
		var want bytes.Buffer
		werr := json.Indent(&want, raw, "", "  ")
		if (err == nil) != (werr == nil) {
			t.Fatalf("Indent error %v, json.Indent error %v", err, werr)
		}
		if err != nil {
			return
		}
		want.WriteByte('\n')
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("Indent(%q) = %q, want %q", raw, got, want.Bytes())
		}
	})
}

// A SumCache gives the trees' canonical sums over a run of patched trees.
func TestSumCache(t *testing.T) {
	tree := treeOf(t, `{"slices":[{"id":"S1","n":1},{"id":"S2","n":2}],"hb":{"a":{"s":"x"},"b":[1]},"rev":1}`)
	var c jsonval.SumCache
	for i, p := range []string{
		`[{"op":"replace","path":"/rev","value":2}]`,
		`[{"op":"replace","path":"/slices/1","value":{"id":"S2","n":3}}]`,
		`[{"op":"add","path":"/slices/2","value":{"id":"S3"}},{"op":"add","path":"/hb/c","value":{"s":"y"}}]`,
		`[{"op":"replace","path":"/slices/0/n","value":9},{"op":"remove","path":"/hb/b"}]`,
		`[{"op":"add","path":"/hb/b","value":[2]}]`,
	} {
		next, err := jsonval.PatchTree(tree, []byte(p), jsonval.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []any{tree, next} {
			want, _ := sumTree(v)
			got, err := c.Sum(v)
			if err != nil || got != want {
				t.Fatalf("step %d: cached sum %s (%v), want %s", i, got, err, want)
			}
		}
		tree = next
	}
}

// sumTree is the canonical sum of a decoded tree.
func sumTree(tree any) (string, error) {
	b, err := jsonval.CanonicalJSON(tree)
	if err != nil {
		return "", err
	}
	return jsonval.SumOf(b)
}
