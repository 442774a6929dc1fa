package jsonval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// IndentWriter is IndentValidTo for a value that arrives in pieces: the
// compact JSON a lazy value streams through its WriteTo goes in, the
// snapshot file's two-space indented form comes out, without the whole
// value ever being held as one []byte.
type IndentWriter struct {
	w      io.Writer
	buf    []byte // output not yet written to w
	depth  int
	inStr  bool // inside a string
	esc    bool // inside a string, right after a backslash
	open   bool // after '{' or '[', before the next byte that is not white space: empty or not is not known yet
	began  bool // the top-level value has begun; white space at depth 0 from now on is trailing
	closed bool
	err    error // sticky: the first error from w
}

// indentBufSize is how much output IndentWriter gathers before it writes
// to w; the slack above it leaves room for a byte of input's worth of
// output (a comma, a newline and an indent) without growing the buffer.
const (
	indentBufSize  = 64 << 10
	indentBufSlack = 1 + len(indentNewline)
)

// indentNewline is a newline and the indent of the 64 shallowest levels.
const indentNewline = "\n" +
	"                                                                " +
	"                                                                "

// indentPlain marks the bytes outside strings that are copied as they are:
// the bytes of numbers, true, false and null.
var indentPlain = func() (t [256]bool) {
	for i := range t {
		t[i] = true
	}
	for _, c := range []byte(" \t\r\n\"{}[],:") {
		t[c] = false
	}
	return t
}()

var (
	errIndentClosed     = errors.New("indent: write after Close")
	errIndentIncomplete = errors.New("indent: the JSON value written is incomplete")
)

// NewIndentWriter returns a writer that indents the valid JSON written to it
// (in chunks of any size, split anywhere, even inside strings or escapes) into w,
// byte for byte as IndentValidTo does; Close flushes (it does not close w).
//
// Like IndentValidTo it does not validate its input. Close reports a value
// left unfinished (an unclosed string or container, or nothing written at
// all), which is how a stream cut short shows. Output reaches w in writes
// of about 64 KiB.
func NewIndentWriter(w io.Writer) *IndentWriter {
	return &IndentWriter{w: w, buf: make([]byte, 0, indentBufSize+indentBufSlack)}
}

// Write indents p, which continues the JSON written so far.
func (iw *IndentWriter) Write(p []byte) (int, error) {
	if iw.err != nil {
		return 0, iw.err
	}
	if iw.closed {
		return 0, errIndentClosed
	}
	for i := 0; i < len(p); {
		if len(iw.buf) >= indentBufSize {
			if err := iw.flush(); err != nil {
				return 0, err
			}
		}
		if iw.inStr {
			i = iw.str(p, i)
			continue
		}
		c := p[i]
		if iw.open {
			if isSpace(c) {
				i++
				continue
			}
			iw.open = false
			if c == '}' || c == ']' {
				iw.buf = append(iw.buf, c) // json.Indent prints an empty container as {} or []
				i++
				continue
			}
			iw.depth++
			iw.newline()
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			if iw.depth == 0 && iw.began {
				// After the value: kept, as encoding/json.Indent keeps it.
				j := i + 1
				for j < len(p) && isSpace(p[j]) {
					j++
				}
				iw.copy(p[i:j])
				i = j
				continue
			}
			i++
		case '"':
			iw.began, iw.inStr = true, true
			iw.buf = append(iw.buf, c)
			i++
		case '{', '[':
			iw.began, iw.open = true, true
			iw.buf = append(iw.buf, c)
			i++
		case '}', ']':
			iw.depth--
			iw.newline()
			iw.buf = append(iw.buf, c)
			i++
		case ',':
			iw.buf = append(iw.buf, c)
			iw.newline()
			i++
		case ':':
			iw.buf = append(iw.buf, ':', ' ')
			i++
		default:
			iw.began = true
			j := i + 1
			for j < len(p) && indentPlain[p[j]] {
				j++
			}
			iw.copy(p[i:j])
			i = j
		}
	}
	if iw.err != nil {
		return 0, iw.err
	}
	return len(p), nil
}

// str copies the string bytes of p from i on, up to and including the
// closing quote, and returns the index after them (len(p) when the string
// goes on in the next chunk).
func (iw *IndentWriter) str(p []byte, i int) int {
	j := i
	if iw.esc { // p[i] is the byte the previous chunk's last backslash escapes
		iw.esc = false
		j++
	}
	// Most strings are short: a plain loop finds their end sooner than
	// calls to IndexByte, which win on long ones.
	for short := min(len(p), j+32); j < short; j++ {
		if c := p[j]; c == '"' {
			iw.copy(p[i : j+1])
			iw.inStr = false
			return j + 1
		} else if c == '\\' {
			j++ // past the escaped byte too
		}
	}
	if j >= len(p) {
		iw.esc = j > len(p) // the chunk ends with a backslash
		iw.copy(p[i:])
		return len(p)
	}
	q := -1 // index of the first quote at or after j, len(p) if none
	for {
		if q < j {
			if k := bytes.IndexByte(p[j:], '"'); k >= 0 {
				q = j + k
			} else {
				q = len(p)
			}
		}
		if k := bytes.IndexByte(p[j:q], '\\'); k >= 0 {
			j += k + 2 // past the backslash and the byte it escapes
			if j > len(p) {
				iw.esc = true
				j = len(p)
			}
			continue
		}
		if q == len(p) {
			iw.copy(p[i:])
			return len(p)
		}
		iw.copy(p[i : q+1])
		iw.inStr = false
		return q + 1
	}
}

// newline appends a newline and the indent of the current depth.
func (iw *IndentWriter) newline() {
	const most = len(indentNewline) - 1 // spaces in one append
	n := 2 * max(iw.depth, 0)
	iw.buf = append(iw.buf, indentNewline[:1+min(n, most)]...)
	for n -= most; n > 0; n -= most { // deeper than 64: rare, so simple
		if len(iw.buf) >= indentBufSize {
			iw.flush()
		}
		iw.buf = append(iw.buf, indentNewline[1:1+min(n, most)]...)
	}
}

// copy appends input that is copied as it is; a long run goes straight to w.
func (iw *IndentWriter) copy(b []byte) {
	if len(iw.buf)+len(b) <= cap(iw.buf) {
		iw.buf = append(iw.buf, b...)
		return
	}
	if iw.flush() != nil {
		return
	}
	if len(b) < indentBufSize {
		iw.buf = append(iw.buf, b...)
	} else if _, err := iw.w.Write(b); err != nil {
		iw.err = fmt.Errorf("indent: %w", err)
	}
}

// flush writes the buffered output to w. After an error it drops it.
func (iw *IndentWriter) flush() error {
	if iw.err == nil && len(iw.buf) > 0 {
		if _, err := iw.w.Write(iw.buf); err != nil {
			iw.err = fmt.Errorf("indent: %w", err)
		}
	}
	iw.buf = iw.buf[:0]
	return iw.err
}

// Close ends the value with the snapshot file's final newline and writes
// out what is buffered; it leaves the underlying writer open.
func (iw *IndentWriter) Close() error {
	if iw.closed {
		return iw.err
	}
	iw.closed = true
	iw.buf = append(iw.buf, '\n')
	if err := iw.flush(); err != nil {
		return err
	}
	if !iw.began || iw.inStr || iw.open || iw.depth != 0 {
		return errIndentIncomplete
	}
	return nil
}
