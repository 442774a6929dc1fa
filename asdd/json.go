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

var knownCache sync.Map // reflect.Type -> map[string]int

// knownFields maps the JSON member names of struct type t's fields to the
// fields' indexes.
func knownFields(t reflect.Type) map[string]int {
	if v, ok := knownCache.Load(t); ok {
		return v.(map[string]int)
	}
	keys := map[string]int{}
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
		keys[name] = i
	}
	knownCache.Store(t, keys)
	return keys
}

// decodeWithExtra decodes the JSON object data into plain (a pointer to a
// method-less alias of the struct) and returns the members it does not
// know. Each member is parsed once here (nested objects once more by their
// own decoder), and names match exactly: a member spelled differently is
// kept as unknown rather than folded into a field.
func decodeWithExtra(data []byte, plain any) (Extra, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	v := reflect.ValueOf(plain).Elem()
	known := knownFields(v.Type())
	var extra Extra
	for k, raw := range all {
		i, ok := known[k]
		if !ok {
			if extra == nil {
				extra = Extra{}
			}
			extra[k] = raw
			continue
		}
		if err := json.Unmarshal(raw, v.Field(i).Addr().Interface()); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
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
