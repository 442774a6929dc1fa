package wire

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Releases before the operations had JSON names sent an operation's fields
// by their Go names ("BaseRevision"). Names of one word still match (names
// match in any case); a body naming a field of several words the old way
// is decoded again with those names rewritten, so that a client of the
// previous release (a runner left running across an upgrade) keeps
// working. A body in today's names never pays for it.

// decodeOp decodes an operation's body into p (a pointer to the operation's
// struct), accepting the previous release's Go field names.
func decodeOp(body []byte, p any) error {
	err := DecodeStrict(body, p)
	if err == nil {
		return nil
	}
	if renamed, ok := renameLegacy(body, reflect.TypeOf(p).Elem()); ok {
		if err2 := DecodeStrict(renamed, p); err2 == nil {
			return nil
		}
	}
	return err
}

// legacyNames maps, per operation type, the lower-cased Go name of each
// field whose JSON name differs from it in more than case to its JSON name.
var legacyNames sync.Map // reflect.Type → map[string]string

func legacyNamesOf(t reflect.Type) map[string]string {
	if m, ok := legacyNames.Load(t); ok {
		return m.(map[string]string)
	}
	m := map[string]string{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" && !strings.EqualFold(name, f.Name) {
			m[strings.ToLower(f.Name)] = name
		}
	}
	legacyNames.Store(t, m)
	return m
}

// renameLegacy rewrites the top-level member names of body that are Go
// names of t's fields (in any case) to their JSON names. It reports false
// when it renamed nothing or body is not one JSON object.
func renameLegacy(body []byte, t reflect.Type) ([]byte, bool) {
	names := legacyNamesOf(t)
	if len(names) == 0 {
		return nil, false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' || enc.WriteToken(tok) != nil {
		return nil, false
	}
	renamed := false
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String()
		if json, ok := names[strings.ToLower(name)]; ok {
			name, renamed = json, true
		}
		v, err := dec.ReadValue()
		if err != nil || enc.WriteToken(jsontext.String(name)) != nil || enc.WriteValue(v) != nil {
			return nil, false
		}
	}
	if tok, err := dec.ReadToken(); err != nil || enc.WriteToken(tok) != nil {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false // trailing data
	}
	return out.Bytes(), renamed
}
