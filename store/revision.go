package store

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// StampRevision returns v with its revision member, a top-level
// "revision" whose value is a number, set to rev, and whether it had to
// change it. A value with no such member (not an object, no "revision",
// one that is not a number, or not valid JSON: the commit refuses it
// later) is returned as it is.
//
// A document's revision member always equals the journal revision of the
// commit that wrote it (docs/store.md): a backend stamps every value it
// commits whole (a rollback restores an old value, a direct edit or a
// raw write keeps the revision its author saw), so that no operation can
// leave it behind. A change given as a patch carries the member's new
// value itself (the application layer's operations).
func StampRevision(v []byte, rev uint64) ([]byte, bool) {
	if !bytes.Contains(v, []byte(`"revision"`)) {
		return v, false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return v, false
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return v, false
		}
		if name.String() != "revision" {
			if err := dec.SkipValue(); err != nil {
				return v, false
			}
			continue
		}
		val, err := dec.ReadValue()
		if err != nil || val.Kind() != '0' {
			return v, false
		}
		want := strconv.AppendUint(nil, rev, 10)
		if bytes.Equal(val, want) {
			return v, false
		}
		end := int(dec.InputOffset())
		start := end - len(val)
		return slices.Concat(v[:start], want, v[end:]), true
	}
	return v, false
}
