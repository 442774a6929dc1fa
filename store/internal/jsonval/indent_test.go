package jsonval_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// indentValidTo is what Indent makes of raw (the snapshot writer's bytes).
func indentValidTo(t testing.TB, raw []byte) []byte {
	t.Helper()
	b, err := jsonval.Indent(raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The snapshot's indented form: two spaces, empty containers kept on one
// line, strings and trailing white space as they were.
func TestIndentValid(t *testing.T) {
	deep := strings.Repeat("[", 70) + `{"a":[{}]}` + strings.Repeat("]", 70) // deeper than one write of indent
	// Longer than the strings a byte loop finishes, escapes anywhere.
	long := `{"` + strings.Repeat("k", 40) + `\"` + strings.Repeat(`\"{`, 30) + `\\":["` + strings.Repeat("v", 31) + `\\","` +
		strings.Repeat("w", 33) + `\u00e9` + strings.Repeat("x", 70) + `\\\""]}`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty object", `{}`, "{}\n"},
		{"empty array", `[]`, "[]\n"},
		{"empty with spaces", "{ \n\t}", "{}\n"},
		{"nested empties", `{"a":{},"b":[],"c":[{}],"d":[[ ]]}`,
			"{\n  \"a\": {},\n  \"b\": [],\n  \"c\": [\n    {}\n  ],\n  \"d\": [\n    []\n  ]\n}\n"},
		{"array of empties", `[[],{},[[]]]`, "[\n  [],\n  {},\n  [\n    []\n  ]\n]\n"},
		{"structure in strings", `{"k{[,:]}":"v]},:[{ "}`, "{\n  \"k{[,:]}\": \"v]},:[{ \"\n}\n"},
		{"escaped quotes and backslashes", `["a\"b","c\\","\\\"",{"\\":"\"\\"}]`,
			"[\n  \"a\\\"b\",\n  \"c\\\\\",\n  \"\\\\\\\"\",\n  {\n    \"\\\\\": \"\\\"\\\\\"\n  }\n]\n"},
		{"unicode escapes", `{"\u005c\u0022":"\u00e9\uD83D\uDE00"}`, "{\n  \"\\u005c\\u0022\": \"\\u00e9\\uD83D\\uDE00\"\n}\n"},
		{"raw UTF-8", `["é😀",""]`, "[\n  \"é😀\",\n  \"\"\n]\n"},
		{"white space between tokens", " [ 1 , { \"a\" : [ ] } , \"x y\" ] ", "[\n  1,\n  {\n    \"a\": []\n  },\n  \"x y\"\n] \n"},
		{"trailing white space kept", " \t\n{\"a\":1}\r\n ", "{\n  \"a\": 1\n}\r\n \n"},
		{"number", `-1.5e+10`, "-1.5e+10\n"},
		{"number then white space", "12 \n", "12 \n\n"},
		{"literals", `[true,false,null]`, "[\n  true,\n  false,\n  null\n]\n"},
		{"string", `"a\\"`, "\"a\\\\\"\n"},
		{"deep", deep, string(indentValidTo(t, []byte(deep)))},
		{"long strings", long, string(indentValidTo(t, []byte(long)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := []byte(tc.in)
			if !json.Valid(raw) {
				t.Fatalf("test input %q is not valid JSON", raw)
			}
			if got := indentValidTo(t, raw); string(got) != tc.want {
				t.Fatalf("IndentValidTo(%q) = %q, want %q", raw, got, tc.want)
			}
		})
	}
}

// FuzzIndentValid: the snapshot's indented form is what encoding/json's
// Indent writes, and a newline.
func FuzzIndentValid(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":[]},{}],"c":"x\"y\\"}`, " { \"a\" : [ 1 , 2 ] } \n",
		`"s\u00e9"`, `[[],[[ ]],{"k":{}}]`, `{"<":"&"}`, `[true,false,null,-0.5e3]`, "7\t",
		`["` + strings.Repeat(`ab\"`, 20) + `"]`} {
		f.Add([]byte(s), []byte{1, 0, 3, 2})
	}
	f.Fuzz(func(t *testing.T, raw, cuts []byte) {
		if !json.Valid(raw) {
			return
		}
		var want bytes.Buffer
		if err := json.Indent(&want, raw, "", "  "); err != nil {
			t.Fatalf("json.Indent of valid JSON: %v", err)
		}
		want.WriteByte('\n')
		if vt := indentValidTo(t, raw); !bytes.Equal(vt, want.Bytes()) {
			t.Fatalf("IndentValidTo(%q) = %q, json.Indent wrote %q", raw, vt, want.Bytes())
		}
	})
}

// BenchmarkIndentValid indents a 1,000-slice manifest (the snapshot
// writer's work for every snapshot).
func BenchmarkIndentValid(b *testing.B) {
	raw, _ := manifest1000(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		_, _ = jsonval.Indent(raw)
	}
}
