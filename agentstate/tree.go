package agentstate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// MarshalJSON writes the object compactly, keys in order, HTML characters
// unescaped.
func (o Object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := writeValue(&buf, o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeValue(buf *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case Object:
		buf.WriteByte('{')
		for i, f := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeScalar(buf, f.Key); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := writeValue(buf, f.Value); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeValue(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	return writeScalar(buf, v)
}

func writeScalar(buf *bytes.Buffer, v any) error {
	switch v.(type) {
	case nil, string, json.Number, bool:
	default:
		return fmt.Errorf("agentstate: cannot encode a %T", v)
	}
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // the encoder's newline
	return nil
}

// Encode returns the compact JSON of v.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeValue(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeJSON parses one JSON value into the ordered tree. A key given twice
// keeps its first position and its last value (as JavaScript's JSON.parse).
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec, 0)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// MaxDepth bounds how deeply objects and arrays may nest.
const MaxDepth = 64

func readValue(dec *json.Decoder, depth int) (any, error) {
	if depth > MaxDepth {
		return nil, fmt.Errorf("JSON nested more than %d levels deep", MaxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var o Object
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, ok := kt.(string)
				if !ok {
					return nil, errors.New("object key is not a string")
				}
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.Set(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			if o == nil {
				o = Object{}
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := readValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
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
