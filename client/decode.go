package client

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/custodian-dev/custodian/asdd"
)

// UnmarshalJSON decodes an operation's response into r (replacing what r
// held). The daemon's usual answers (revision, summary and events whose
// data are flat) are read by a small strict parser without reflection; any
// other input — more members, escapes in strings, nested event data, bad
// JSON — goes through encoding/json, so the result and the errors are
// always encoding/json's (fuzzed against it).
func (r *OpResponse) UnmarshalJSON(b []byte) error {
	if p := (opParser{b: b}); p.response(r) {
		return nil
	}
	type plain OpResponse
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = OpResponse(v)
	return nil
}

// opParser reads the common shape of an OpResponse; every method returns
// false as soon as the input leaves it.
type opParser struct {
	b []byte
	i int
}

func (p *opParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c after optional whitespace.
func (p *opParser) byte(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// peek reports whether c comes next (after whitespace), without consuming.
func (p *opParser) peek(c byte) bool {
	p.ws()
	return p.i < len(p.b) && p.b[p.i] == c
}

func (p *opParser) lit(s string) bool {
	p.ws()
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

// str reads a string without escapes, of valid UTF-8.
func (p *opParser) str() (string, bool) {
	if !p.byte('"') {
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

// number reads a JSON number's text.
func (p *opParser) number() (string, bool) {
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

// object reads the members of an object, each key seen once, calling
// member for each; the opening brace is already consumed.
func (p *opParser) object(member func(key string) bool) bool {
	if p.byte('}') {
		return true
	}
	var few [8]string
	seen := few[:0] // few members: a list beats a map
	for {
		k, ok := p.str()
		if !ok || slices.Contains(seen, k) || !p.byte(':') || !member(k) {
			return false
		}
		seen = append(seen, k)
		if p.byte('}') {
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

func (p *opParser) response(r *OpResponse) bool {
	var v OpResponse
	if !p.byte('{') || !p.object(func(k string) bool {
		switch k {
		case "revision":
			s, ok := p.number()
			if !ok {
				return false
			}
			n, err := strconv.ParseUint(s, 10, 64)
			v.Revision = n
			return err == nil
		case "summary":
			s, ok := p.str()
			v.Summary = s
			return ok
		case "events":
			return p.events(&v.Events)
		}
		return false
	}) {
		return false
	}
	p.ws()
	if p.i != len(p.b) {
		return false
	}
	*r = v
	return true
}

func (p *opParser) events(out *[]asdd.Event) bool {
	if p.lit("null") {
		*out = nil
		return true
	}
	if !p.byte('[') {
		return false
	}
	evs := []asdd.Event{}
	if p.byte(']') {
		*out = evs
		return true
	}
	for {
		var e asdd.Event
		if !p.byte('{') || !p.object(func(k string) bool {
			var ok bool
			switch k {
			case "type":
				e.Type, ok = p.str()
			case "slice":
				e.Slice, ok = p.str()
			case "agent":
				e.Agent, ok = p.str()
			case "data":
				ok = p.data(&e.Data)
			}
			return ok
		}) {
			return false
		}
		evs = append(evs, e)
		if p.byte(']') {
			*out = evs
			return true
		}
		if !p.byte(',') {
			return false
		}
	}
}

// data reads an event's data: null, or an object of strings, numbers,
// booleans and nulls.
func (p *opParser) data(out *map[string]any) bool {
	if p.lit("null") {
		*out = nil
		return true
	}
	if !p.byte('{') {
		return false
	}
	m := map[string]any{}
	if !p.object(func(k string) bool {
		switch {
		case p.peek('"'):
			s, ok := p.str()
			m[k] = s
			return ok
		case p.lit("true"):
			m[k] = true
		case p.lit("false"):
			m[k] = false
		case p.lit("null"):
			m[k] = nil
		default:
			s, ok := p.number()
			if !ok {
				return false
			}
			f, err := strconv.ParseFloat(s, 64)
			m[k] = f
			return err == nil
		}
		return true
	}) {
		return false
	}
	*out = m
	return true
}
