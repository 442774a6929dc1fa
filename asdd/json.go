package asdd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Extra holds the members of a JSON object that the Go type does not know.
// They are kept on decode and written back, after the known members and in
// key order, on encode, so that a manifest written by other tools keeps
// every field it had.
type Extra map[string]json.RawMessage

var knownCache sync.Map // reflect.Type -> map[string]bool

// knownKeys returns the JSON member names of struct type t's fields.
func knownKeys(t reflect.Type) map[string]bool {
	if v, ok := knownCache.Load(t); ok {
		return v.(map[string]bool)
	}
	keys := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		keys[name] = true
	}
	knownCache.Store(t, keys)
	return keys
}

// decodeWithExtra decodes data into plain (a pointer to a method-less alias
// of the struct) and returns the members it did not know.
func decodeWithExtra(data []byte, plain any) (Extra, error) {
	if err := json.Unmarshal(data, plain); err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	known := knownKeys(reflect.TypeOf(plain).Elem())
	var extra Extra
	for k, v := range all {
		if known[k] {
			continue
		}
		if extra == nil {
			extra = Extra{}
		}
		extra[k] = v
	}
	return extra, nil
}

// encodeWithExtra encodes plain and appends the extra members.
func encodeWithExtra(plain any, extra Extra) ([]byte, error) {
	b, err := json.Marshal(plain)
	if err != nil {
		return nil, err
	}
	if len(extra) == 0 {
		return b, nil
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // without the closing brace
	first := len(b) == 2    // "{}"
	for _, k := range keys {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		v := extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("unknown member %q holds invalid JSON", k)
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func cloneExtra(e Extra) Extra {
	if e == nil {
		return nil
	}
	c := make(Extra, len(e))
	for k, v := range e {
		c[k] = append(json.RawMessage(nil), v...)
	}
	return c
}
