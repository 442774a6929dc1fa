package jsonval_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// A lazy tree's canonical form is the decoded tree's, whatever needs
// sorting or escaping, at any depth; what jsontext refuses is an error, not
// another value.
func TestDecodeLazyCanonical(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		fails     bool
	}{
		{name: "scalar", raw: `"x"`},
		{name: "empty containers", raw: `{"b":{},"a":[],"c":[{}]}`},
		{name: "members sorted at every depth", raw: `{"z":{"y":[{"q":1,"p":{"d":true,"c":null}}],"x":2},"a":[[{"b":1,"a":2}]]}`},
		{name: "escaped names sort by their value", raw: `{"b":{"\u0063":1,"b":2,"\u0061":3},"a":0}`},
		{name: "strings encoding/json escapes", raw: `{"a":{"s":"<&>","t":"\u00e9\u2028","u":"tab\there","v":"\/"}}`},
		{name: "numbers as written", raw: `{"a":{"n":[1.50,-0,1e+2,12345678901234567890]}}`},
		{name: "white space", raw: " {\n \"b\" :\t[ 1 , 2 ] ,\"a\" : { \"y\" : 1 , \"x\" : 2 } }\n"},
		{name: "a member named twice", raw: `{"a":{"x":1,"x":2}}`, fails: true},
		{name: "invalid UTF-8", raw: "{\"a\":{\"x\":\"\xff\"}}", fails: true},
		{name: "data after the value", raw: `{"a":{}} {}`, fails: true},
		{name: "truncated", raw: `{"a":{"b":[1,2}}`, fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lazy, err := jsonval.DecodeLazy([]byte(tc.raw))
			var got []byte
			if err == nil {
				got, err = jsonval.CanonicalJSON(lazy)
			}
			if tc.fails {
				if err == nil {
					t.Fatalf("canonical form %s, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonval.CanonicalJSON(jsonval.MustDecode(t, []byte(tc.raw)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("lazy canonical form %s, decoded tree's %s", got, want)
			}
		})
	}
}

// A direct commit's work on a lazy tree — the patch, the snapshot's bytes
// (compact and indented) and the sum — gives what it gives on the decoded
// tree, and leaves the lazy tree the value it was.
func FuzzDecodeLazy(f *testing.F) {
	f.Add([]byte(`{"z":1,"a":{"y":[1,2,{"q":null}],"b":"<é>"},"m":true}`), []byte(`[{"op":"add","path":"/a/c","value":4},{"op":"replace","path":"/z","value":5.50},{"op":"remove","path":"/m"},{"op":"add","path":"/a/y/1","value":{"n":[]}}]`))
	f.Add([]byte(`{"a":{"x":1,"x":2},"b":[]}`), []byte(`[{"op":"add","path":"/b/0","value":1}]`))
	f.Add([]byte(`[1,[2,3],{"x":"\u00e9","\u0061":[{}]}]`), []byte(`[{"op":"remove","path":"/1/0"},{"op":"add","path":"/-","value":7}]`))
	f.Add([]byte(`{"":{"":0}}`), []byte(`[{"op":"replace","path":"//","value":[]}]`))
	f.Add([]byte(`{"s":[{"b":1,"a":{"d":[1],"c":2}},{"b":2}],"h":{}}`), []byte(`[{"op":"add","path":"/h/x","value":{"t":1}},{"op":"replace","path":"/s/1/b","value":3}]`))
	f.Fuzz(func(t *testing.T, base, patch []byte) {
		fuzzDecodeLazy(t, base, patch)
		fuzzDecodeLazy(t, jsonval.IndentValid(base), patch) // a snapshot
		jsonval.SmallChunks(t)                              // arrays of three or more as big arrays
		fuzzDecodeLazy(t, base, patch)
	})
}

func fuzzDecodeLazy(t *testing.T, base, patch []byte) {
	lim := jsonval.Limits{MaxBytes: 1 << 16, MaxDepth: 32}
	v, err := jsonval.ParseValue(base, lim)
	if err != nil {
		return
	}
	_, strict := jsonval.DecodeStrict(base)
	lazy, err := jsonval.DecodeLazy(base)
	if err != nil {
		if strict {
			t.Fatalf("DecodeLazy(%q): %v; the fast decoder takes it", base, err)
		}
		return
	}
	sum, err := jsonval.SumTree(lazy)
	if err != nil {
		if strict {
			t.Fatalf("SumTree of lazy %q: %v", base, err)
		}
		return
	}
	if sum != v.Sum {
		t.Fatalf("lazy sum of %q is %s, the value's %s", base, sum, v.Sum)
	}
	want, werr := jsonval.PatchTree(v.Tree, patch, lim)
	got, gerr := jsonval.PatchTree(lazy, patch, lim)
	if (werr == nil) != (gerr == nil) {
		if strict || gerr == nil {
			t.Fatalf("PatchTree: %v on the decoded tree, %v on the lazy one", werr, gerr)
		}
		return
	}
	if werr != nil {
		return
	}
	for name, f := range map[string]func([]byte, any, any) ([]byte, error){"TreeBytes": jsonval.TreeBytes, "TreeBytesIndented": jsonval.TreeBytesIndented} {
		wb, werr := f(base, v.Tree, want)
		gb, gerr := f(base, lazy, got)
		if werr != nil || gerr != nil {
			if werr == nil && strict {
				t.Fatalf("%s on the lazy tree: %v", name, gerr)
			}
			continue
		}
		if !bytes.Equal(wb, gb) {
			t.Fatalf("%s of %q after %s: %q from the lazy tree, %q from the decoded one", name, base, patch, gb, wb)
		}
	}
	ws, _ := jsonval.SumTree(want)
	gs, err := jsonval.SumTree(got)
	if err != nil && strict || err == nil && gs != ws {
		t.Fatalf("sum after %s: %s (%v) from the lazy tree, %s from the decoded one", patch, gs, err, ws)
	}
	if again, err := jsonval.SumTree(lazy); err != nil || again != v.Sum {
		t.Fatalf("the lazy tree changed: %s (%v), was %s", again, err, v.Sum)
	}
}

// BenchmarkLazyHeartbeat is a direct commit's work on a 1,000-slice
// manifest after a heartbeat, from the snapshot's bytes: the tree (lazy or
// decoded), the patch, the new snapshot and the sum.
func BenchmarkLazyHeartbeat(b *testing.B) {
	raw, _ := manifest1000(b)
	snap := jsonval.IndentValid(raw)
	for _, lazy := range []bool{false, true} {
		b.Run(fmt.Sprintf("lazy=%v", lazy), func(b *testing.B) {
			b.SetBytes(int64(len(snap)))
			for i := 0; b.Loop(); i++ {
				decode := jsonval.Decode
				if lazy {
					decode = jsonval.DecodeLazy
				}
				from, err := decode(snap)
				if err != nil {
					b.Fatal(err)
				}
				patch := fmt.Sprintf(`[{"op":"add","path":"/agent_heartbeats/spec_agent","value":{"last_execution":"2026-11-25T12:00:00Z","status":"ACTIVE","tasks_completed":%d}},{"op":"replace","path":"/revision","value":%d}]`, i, i+2)
				tree, err := jsonval.PatchTree(from, []byte(patch), jsonval.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := jsonval.TreeBytesIndented(snap, from, tree); err != nil {
					b.Fatal(err)
				}
				if _, err := jsonval.SumTree(tree); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
