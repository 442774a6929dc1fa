package safetext

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/custodian-dev/custodian/reason"
)

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"a":"plain"}`, true},
		{`{"a":"é ✓ 😀"}`, true},
		{`{"a":"\u00e9 \ud83d\ude00"}`, true}, // a surrogate pair
		{`{"a":"\\ud800"}`, true},             // an escaped backslash, then text
		{`{"a":"\\\ud800"}`, false},
		{`{"a":"\ud800"}`, false},
		{`{"a":"\udc00"}`, false},
		{`{"a":"\ud800\u0041"}`, false},
		{`{"a":"\uD800x"}`, false},
		{"{\"a\":\"\xff\"}", false},
		{"{\"a\":\"\xc3\"}", false},
		{"{\"a\":\"\xed\xa0\x80\"}", false}, // a surrogate encoded in UTF-8
	} {
		err := CheckJSON("body", []byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("CheckJSON(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
		if err != nil && reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("CheckJSON(%q): code %s", tc.in, reason.CodeOf(err))
		}
	}
	if err := CheckString("--name", "a\xffb"); err == nil || !strings.Contains(err.Error(), "offset 1") {
		t.Errorf("CheckString: %v", err)
	}
}

func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{`"x"`, `"\ud800"`, `["\ud83d\ude00"]`, "\"\xff\"", `{"\\u":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if CheckJSON("b", b) != nil || json.Unmarshal(b, &v) != nil {
			return
		}
		// Accepted and well formed: decoding replaced nothing with U+FFFD
		// (unless the text had it already).
		lower := strings.ToLower(string(b))
		if strings.Contains(lower, `\ufffd`) || strings.ContainsRune(string(b), utf8.RuneError) {
			return
		}
		out, _ := json.Marshal(v)
		if strings.ContainsRune(string(out), utf8.RuneError) || strings.Contains(string(out), `\ufffd`) {
			t.Fatalf("%q accepted but decoded with U+FFFD: %s", b, out)
		}
	})
}

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"SLICE-1":              "SLICE-1",
		"a\x1b[2Jb":            `a\x1b[2Jb`,
		"T-1\n| T-9 | ready |": `T-1\n| T-9 | ready |`,
		"x\ry":                 `x\ry`,
		"tab\there":            `tab\there`,
		"evil\u202egnp.exe":    `evil\u202egnp.exe`,
		"c1\u009b31m":          `c1\u009b31m`,
		"bad\xffutf":           "bad\uFFFDutf",
		"déjà vu ✓":            "déjà vu ✓",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, inline, cell string }{
		{"plain text", "plain text", "plain text"},
		{"Login\n- Status: RESOLVED", `Login - Status: RESOLVED`, `Login - Status: RESOLVED`},
		{"- Status: RESOLVED", `\- Status: RESOLVED`, `- Status: RESOLVED`},
		{"# Escalation ESC-X", `\# Escalation ESC-X`, `# Escalation ESC-X`},
		{"1. item", `\1. item`, `1. item`},
		{"a <!-- hide", "a &lt;!-- hide", "a &lt;!-- hide"},
		{"a <\x01!-- hide", "a &lt;!-- hide", "a &lt;!-- hide"}, // the control character is dropped first
		{"0.4 < 0.85 <b>x</b>", "0.4 < 0.85 &lt;b>x&lt;/b>", "0.4 < 0.85 &lt;b>x&lt;/b>"},
		{`a \| b`, `a \| b`, `a \\\| b`},
		{"a | b", "a | b", `a \| b`},
		{"ends with \\", `ends with \`, `ends with \\`},
		{"bare\rCR", "bare CR", "bare CR"},
		{"crlf\r\n\r\nend", "crlf end", "crlf end"},
		{"esc\x1b[31m", "esc[31m", "esc[31m"},
		{"sep\u2028x", "sep x", "sep x"},
	} {
		if got := Inline(tc.in); got != tc.inline {
			t.Errorf("Inline(%q) = %q, want %q", tc.in, got, tc.inline)
		}
		if got := Cell(tc.in); got != tc.cell {
			t.Errorf("Cell(%q) = %q, want %q", tc.in, got, tc.cell)
		}
	}
}

// FuzzCell: a cell never ends the row early nor spans lines: outside
// backslash pairs it holds no '|', and no line break.
func FuzzCell(f *testing.F) {
	for _, s := range []string{`a \| b`, "x\ny", `\\|`, "|", `\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := Cell(s)
		if strings.ContainsAny(c, "\n\r") || strings.Contains(c, "<!") {
			t.Fatalf("Cell(%q) = %q", s, c)
		}
		for i := 0; i < len(c); i++ {
			switch c[i] {
			case '\\':
				i++ // an escaped pair (cmark-gfm's table cells)
			case '|':
				t.Fatalf("Cell(%q) = %q: bare pipe at %d", s, c, i)
			}
		}
		if in := Inline(s); strings.ContainsAny(in, "\n\r") || strings.Contains(in, "<!") || strings.Contains(in, "</") {
			t.Fatalf("Inline(%q) = %q", s, Inline(s))
		}
	})
}

func TestTerminalText(t *testing.T) {
	for in, want := range map[string]string{
		"SLICE\tNAME\nS-1\tLogin\n":                   "SLICE\tNAME\nS-1\tLogin\n",
		"\x1b[1mbold\x1b[0m \x1b[38;5;196mred\x1b[0m": "\x1b[1mbold\x1b[0m \x1b[38;5;196mred\x1b[0m",
		"a\x1b[2Jb\x1b]0;title\x07c":                  `a\x1b[2Jb\x1b]0;title\x07c`,
		"x\ry \u202e z \u009b1m":                      `x\ry \u202e z \u009b1m`,
		"ok ✓ \xff":                                   "ok ✓ \uFFFD",
	} {
		if got := string(TerminalText([]byte(in))); got != want {
			t.Errorf("TerminalText(%q) = %q, want %q", in, got, want)
		}
	}
}
