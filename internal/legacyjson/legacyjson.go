// Package legacyjson holds what go-json-experiment/json needs to write the
// bytes encoding/json (and the hand-written codecs that copied it) wrote,
// where a stored document's format depends on them.
package legacyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// AppendQuote appends s as a JSON string the way encoding/json writes it
// with HTML escaping off: U+2028 and U+2029 as \u2028 and \u2029, each
// byte of invalid UTF-8 as \ufffd (jsontext writes both raw).
func AppendQuote(dst []byte, s string) []byte {
	if !needsLegacy(s) {
		b, _ := jsontext.AppendQuote(dst, s) // valid UTF-8: no error
		return b
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s) // a string always encodes
	return append(dst, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

func needsLegacy(s string) bool {
	return strings.ContainsAny(s, "\u2028\u2029") || !utf8.ValidString(s)
}

// Strings writes a Go string of type T as AppendQuote does. jsontext's
// EscapeForJS would also escape the line separators inside raw values
// (unknown members kept as written), and it writes invalid UTF-8 as a raw
// U+FFFD; so the codecs leave EscapeForJS off and take this instead.
// Strings that need neither escape, nearly all, are left to the library.
func Strings[T ~string]() *jsonv2.Marshalers {
	return jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, s T) error {
		if !needsLegacy(string(s)) {
			return errors.ErrUnsupported
		}
		return enc.WriteValue(AppendQuote(nil, string(s)))
	})
}
