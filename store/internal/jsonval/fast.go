package jsonval

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

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

// decoders are reused: a jsontext.Decoder is a few kilobytes.
var decoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

func getDecoder(b []byte) *jsontext.Decoder {
	dec := decoders.Get().(*jsontext.Decoder)
	dec.Reset(bytes.NewReader(b))
	return dec
}

func putDecoder(dec *jsontext.Decoder) {
	dec.Reset(bytes.NewReader(nil))
	decoders.Put(dec)
}

// decodeFast decodes one JSON value and nothing after it, as Decode does;
// ok is false when the fast path refuses raw.
func decodeFast(raw []byte) (v any, ok bool) {
	dec := getDecoder(raw)
	defer putDecoder(dec)
	v, _, err := readTree(dec)
	if err != nil {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	return v, true
}

// readTree reads one value as a tree, and its depth (nesting of
// containers, as Depth counts it).
func readTree(dec *jsontext.Decoder) (any, int, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, 0, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, 0, nil
	case 'f':
		return false, 0, nil
	case 't':
		return true, 0, nil
	case '"':
		return tok.String(), 0, nil
	case '0':
		return json.Number(tok.String()), 0, nil
	case '{':
		m := map[string]any{}
		depth := 1
		for {
			switch dec.PeekKind() {
			case '}':
				_, err := dec.ReadToken()
				return m, depth, err
			case '"':
			default:
				return nil, 0, errNotFast
			}
			name, err := dec.ReadToken()
			if err != nil {
				return nil, 0, err
			}
			k := name.String()
			v, d, err := readTree(dec)
			if err != nil {
				return nil, 0, err
			}
			m[k], depth = v, max(depth, d+1)
		}
	case '[':
		a := []any{}
		depth := 1
		for {
			switch dec.PeekKind() {
			case ']':
				_, err := dec.ReadToken()
				return a, depth, err
			case 0:
				return nil, 0, errNotFast
			}
			v, d, err := readTree(dec)
			if err != nil {
				return nil, 0, err
			}
			a, depth = append(a, v), max(depth, d+1)
		}
	}
	return nil, 0, errNotFast
}

// treeOp is a patch operation as PatchTree applies it: its value decoded
// (decoded, from the fast path) or raw.
type treeOp struct {
	Op, Path string
	hasVal   bool
	raw      json.RawMessage
	decoded  bool
	val      any
	depth    int
}

// treeOpsFast decodes a patch as json.Unmarshal into []Op does, with each
// value decoded as Decode decodes it, for a patch whose operations'
// members are spelled exactly op, from, path and value (encoding/json
// would also take other spellings) and hold strings (a value: any JSON);
// ok is false otherwise.
func treeOpsFast(patch []byte) (ops []treeOp, ok bool) {
	return scanOps(patch, func(dec *jsontext.Decoder, op *treeOp) (err error) {
		op.val, op.depth, err = readTree(dec)
		op.hasVal, op.decoded = true, true
		return err
	}, func(op *treeOp, member, s string) {
		switch member {
		case "op":
			op.Op = s
		case "path":
			op.Path = s
		}
	})
}

// opsFast decodes a patch as json.Unmarshal into []Op does, for a patch
// whose operations' members are spelled exactly op, from, path and value
// (encoding/json would also take other spellings) and hold strings (a
// value any JSON); ok is false otherwise.
func opsFast(patch []byte) (ops []Op, ok bool) {
	ops, ok = scanOps(patch, func(dec *jsontext.Decoder, op *Op) error {
		v, err := dec.ReadValue()
		op.Value = bytes.Clone(v)
		return err
	}, func(op *Op, member, s string) {
		switch member {
		case "op":
			op.Op = s
		case "path":
			op.Path = s
		case "from":
			op.From = s
		}
	})
	if ok && ops == nil {
		ops = []Op{}
	}
	return ops, ok
}

// scanOps reads a patch, an array of operations whose members are spelled
// exactly op, from, path (strings, handed to str) and value (read by
// value); ok is false for anything else.
func scanOps[T any](patch []byte, value func(*jsontext.Decoder, *T) error, str func(op *T, member, s string)) (ops []T, ok bool) {
	dec := getDecoder(patch)
	defer putDecoder(dec)
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
			return ops, true
		case '{':
		default:
			return nil, false
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		var op T
		for dec.PeekKind() == '"' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			k := name.String()
			switch k {
			case "value":
				if value(dec, &op) != nil {
					return nil, false
				}
				continue
			case "op", "path", "from":
			default:
				return nil, false
			}
			tok, err := dec.ReadToken()
			if err != nil || tok.Kind() != '"' {
				return nil, false
			}
			str(&op, k, tok.String())
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
