package client

import (
	"encoding/json"
	"strconv"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/jsonscan"
)

// UnmarshalJSON decodes an operation's response into r (replacing what r
// held). The daemon's usual answers (revision, summary and events whose
// data are flat) are read by a small strict parser without reflection; any
// other input — more members, escapes in strings, nested event data, bad
// JSON — goes through encoding/json, so the result and the errors are
// always encoding/json's (fuzzed against it).
func (r *OpResponse) UnmarshalJSON(b []byte) error {
	if p := (opParser{*jsonscan.New(b)}); p.response(r) {
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
type opParser struct{ jsonscan.Parser }

func (p *opParser) response(r *OpResponse) bool {
	var v OpResponse
	if !p.Byte('{') || !p.Object(func(k string) bool {
		switch k {
		case "revision":
			s, ok := p.Number()
			if !ok {
				return false
			}
			n, err := strconv.ParseUint(s, 10, 64)
			v.Revision = n
			return err == nil
		case "committed":
			switch {
			case p.Lit("true"):
				v.Committed = true
			case p.Lit("false"):
				v.Committed = false
			default:
				return false
			}
			return true
		case "outcome":
			s, ok := p.Str()
			v.Outcome = s
			return ok
		case "summary":
			s, ok := p.Str()
			v.Summary = s
			return ok
		case "events":
			return p.events(&v.Events)
		}
		return false
	}) {
		return false
	}
	if !p.End() {
		return false
	}
	*r = v
	return true
}

func (p *opParser) events(out *[]asdd.Event) bool {
	if p.Lit("null") {
		*out = nil
		return true
	}
	if !p.Byte('[') {
		return false
	}
	evs := []asdd.Event{}
	if p.Byte(']') {
		*out = evs
		return true
	}
	for {
		var e asdd.Event
		if !p.Byte('{') || !p.Object(func(k string) bool {
			var ok bool
			switch k {
			case "type":
				e.Type, ok = p.Str()
			case "slice":
				e.Slice, ok = p.Str()
			case "agent":
				e.Agent, ok = p.Str()
			case "data":
				ok = p.data(&e.Data)
			}
			return ok
		}) {
			return false
		}
		evs = append(evs, e)
		if p.Byte(']') {
			*out = evs
			return true
		}
		if !p.Byte(',') {
			return false
		}
	}
}

// data reads an event's data: null, or an object of strings, numbers,
// booleans and nulls.
func (p *opParser) data(out *map[string]any) bool {
	if p.Lit("null") {
		*out = nil
		return true
	}
	if !p.Byte('{') {
		return false
	}
	m := map[string]any{}
	if !p.Object(func(k string) bool {
		switch {
		case p.Peek('"'):
			s, ok := p.Str()
			m[k] = s
			return ok
		case p.Lit("true"):
			m[k] = true
		case p.Lit("false"):
			m[k] = false
		case p.Lit("null"):
			m[k] = nil
		default:
			s, ok := p.Number()
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
