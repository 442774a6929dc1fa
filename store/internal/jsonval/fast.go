package jsonval

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// decodeFast decodes one JSON value and nothing after it, as Decode does,
// reading it with jsontext, several times faster than encoding/json's
// decoding into interfaces (BenchmarkParseValue). It is strict: a member
// named twice, invalid UTF-8, or anything else it does not take exactly as
// encoding/json would makes ok false, and Decode uses encoding/json
// instead. So a tree is always the one encoding/json gives (numbers as
// json.Number, strings unescaped, empty containers not nil).
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

var errNotFast = errors.New("not decoded on the fast path")

// readTree reads one value as a tree.
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
		for dec.PeekKind() == '"' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			k := name.String()
			if m[k], err = readTree(dec); err != nil {
				return nil, err
			}
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
			return nil, errNotFast
		}
		return m, nil
	case '[':
		a := []any{}
		for dec.PeekKind() != ']' {
			if dec.PeekKind() == 0 {
				return nil, errNotFast
			}
			v, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.ReadToken()
		return a, err
	}
	return nil, errNotFast
}
