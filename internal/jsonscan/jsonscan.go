// Package jsonscan reads the simple, common shapes of a few hot JSON
// messages (the daemon's operation requests and responses) without
// reflection. It only recognises: every method reports false as soon as
// the input leaves the shape it reads (an escape in a string, a repeated
// member, a number where a string was expected…), and the caller then
// decodes the input with encoding/json, so values and errors are always
// encoding/json's. Callers fuzz their decoders against encoding/json.
package jsonscan

import (
	"slices"
	"unicode/utf8"
)

// Parser reads one JSON text from left to right.
type Parser struct {
	b []byte
	i int
}

// New returns a parser at the start of b.
func New(b []byte) *Parser { return &Parser{b: b} }

func (p *Parser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// Byte consumes c after optional whitespace.
func (p *Parser) Byte(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// Peek reports whether c comes next (after whitespace), without consuming
// it.
func (p *Parser) Peek(c byte) bool {
	p.ws()
	return p.i < len(p.b) && p.b[p.i] == c
}

// Lit consumes the literal s (true, false, null) after optional whitespace.
func (p *Parser) Lit(s string) bool {
	p.ws()
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// Str reads a string without escapes, of valid UTF-8.
func (p *Parser) Str() (string, bool) {
	if !p.Byte('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}

// Number reads a JSON number's text.
func (p *Parser) Number() (string, bool) {
	p.ws()
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return "", false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return "", false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return "", false
		}
	}
	return string(p.b[start:p.i]), true
}

// Object reads the members of an object, each key seen once, calling
// member for each with the parser at the member's value; the opening
// brace is already consumed.
func (p *Parser) Object(member func(key string) bool) bool {
	if p.Byte('}') {
		return true
	}
	var few [8]string
	seen := few[:0] // few members: a list beats a map
	for {
		k, ok := p.Str()
		if !ok || slices.Contains(seen, k) || !p.Byte(':') || !member(k) {
			return false
		}
		seen = append(seen, k)
		if p.Byte('}') {
			return true
		}
		if !p.Byte(',') {
			return false
		}
	}
}

// End reports whether only whitespace is left.
func (p *Parser) End() bool {
	p.ws()
	return p.i == len(p.b)
}
