package jsonval_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`{}`, `[1,2]`, `{"a":[{"b":null}]}`, `"x"`, `{`, `[[[[`, `{"a":"\"}"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := jsonval.ParseValue(raw, jsonval.Limits{MaxBytes: 1 << 16, MaxDepth: 16})
		if err != nil {
			return
		}
		// The canonical form is what encoding/json.Marshal writes of the
		// same value decoded by encoding/json (numbers as written).
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var std any
		if dec.Decode(&std) == nil {
			want, err := json.Marshal(std)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := jsonval.CanonicalJSON(v.Tree); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("canonical form of %q is %q (%v), encoding/json's %q", raw, got, err, want)
			}
		}
		// Any valid value diffs from nothing and replays to the same sum.
		patch, err := jsonval.Diff(nil, raw)
		if err != nil {
			t.Fatal(err)
		}
		back, err := jsonval.ApplyPatch(nil, patch)
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := jsonval.SumOf(back); s != v.Sum {
			t.Fatalf("replay of %q gives another value %q", raw, back)
		}
	})
}

func FuzzDiffApply(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1,2,3]}`), []byte(`{"a":2,"b":[1,3],"c":{"d":"e"}}`))
	f.Add([]byte(`[1,{"x":[]}]`), []byte(`[{"x":[1]},1,2]`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		lim := jsonval.Limits{MaxBytes: 1 << 14, MaxDepth: 12}
		va, err := jsonval.ParseValue(a, lim)
		if err != nil {
			return
		}
		vb, err := jsonval.ParseValue(b, lim)
		if err != nil {
			return
		}
		patch, err := jsonval.DiffTrees(va.Tree, vb.Tree)
		if err != nil {
			t.Fatal(err)
		}
		// Replays apply patches to values the store wrote; a raw input with
		// duplicate object keys is not one of them.
		if hasDuplicateKeys(a) {
			return
		}
		got, err := jsonval.ApplyPatch(a, patch)
		if err != nil {
			t.Fatalf("apply %s to %s: %v", patch, a, err)
		}
		if s, _ := jsonval.SumOf(got); s != vb.Sum {
			t.Fatalf("diff %s of %s -> %s applies to %s", patch, a, b, got)
		}
	})
}

// hasDuplicateKeys reports whether some object in raw (valid JSON) names
// the same key twice.
func hasDuplicateKeys(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		keys     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top != nil && top.isObject {
					top.wantKey = true
				}
				stack = append(stack, &frame{keys: map[string]bool{}, isObject: t == '{', wantKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.isObject && top.wantKey {
				if top.keys[t] {
					return true
				}
				top.keys[t] = true
				top.wantKey = false
				continue
			}
			if top != nil && top.isObject {
				top.wantKey = true
			}
		default:
			if top != nil && top.isObject {
				top.wantKey = true
			}
		}
	}
}

// A patch is input: applying any patch to any document returns a value or
// an error, never a panic (the patch library panics on some), and a value
// is valid JSON.
func FuzzApplyPatch(f *testing.F) {
	f.Add([]byte(`{"a":[null,{"y":null}]}`), []byte(`[{"op":"test","path":"/a","value":[null,{"y":null}]}]`))
	f.Add([]byte(`{"a":1}`), []byte(`[{"op":"replace","path":"/a","value":2},{"op":"add","path":"/b","value":[1]}]`))
	f.Add([]byte(`{"a":null}`), []byte(`[{"op":"add","path":"/a/0","value":"x"}]`))
	f.Add([]byte(`[1,2]`), []byte(`[{"op":"move","from":"/0","path":"/1"}]`))
	f.Add([]byte(`{}`), []byte(`[{"op":"test","path":"/missing"}]`))
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		if !json.Valid(doc) {
			return
		}
		out, err := jsonval.ApplyPatch(doc, patch)
		if err == nil && out != nil && !json.Valid(out) {
			t.Fatalf("ApplyPatch(%s, %s) = %s: not JSON", doc, patch, out)
		}
	})
}
