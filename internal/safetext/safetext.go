// Package safetext keeps text a caller sent from being taken for
// something else: input that is not valid UTF-8 is refused
// (INVALID_INPUT) instead of being committed as U+FFFD; free text is
// escaped before it goes into a Markdown file (escalation notices, the
// agent failure log) and stripped of control characters before it is
// printed to a terminal.
package safetext

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/custodian-dev/custodian/reason"
)

// CheckString refuses s, named what in the error, unless it is valid UTF-8.
func CheckString(what, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	return badUTF8(what, []byte(s))
}

// CheckJSON refuses JSON text b, named what in the error, unless it is
// valid UTF-8 and its strings escape no lone UTF-16 surrogate (\ud800 to
// \udfff not in a pair): the JSON decoder would turn either into U+FFFD.
func CheckJSON(what string, b []byte) error {
	if !utf8.Valid(b) {
		return badUTF8(what, b)
	}
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+1 < len(b) && b[i+1] != 'u' {
			i++ // a two-character escape (\\, \", \n…)
			continue
		}
		hi, ok := hex4(b, i+2)
		if !ok {
			continue // malformed: the decoder reports it
		}
		switch {
		case hi >= 0xD800 && hi < 0xDC00:
			lo, ok := rune(0), false
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				lo, ok = hex4(b, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return reason.New(reason.InvalidInput, "%s: a lone UTF-16 surrogate escape (\\u%04x) at byte %d is not a character", what, hi, i)
			}
			i += 11
		case hi >= 0xDC00 && hi <= 0xDFFF:
			return reason.New(reason.InvalidInput, "%s: a lone UTF-16 surrogate escape (\\u%04x) at byte %d is not a character", what, hi, i)
		default:
			i += 5
		}
	}
	return nil
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func badUTF8(what string, b []byte) error {
	off := 0
	for off < len(b) {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	return reason.New(reason.InvalidInput, "%s is not valid UTF-8 (byte 0x%02x at offset %d)", what, b[off], off)
}

// unsafe reports runes that change how text is shown rather than being
// shown: C0 and C1 controls, DEL, line and paragraph separators, and the
// bidirectional overrides and isolates ("Trojan Source").
func unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// Terminal returns s fit to print on a terminal: each control character
// (escape sequences, carriage return, newline, tab, backspace…) and each
// bidirectional override is shown as a Go escape (\x1b, \n, \u202e), and
// invalid UTF-8 as U+FFFD, so that text can neither move the cursor, nor
// recolour the screen, nor forge a line or a column.
func Terminal(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafe(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if !unsafe(r) {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		}
	}
	return b.String()
}

// Inline returns s fit to stand as inline text on one line of a Markdown
// file: line breaks (LF, CR, CRLF, U+2028/9) become spaces, other control
// characters and bidirectional overrides are dropped, a '<' that would
// start HTML becomes "&lt;" (no tag, no "<!--" that hides the rest of the
// file), and a character
// that would make the line a heading, list item, quote, table row, code
// fence or thematic break is escaped with a backslash.
func Inline(s string) string {
	out := inline(s)
	if out != "" && strings.ContainsRune("#-+*>|=`~_", rune(out[0])) || startsWithOrdered(out) {
		out = `\` + out
	}
	return out
}

// inline is Inline but for the escape of the first character.
func inline(s string) string {
	var b strings.Builder
	space := false
	// What is dropped goes first, so that the look past '<' sees what
	// stays: "<\x01!" is "<!" once the control character is gone.
	blank := func(r rune) bool { return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029 || r == '\t' }
	rs := slices.DeleteFunc([]rune(strings.ToValidUTF8(s, "\uFFFD")), func(r rune) bool { return unsafe(r) && !blank(r) })
	for i, r := range rs {
		switch {
		case blank(r):
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		case r == '<' && i+1 < len(rs) && startsTag(rs[i+1]):
			b.WriteString("&lt;")
		default:
			b.WriteRune(r)
		}
		space = false
	}
	return strings.TrimSpace(b.String())
}

// startsTag reports whether r after '<' may start HTML in CommonMark: a
// tag, a closing tag, a comment, a declaration or a processing
// instruction. "0.4 < 0.85" stays as it is.
func startsTag(r rune) bool {
	return r == '!' || r == '/' || r == '?' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
}

// startsWithOrdered reports "12. " or "12)" (then a space or the end) at
// the start: an ordered list item. "0.4" is not one.
func startsWithOrdered(s string) bool {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') && (i+1 == len(s) || s[i+1] == ' ')
}

// Cell returns s fit to stand in one cell of a Markdown table row: Inline
// text with backslashes and pipes escaped ("\|" stays inside the cell,
// and so does a "\" the text ends with).
func Cell(s string) string {
	s = strings.ReplaceAll(inline(s), `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

// TerminalText returns a command's text output fit for a terminal: like
// Terminal, but newlines and tabs (the output's own layout) and SGR
// sequences (ESC [ digits and ';' m: the output's own colours) are kept.
// Every other escape sequence (cursor moves, screen clears, window
// titles, OSC 52 clipboard writes…), control character and bidirectional
// override is shown escaped. Fields that come from the state are escaped
// with Terminal before they are laid out, so that a newline or tab in one
// cannot forge a line or a column; this is the net under them.
func TerminalText(b []byte) []byte {
	clean := true
	for i := 0; i < len(b); i++ {
		if c := b[i]; (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return b
	}
	var out []byte
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0x1b {
			if n := sgrLen(b[i:]); n > 0 {
				out = append(out, b[i:i+n]...)
				i += n
				continue
			}
		}
		if c == '\n' || c == '\t' {
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			out = append(out, "\uFFFD"...)
			i++
			continue
		}
		out = append(out, Terminal(string(b[i:i+n]))...)
		i += n
	}
	return out
}

// sgrLen is the length of the SGR sequence b starts with (ESC [ [0-9;]* m),
// 0 if it does not start with one.
func sgrLen(b []byte) int {
	if len(b) < 3 || b[0] != 0x1b || b[1] != '[' {
		return 0
	}
	for i := 2; i < len(b) && i < 64; i++ {
		switch c := b[i]; {
		case c == 'm':
			return i + 1
		case c == ';' || ('0' <= c && c <= '9'):
		default:
			return 0
		}
	}
	return 0
}
