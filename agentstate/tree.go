package agentstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/custodian-dev/custodian/internal/legacyjson"
)

// Object is a JSON object with its keys in document order. Values are
// Object, []any, string, json.Number, bool or nil.
type Object []Field

// Field is one key of an Object.
type Field struct {
	Key   string
	Value any
}

// Get returns the value at key.
func (o Object) Get(key string) (any, bool) {
	for _, f := range o {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Set replaces the value at key in place, or appends the key.
func (o *Object) Set(key string, v any) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, Field{key, v})
}

// Clone returns a deep copy.
func (o Object) Clone() Object { return cloneValue(o).(Object) }

func cloneValue(v any) any {
	switch t := v.(type) {
	case Object:
		c := make(Object, len(t))
		for i, f := range t {
			c[i] = Field{f.Key, cloneValue(f.Value)}
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, e := range t {
			c[i] = cloneValue(e)
		}
		return c
	}
	return v
}

// The tree is read and written with go-json-experiment/json's jsontext,
// as encoding/json would: numbers as written (json.Number), a key given
// twice keeps its first position and its last value (as JavaScript's
// JSON.parse), invalid UTF-8 read as U+FFFD; strings written as
// encoding/json escapes them without HTML escaping (legacyjson).

// MarshalJSON writes the object compactly, keys in order, HTML characters
// unescaped.
func (o Object) MarshalJSON() ([]byte, error) { return Encode(o) }

// Encode returns the compact JSON of v.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf, encodeOptions)
	if err := writeValue(enc, v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var encodeOptions = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(true), // an Object made by hand: written as it is
	jsontext.PreserveRawStrings(true),  // legacyjson's escapes
)

func writeValue(enc *jsontext.Encoder, v any) error {
	switch t := v.(type) {
	case Object:
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for _, f := range t {
			if err := writeScalar(enc, f.Key); err != nil {
				return err
			}
			if err := writeValue(enc, f.Value); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	case []any:
		if err := enc.WriteToken(jsontext.BeginArray); err != nil {
			return err
		}
		for _, e := range t {
			if err := writeValue(enc, e); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndArray)
	}
	return writeScalar(enc, v)
}

func writeScalar(enc *jsontext.Encoder, v any) error {
	switch t := v.(type) {
	case nil:
		return enc.WriteToken(jsontext.Null)
	case bool:
		return enc.WriteToken(jsontext.Bool(t))
	case string:
		return enc.WriteValue(legacyjson.AppendQuote(nil, t))
	case json.Number:
		if k := jsontext.Value(t).Kind(); k != '0' || !jsontext.Value(t).IsValid() {
			return fmt.Errorf("agentstate: invalid number literal %q", string(t))
		}
		return enc.WriteValue(jsontext.Value(t))
	}
	return fmt.Errorf("agentstate: cannot encode a %T", v)
}

// decodeJSON parses one JSON value into the ordered tree.
func decodeJSON(data []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	v, err := readValue(dec, 0)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, io.ErrUnexpectedEOF // as the previous releases said it
		}
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// MaxDepth bounds how deeply objects and arrays may nest.
const MaxDepth = 64

func readValue(dec *jsontext.Decoder, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("JSON nested more than %d levels deep", MaxDepth)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		o := Object{}
		for dec.PeekKind() != '}' {
			kt, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := kt.String() // before the next read voids the token
			v, err := readValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			o.Set(key, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return o, nil
	case '[':
		a := []any{}
		for dec.PeekKind() != ']' {
			v, err := readValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return a, nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

// DecodeObject parses data as a JSON object.
func DecodeObject(data []byte) (Object, error) {
	v, err := decodeJSON(data)
	if err != nil {
		return nil, err
	}
	o, ok := v.(Object)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, found %s", typeName(v))
	}
	return o, nil
}

func typeName(v any) string {
	switch v.(type) {
	case Object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// Merge deep-merges patch into base and returns the result (base is not
// modified): objects merge key by key, recursively; any other value in
// patch (arrays and null included) replaces what base had.
func Merge(base, patch any) any {
	po, ok := patch.(Object)
	if !ok {
		return cloneValue(patch)
	}
	bo, ok := base.(Object)
	if !ok {
		return cloneValue(po)
	}
	out := bo.Clone()
	for _, f := range po {
		cur, _ := out.Get(f.Key)
		out.Set(f.Key, Merge(cur, f.Value))
	}
	return out
}

// UnmarshalJSON decodes a JSON object keeping its members' order (what
// DecodeObject does), so that an Object travels through the daemon's API
// unchanged.
func (o *Object) UnmarshalJSON(data []byte) error {
	v, err := DecodeObject(data)
	if err != nil {
		return err
	}
	*o = v
	return nil
}
