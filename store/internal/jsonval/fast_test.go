package jsonval

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// slowDecode is Decode with encoding/json alone.
func slowDecode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, errNotFast
	}
	return v, nil
}

// Whatever the fast path decodes, encoding/json decodes to the same tree.
func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2.50,-0,1e3,{"b":null}],"c":"\u00e9<\ud83d\ude00>"}`, `"x"`, ` 1 `, `{"a":1,"a":2}`, "\"\xff\"", `[1,]`, `{"a":1} {}`, `tru`, `{"A":1,"a":2}`, `"\ud800"`, `["\udc00x", 1e999]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		fast, ok := decodeFast(raw)
		slow, err := slowDecode(raw)
		if !ok {
			return
		}
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %#v, encoding/json %#v (%v)", raw, fast, slow, err)
		}
	})
}

// Whatever patch the fast path decodes, json.Unmarshal decodes the same.
func FuzzOpsFast(f *testing.F) {
	for _, s := range []string{`[]`, `[{"op":"add","path":"/a","value":{"x":[1]}}]`, `[{"op":"remove","path":"/a~1b"},{"op":"move","from":"/a","path":"/b"}]`, `[{"OP":"add","path":"","value":1}]`, `[{"op":"add","path":"/a","value":null}]`, `[{"op":"add","op":"remove"}]`, `[{"op":1}]`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, patch []byte) {
		fast, ok := opsFast(patch)
		if !ok {
			return
		}
		var slow []Op
		if err := json.Unmarshal(patch, &slow); err != nil {
			t.Fatalf("%q: fast %#v, encoding/json refuses: %v", patch, fast, err)
		}
		if len(fast) != len(slow) {
			t.Fatalf("%q: fast %#v, encoding/json %#v", patch, fast, slow)
		}
		for i := range fast {
			a, b := fast[i], slow[i]
			if a.Op != b.Op || a.Path != b.Path || a.From != b.From || !bytes.Equal(a.Value, b.Value) {
				t.Fatalf("%q: op %d fast %#v, encoding/json %#v", patch, i, a, b)
			}
		}
	})
}

// Whatever patch the tree fast path decodes, json.Unmarshal decodes the
// same operations, and Decode and Depth give the same values and depths.
func FuzzTreeOpsFast(f *testing.F) {
	for _, s := range []string{`[]`, `[{"op":"add","path":"/a","value":{"x":[1,{"y":[]}]}}]`, `[{"op":"remove","path":"/a~1b"},{"op":"replace","path":"/b","value":"<é>"}]`, `[{"Op":"add","path":"","value":1}]`, `[{"op":"add","path":"/a","value":null}]`, `[{"op":"add","value":1,"value":2}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, patch []byte) {
		fast, ok := treeOpsFast(patch)
		if !ok {
			return
		}
		var slow []Op
		if err := json.Unmarshal(patch, &slow); err != nil || len(slow) != len(fast) {
			t.Fatalf("%q: fast %#v, encoding/json %#v (%v)", patch, fast, slow, err)
		}
		for i, a := range fast {
			b := slow[i]
			if a.Op != b.Op || a.Path != b.Path || a.hasVal != (b.Value != nil) {
				t.Fatalf("%q: op %d fast %#v, encoding/json %#v", patch, i, a, b)
			}
			if !a.hasVal {
				continue
			}
			v, err := slowDecode(b.Value)
			d, derr := Depth(b.Value)
			if err != nil || derr != nil || !reflect.DeepEqual(v, a.val) || d != a.depth {
				t.Fatalf("%q: op %d value %#v depth %d, encoding/json %#v depth %d (%v %v)", patch, i, a.val, a.depth, v, d, err, derr)
			}
		}
	})
}
