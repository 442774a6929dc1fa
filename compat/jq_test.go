package compat

import (
	"context"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

func TestJQ(t *testing.T) {
	ctx := context.Background()
	ts := StringArg("ts", "2026-11-25T12:00:00Z")
	for _, tc := range []struct {
		name, prog, doc string
		args            []Arg
		want            string
	}{
		{"increment", `.n += 1`, `{"version":2,"n":1,"z":true}`, nil, `{"version":2,"n":2,"z":true}`},
		{"missing field", `.n += 1`, `{}`, nil, `{"n":1}`},
		{"order kept, new keys after", `.b = 1 | .a = 2 | .updatedAt = $ts`, `{"z":0,"b":0}`, []Arg{ts}, `{"z":0,"b":1,"a":2,"updatedAt":"2026-11-25T12:00:00Z"}`},
		{"nested order", `.s.y = 3`, `{"s":{"z":1,"y":2,"x":0}}`, nil, `{"s":{"z":1,"y":3,"x":0}}`},
		{"argjson", `.cfg = $c`, `{}`, []Arg{mustJSONArg(t, "c", `{"k":[1,2.5,"x",null]}`)}, `{"cfg":{"k":[1,2.5,"x",null]}}`},
		{"big integers stay exact", `.`, `{"id":123456789012345678901234567890,"t":1732500000000}`, nil, `{"id":123456789012345678901234567890,"t":1732500000000}`},
		{"floats", `.f *= 2`, `{"f":0.1}`, nil, `{"f":0.2}`},
		{"array update", `.tasks[1].status = "done"`, `{"tasks":[{"id":1,"status":"a"},{"id":2,"status":"b"}]}`, nil, `{"tasks":[{"id":1,"status":"a"},{"id":2,"status":"done"}]}`},
		{"delete", `del(.a)`, `{"a":1,"b":2}`, nil, `{"b":2}`},
		{"no env", `.e = ($ENV | length)`, `{}`, nil, `{"e":0}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JQ(ctx, tc.prog, []byte(tc.doc), tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func mustJSONArg(t *testing.T, name, text string) Arg {
	a, err := JSONArg(name, text)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestJQRejects(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct{ prog, doc string }{
		{`.n +=`, `{}`},           // does not parse
		{`.n = $undefined`, `{}`}, // unknown variable
		{`.[]`, `{"a":1,"b":2}`},  // two values
		{`empty`, `{}`},           // none
		{`error("no")`, `{}`},     // fails
		{`.a.b = 1`, `{"a":"s"}`}, // type error
		{`.`, `{"a":`},            // the document is not JSON
		{`last(repeat(.))`, `{}`}, // endless: stopped by the timeout (shortened below)
	} {
		c := ctx
		if tc.prog == `last(repeat(.))` {
			var cancel func()
			c, cancel = context.WithTimeout(ctx, 200_000_000)
			defer cancel()
		}
		if _, err := JQ(c, tc.prog, []byte(tc.doc), nil); err == nil {
			t.Errorf("%s on %s: no error", tc.prog, tc.doc)
		} else if code := reason.CodeOf(err); code != reason.InvalidInput && code != reason.CorruptState {
			t.Errorf("%s: code %s (%v)", tc.prog, code, err)
		}
	}
	if _, err := JSONArg("x", `{bad`); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("bad --argjson: %v", err)
	}
	if _, err := JQ(ctx, `.`, []byte(`{}`), []Arg{{Name: "1x", Value: 1}}); err == nil {
		t.Error("bad variable name accepted")
	}
}

func FuzzJQDocument(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,2,{"b":null}]}`, `[1,"x",true]`, `1e400`, `{"a":1,"a":2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		out, err := JQ(context.Background(), `.`, []byte(doc), nil)
		if err != nil {
			return
		}
		// The identity program's output is JSON that reads back the same.
		again, err := JQ(context.Background(), `.`, out, nil)
		if err != nil || string(again) != string(out) {
			t.Errorf("%q -> %q -> %q (%v)", doc, out, again, err)
		}
	})
}

// Text jq would turn into U+FFFD without a word is INVALID_INPUT: a program
// or --arg that is not UTF-8, a string literal or --argjson escaping a lone
// UTF-16 surrogate. A surrogate pair and an escaped backslash are fine.
func TestJQRefusesInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		prog string
		args []Arg
		ok   bool
	}{
		{".a = \"\xff\"", nil, false},
		{`.a = "\ud800"`, nil, false},
		{`.a = "\udc00"`, nil, false},
		{`.a = "x\ud800\u0041"`, nil, false},
		{`.a = "\ud800\ud800"`, nil, false},
		{`.a = "\uD83D"`, nil, false},
		{`.a = $x`, []Arg{StringArg("x", "\xfe")}, false},
		{`.a = "\ud83d\ude00"`, nil, true},
		{`.a = "\\ud800"`, nil, true},
		{`.a = "\u00e9"`, nil, true},
		{`.a = $x`, []Arg{StringArg("x", `\ud800`)}, true}, // --arg is literal text
	} {
		out, err := JQ(ctx, tc.prog, []byte(`{}`), tc.args)
		switch {
		case tc.ok && err != nil:
			t.Errorf("%q: %v", tc.prog, err)
		case !tc.ok && reason.CodeOf(err) != reason.InvalidInput:
			t.Errorf("%q: %s, %v; want INVALID_INPUT", tc.prog, out, err)
		}
	}
	if _, err := JSONArg("x", `"\ud800"`); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf(`--argjson x '"\ud800"': %v, want INVALID_INPUT`, err)
	}
	if _, err := JSONArg("x", "\"\xff\""); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf(`--argjson x with invalid UTF-8: %v, want INVALID_INPUT`, err)
	}
}

// A program that grows the heap past its memory budget is stopped with
// INVALID_INPUT naming the budget (lowered here, so that the test itself
// stays small), well before its time is up.
func TestJQStopsAProgramPastItsMemoryBudget(t *testing.T) {
	defer func(m uint64) { jqMaxMemory = m }(jqMaxMemory)
	jqMaxMemory = 16 << 20
	// 64 MiB held, then a long spin: the budget, not the clock, stops it.
	_, err := JQ(context.Background(), `reduce range(26) as $i ("x"; . + .) | [length, last(range(1e12))]`, []byte(`{}`), nil)
	if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "memory budget") {
		t.Fatalf("a program holding 64 MiB: %v, want INVALID_INPUT past its memory budget", err)
	}
}

// A result larger than a document may be is refused while it is encoded,
// not built whole first.
func TestJQRefusesAHugeResult(t *testing.T) {
	_, err := JQ(context.Background(), `.[20000000] = 1`, []byte(`[]`), nil)
	if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a result of 20M elements: %v, want INVALID_INPUT", err)
	}
}
