package jsonval

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// The decoders below read JSON with jsontext (go-json-experiment), several
// times faster than encoding/json's decoding into interfaces, and are
// strict: a member named twice, invalid UTF-8, or anything else they do
// not take exactly as encoding/json would is refused, and the caller
// decodes the input with encoding/json instead. So a result is always the
// one encoding/json gives (numbers as json.Number, strings unescaped, empty
// containers not nil), only faster for the common input.

var errNotFast = errors.New("not decoded on the fast path")

// decodeFast decodes one JSON value and nothing after it, as Decode does;
// ok is false when the fast path refuses raw.
func decodeFast(raw []byte) (v any, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	v, err := readTree(dec)
	if err != nil {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	return v, true
}

func readTree(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 'f':
		return false, nil
	case 't':
		return true, nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '{':
		m := map[string]any{}
		for {
			switch dec.PeekKind() {
			case '}':
				_, err := dec.ReadToken()
				return m, err
			case '"':
			default:
				return nil, errNotFast
			}
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			k := name.String()
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
	case '[':
		a := []any{}
		for {
			switch dec.PeekKind() {
			case ']':
				_, err := dec.ReadToken()
				return a, err
			case 0:
				return nil, errNotFast
			}
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
	}
	return nil, errNotFast
}

// opsFast decodes a patch as json.Unmarshal into []Op does, for a patch
// whose operations' members are spelled exactly op, from, path and value
// (encoding/json would also take other spellings) and hold strings (a
// value any JSON); ok is false otherwise.
func opsFast(patch []byte) (ops []Op, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(patch))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil, false
	}
	for {
		switch dec.PeekKind() {
		case ']':
			if _, err := dec.ReadToken(); err != nil {
				return nil, false
			}
			if _, err := dec.ReadToken(); err != io.EOF {
				return nil, false
			}
			if ops == nil {
				ops = []Op{}
			}
			return ops, true
		case '{':
		default:
			return nil, false
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		var op Op
		for dec.PeekKind() == '"' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			switch name.String() {
			case "value":
				v, err := dec.ReadValue()
				if err != nil {
					return nil, false
				}
				op.Value = bytes.Clone(v)
				continue
			case "op", "path", "from":
			default:
				return nil, false
			}
			k := name.String()
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() != '"' {
				return nil, false
			}
			switch k {
			case "op":
				op.Op = tok.String()
			case "path":
				op.Path = tok.String()
			case "from":
				op.From = tok.String()
			}
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
			return nil, false
		}
		ops = append(ops, op)
	}
}

// decodeOps is json.Unmarshal(patch, &ops), on the fast path when it can.
func decodeOps(patch []byte) ([]Op, error) {
	if ops, ok := opsFast(patch); ok {
		return ops, nil
	}
	var ops []Op
	err := json.Unmarshal(patch, &ops)
	return ops, err
}
