package jsonval_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// topKeys returns the members of a JSON object in the order written (nil
// for anything else).
func topKeys(raw []byte) []string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return keys
}

// The bytes TreeBytes makes of a patched tree are that tree (compact, valid
// JSON), with the anchor's members that survive in the anchor's order,
// first.
func FuzzTreeBytes(f *testing.F) {
	f.Add([]byte(`{"z":1,"a":{"y":[1,2,{"q":null}],"b":"<é>"},"m":true}`), []byte(`[{"op":"add","path":"/a/c","value":4},{"op":"replace","path":"/z","value":5.50},{"op":"remove","path":"/m"},{"op":"add","path":"/a/y/1","value":{"n":[]}}]`))
	f.Add([]byte(`{"a":1,"a":2}`), []byte(`[{"op":"add","path":"/b","value":1}]`))
	f.Add([]byte(`[1,[2,3],{"x":"\u00e9"}]`), []byte(`[{"op":"remove","path":"/1/0"},{"op":"add","path":"/-","value":7}]`))
	f.Add([]byte(`{"":{"":0}}`), []byte(`[{"op":"replace","path":"//","value":[]}]`))
	f.Fuzz(func(t *testing.T, base, patch []byte) {
		fuzzTreeBytes(t, base, patch)
	})
}

func fuzzTreeBytes(t *testing.T, base, patch []byte) {
	v, err := jsonval.ParseValue(base, jsonval.Limits{MaxBytes: 1 << 16, MaxDepth: 32})
	if err != nil {
		return
	}
	tree, err := jsonval.PatchTree(v.Tree, patch, jsonval.Limits{MaxBytes: 1 << 16, MaxDepth: 32})
	if err != nil {
		return
	}
	out, err := jsonval.TreeBytes(base, v.Tree, tree)
	if err != nil {
		t.Fatal(err)
	}
	got, err := jsonval.Decode(out)
	if err != nil || !jsonval.EqualTrees(got, tree) {
		t.Fatalf("TreeBytes gave %s (%v), not the patched tree", out, err)
	}
	if !json.Valid(out) || len(out) > 0 && (out[0] == ' ' || out[len(out)-1] == ' ') {
		t.Fatalf("not compact JSON: %q", out)
	}
	sum, _ := jsonval.SumOf(out)
	if want, _ := jsonval.SumTree(tree); sum != want {
		t.Fatalf("sum %s, tree's %s", sum, want)
	}
	// TreeBytesIndented is the snapshot form of the same bytes, whatever
	// the anchor's white space; from an anchor in that form already (a
	// snapshot), it copies what is shared instead of indenting it again.
	if ind, err := jsonval.TreeBytesIndented(base, v.Tree, tree); err != nil || string(ind) != string(jsonval.IndentValid(out)) {
		t.Fatalf("TreeBytesIndented gave %q (%v), want %q", ind, err, jsonval.IndentValid(out))
	}
	snap := jsonval.IndentValid(base)
	if sv, err := jsonval.ParseValue(snap, jsonval.Limits{MaxBytes: 1 << 20, MaxDepth: 32}); err == nil {
		if st, err := jsonval.PatchTree(sv.Tree, patch, jsonval.Limits{MaxBytes: 1 << 20, MaxDepth: 32}); err == nil {
			raw, err := jsonval.TreeBytes(snap, sv.Tree, st)
			if err != nil {
				t.Fatal(err)
			}
			if ind, err := jsonval.TreeBytesIndented(snap, sv.Tree, st); err != nil || string(ind) != string(jsonval.IndentValid(raw)) {
				t.Fatalf("TreeBytesIndented of snapshot %q gave %q (%v), want %q", snap, ind, err, jsonval.IndentValid(raw))
			}
			if jsonval.IndentedCopyRefused(snap, sv.Tree, st) {
				t.Fatalf("snapshot %q not taken as indented", snap)
			}
		}
	}
	before, after := topKeys(base), topKeys(out)
	if m, ok := tree.(map[string]any); ok && before != nil && len(slices.Compact(slices.Sorted(slices.Values(before)))) == len(before) {
		var kept []string
		for _, k := range before {
			if _, ok := m[k]; ok {
				kept = append(kept, k)
			}
		}
		if len(after) < len(kept) || !slices.Equal(after[:len(kept)], kept) {
			t.Fatalf("members %v, want %v first (anchor %s)", after, kept, base)
		}
	}
}
