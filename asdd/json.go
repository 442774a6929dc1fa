package asdd

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/custodian-dev/custodian/internal/legacyjson"
)

// Extra holds the members of a JSON object that its Go type does not know,
// as the JSON object they make ({"name":value,…}; nil when there are
// none), in the order they were read. go-json-experiment/json keeps them
// (each manifest type's inline jsontext.Value field) and writes them back
// after the known members, as they were read (white space aside), so that
// a manifest written by other tools keeps every member it had.
type Extra = jsontext.Value

// The manifest's JSON is encoding/json's, as the previous releases wrote
// and read it, through go-json-experiment/json:
//
//   - decodeOptions: member names match exactly (a member spelled
//     differently is kept as unknown rather than folded into a field); a
//     name given twice takes its last value; invalid UTF-8 reads as U+FFFD.
//   - encodeOptions: encoding/json's Marshal — HTML characters and U+2028,
//     U+2029 escaped, map keys sorted, nil lists and maps as null,
//     omitempty leaving out false and 0, strings (and map keys) escaped as
//     encoding/json escapes them (legacyjson); unknown members as read.
var (
	decodeOptions = jsonv2.JoinOptions(
		jsontext.AllowDuplicateNames(true),
		jsontext.AllowInvalidUTF8(true),
	)
	// libraryOptions is encodeOptions less the string and map-key
	// marshalers of invalid UTF-8, a function call per string that cost
	// ≈ 30% of a manifest's encoding: marshal tries it first.
	libraryOptions = jsonv2.JoinOptions(
		jsontext.AllowDuplicateNames(true), // inside unknown members, as read
		jsontext.AllowInvalidUTF8(true),
		jsontext.EscapeForHTML(true),
		jsontext.EscapeForJS(true),
		jsontext.PreserveRawStrings(true),
		jsonv2.Deterministic(true),
		jsonv2.FormatNilSliceAsNull(true),
		jsonv2.FormatNilMapAsNull(true),
		jsonv1.OmitEmptyWithLegacySemantics(true),
	)
	encodeOptions = jsonv2.JoinOptions(libraryOptions,
		jsonv2.WithMarshalers(jsonv2.JoinMarshalers(legacyjson.Strings[string](),
			legacyKeys[string](), legacyKeys[int](), legacyKeys[float64](), legacyKeys[*Heartbeat](), legacyKeys[any]())),
	)
)

// replacement is U+FFFD in UTF-8: what libraryOptions write for invalid
// UTF-8, which encoding/json writes as the escape \ufffd.
var replacement = []byte("\uFFFD")

// marshal encodes v with encodeOptions (and more): with libraryOptions
// when that writes no U+FFFD — then no string or key held invalid UTF-8,
// the one case where the two differ (U+2028 and U+2029 both escape) —
// else again with encodeOptions.
func marshal(v any, more ...jsonv2.Options) ([]byte, error) {
	b, err := jsonv2.Marshal(v, append([]jsonv2.Options{libraryOptions}, more...)...)
	if err != nil || !bytes.Contains(b, replacement) {
		return b, err
	}
	return jsonv2.Marshal(v, append([]jsonv2.Options{encodeOptions}, more...)...)
}

// Marshal encodes v — a manifest or any part of one — as the manifest
// file holds it (compact): byte for byte what encoding/json's Marshal
// writes.
func Marshal(v any) ([]byte, error) { return marshal(v) }

// MarshalUnknown returns the members of x as they follow a manifest's
// known members: `,"name":value` each, in order ("" for none).
func MarshalUnknown(x Extra) ([]byte, error) {
	if len(x) == 0 {
		return nil, nil
	}
	b, err := marshal(&struct {
		X Extra `json:",inline"`
	}{x})
	if err != nil || len(b) <= 2 {
		return nil, err
	}
	b[0] = ','
	return b[:len(b)-1], nil
}

// marshalTo writes plain (a method-less copy of a manifest type) to enc:
// with enc's options when they are the manifest's (its own Marshal,
// Encode), else as Marshal writes it (another caller's encoder, as
// encoding/json's would call MarshalJSON).
func marshalTo(enc *jsontext.Encoder, plain any) error {
	opts := enc.Options()
	if html, _ := jsonv2.GetOption(opts, jsontext.EscapeForHTML); html {
		if legacy, _ := jsonv2.GetOption(opts, jsonv1.OmitEmptyWithLegacySemantics); legacy {
			return jsonv2.MarshalEncode(enc, plain)
		}
	}
	b, err := marshal(plain)
	if err != nil {
		return err
	}
	return enc.WriteValue(b)
}

// unmarshal decodes data into plain as Decode reads a manifest.
func unmarshal(data []byte, plain any) error { return jsonv2.Unmarshal(data, plain, decodeOptions) }

// legacyKeys writes a map whose keys are not all valid UTF-8 as
// encoding/json does (an invalid byte as the escape \ufffd); any other map
// is the library's to write.
func legacyKeys[V any]() *jsonv2.Marshalers {
	return jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, m map[string]V) error {
		valid := true
		for k := range m {
			if !utf8.ValidString(k) {
				valid = false
				break
			}
		}
		if valid {
			return errors.ErrUnsupported
		}
		if err := enc.WriteToken(jsontext.BeginObject); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := enc.WriteValue(legacyjson.AppendQuote(nil, k)); err != nil {
				return err
			}
			if err := jsonv2.MarshalEncode(enc, m[k]); err != nil {
				return err
			}
		}
		return enc.WriteToken(jsontext.EndObject)
	})
}
