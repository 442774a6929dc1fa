package jsonval_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// indentValidTo is what IndentValidTo writes for raw.
func indentValidTo(t testing.TB, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jsonval.IndentValidTo(bufio.NewWriter(&buf), raw); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// indentChunks writes raw to an IndentWriter in the chunks whose lengths
// size gives in turn (the rest of raw once it says -1) and closes it.
func indentChunks(raw []byte, size func() int) ([]byte, error) {
	var buf bytes.Buffer
	iw := jsonval.NewIndentWriter(&buf)
	for len(raw) > 0 {
		n := size()
		if n < 0 || n > len(raw) {
			n = len(raw)
		}
		if _, err := iw.Write(raw[:n]); err != nil {
			return nil, err
		}
		raw = raw[n:]
	}
	err := iw.Close()
	return buf.Bytes(), err
}

// sizes yields ns, then -1.
func sizes(ns ...int) func() int {
	return func() int {
		if len(ns) == 0 {
			return -1
		}
		n := ns[0]
		ns = ns[1:]
		return n
	}
}

func TestIndentWriter(t *testing.T) {
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
			check := func(how string, size func() int) {
				t.Helper()
				got, err := indentChunks(raw, size)
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				if string(got) != tc.want {
					t.Fatalf("%s: got %q, want %q", how, got, tc.want)
				}
			}
			check("one chunk", sizes())
			check("byte by byte", func() int { return 1 })
			for i := range len(raw) + 1 {
				check(fmt.Sprintf("split at %d", i), sizes(i))
				check(fmt.Sprintf("split at %d with empty writes", i), sizes(0, i, 0, 0))
			}
		})
	}
}

// Output larger than the buffer, and strings longer than it, come out whole.
func TestIndentWriterLarge(t *testing.T) {
	big := `"` + strings.Repeat("0123456789\\\"", 20<<10) + `"`
	raw := []byte(`{"a":[` + big + `,` + strings.Repeat(`{"b":[1,{}]},`, 10<<10) + big + `]}`)
	want := indentValidTo(t, raw)
	for _, n := range []int{-1, 1000, 64 << 10, 100 << 10} {
		got, err := indentChunks(raw, func() int { return n })
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("in chunks of %d: output differs from IndentValidTo's", n)
		}
	}
}

// Close reports a value cut short, and a value that never began.
func TestIndentWriterIncomplete(t *testing.T) {
	for _, in := range []string{``, " \n", `{"a":`, `["x`, `"a\`, `[`, `{"a":[1]`} {
		if _, err := indentChunks([]byte(in), sizes()); err == nil {
			t.Errorf("Close after %q: no error", in)
		}
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

// The underlying writer's error comes back from Write or Close, wrapped;
// a Write after Close fails.
func TestIndentWriterErrors(t *testing.T) {
	boom := errors.New("disk full")
	iw := jsonval.NewIndentWriter(failWriter{boom})
	_, werr := iw.Write([]byte(`[` + strings.Repeat(`"0123456789abcdef",`, 8<<10) + `0]`)) // more than the buffer
	if !errors.Is(werr, boom) {
		t.Fatalf("Write error %v, want %v", werr, boom)
	}
	if err := iw.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close error %v, want %v", err, boom)
	}

	iw = jsonval.NewIndentWriter(failWriter{boom})
	if _, err := iw.Write([]byte(`{}`)); err != nil {
		t.Fatalf("buffered Write: %v", err)
	}
	if err := iw.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close error %v, want %v", err, boom)
	}

	iw = jsonval.NewIndentWriter(io.Discard)
	if err := iw.Close(); err == nil {
		t.Fatal("Close of nothing: no error")
	}
	if _, err := iw.Write([]byte(`1`)); err == nil {
		t.Fatal("Write after Close: no error")
	}
}

// For any valid JSON in any chunks, IndentWriter writes what IndentValidTo
// writes, which is what encoding/json.Indent writes and a newline.
func FuzzIndentWriter(f *testing.F) {
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
		got, err := indentChunks(raw, func() int {
			if len(cuts) == 0 {
				return -1
			}
			n := int(cuts[0]) // 0 (an empty write) to 255
			cuts = cuts[1:]
			return n
		})
		if err != nil {
			t.Fatalf("IndentWriter(%q): %v", raw, err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("IndentWriter(%q) = %q, want %q", raw, got, want.Bytes())
		}
	})
}

// benchDocument returns a compact JSON document of at least size bytes
// shaped like an ASDD manifest: slices with maps, chains, tasks, some
// escapes and empty containers.
func benchDocument(size int) []byte {
	slice := func(i int) map[string]any {
		id := fmt.Sprintf("SLICE-%05d", i)
		tasks := []any{}
		for t := range 8 {
			tasks = append(tasks, map[string]any{"id": fmt.Sprintf("T%03d", t), "title": fmt.Sprintf("task %d: \"quoted\" <b>", t), "wave": 1 + t/4, "status": "pending", "deps": []string{}})
		}
		return map[string]any{
			"slice_id": id, "name": "bench slice " + id, "type": "FEATURE", "status": "SPEC",
			"notes":      "line one\nline two\tтабуляция \\ end",
			"phase_data": map[string]string{"intent": ".asdd/specs/" + id + "/intent.md", "requirements": ".asdd/specs/" + id + "/requirements.md"},
			"confidence_chain": []any{
				map[string]any{"agent": "discovery", "score": 0.97, "timestamp": "2026-11-01T00:00:00Z"},
				map[string]any{"agent": "spec", "score": 0.96, "timestamp": "2026-11-01T00:10:00Z"},
			},
			"artifact_hashes": map[string]string{".asdd/specs/" + id + "/intent.md": "sha256:" + strings.Repeat("a", 64)},
			"tasks":           tasks,
			"meta":            map[string]any{},
		}
	}
	one, _ := json.Marshal(slice(0))
	var slices []any
	for i := range size/len(one) + 1 {
		slices = append(slices, slice(i))
	}
	b, err := json.Marshal(map[string]any{"version": "1", "project_context": map[string]any{"current_sprint": "BENCH"}, "slices": slices})
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkIndentWriter(b *testing.B) {
	for _, size := range []int{1 << 20, 13 << 20} {
		doc := benchDocument(size)
		name := fmt.Sprintf("%.0fMB", float64(len(doc))/(1<<20))
		out := bufio.NewWriterSize(io.Discard, 64<<10) // NewIndentWriter takes it as it is
		b.Run(name+"/IndentValidTo", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if err := jsonval.IndentValidTo(out, doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, chunk := range []int{len(doc), 32 << 10, 4 << 10, 64} {
			b.Run(fmt.Sprintf("%s/IndentWriter/chunk=%d", name, chunk), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					iw := jsonval.NewIndentWriter(out)
					for p := doc; len(p) > 0; {
						n := min(chunk, len(p))
						if _, err := iw.Write(p[:n]); err != nil {
							b.Fatal(err)
						}
						p = p[n:]
					}
					if err := iw.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
