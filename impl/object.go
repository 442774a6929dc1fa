package impl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Member is one name/value pair of a JSON object, kept in document order.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members are the fields of an object this package does not know; they are
// written back, unchanged (compacted) and in order, after the known fields.
type Members []Member

// The decoder below is a small single-purpose one: Decode checks the whole
// document once with json.Valid, then these functions split objects and
// arrays of that valid input into their members without re-validating, and
// convert the leaves the manifest uses (strings, whole numbers, null). It is
// several times faster than driving encoding/json's Decoder token by token,
// which matters for update-status on large manifests.

// validate reports a syntax error in data, with encoding/json's wording.
func validate(data []byte) error {
	if json.Valid(data) {
		return nil
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	return errors.New("invalid JSON")
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// valueEnd returns the index just past the JSON value starting at b[i]
// (b is valid JSON, i at the value's first byte).
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return i
		}
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// kind names the JSON type of a raw value for error messages.
func kind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// splitObject splits a valid JSON object into its members in document
// order. A key given twice keeps its first position and its last value, as
// jq does.
func splitObject(b []byte) (Members, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, fmt.Errorf("want a JSON object, found %s", article(kind(b)))
	}
	var out Members
	var seen map[string]int
	i := skipSpace(b, 1)
	for i < len(b) && b[i] != '}' {
		end := stringEnd(b, i)
		key, err := unquote(b[i:end])
		if err != nil {
			return nil, err
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // the colon
		vend := valueEnd(b, i)
		val := json.RawMessage(b[i:vend])
		i = skipSpace(b, vend)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
		if j := indexOf(out, key, seen); j >= 0 {
			out[j].Value = val
			continue
		}
		if len(out) >= 16 {
			if seen == nil {
				seen = map[string]int{}
				for j, m := range out {
					seen[m.Key] = j
				}
			}
			seen[key] = len(out)
		}
		out = append(out, Member{Key: key, Value: val})
	}
	return out, nil
}

// indexOf finds key among members: a linear scan for the small objects of
// a manifest, the index map once an object grows large.
func indexOf(out Members, key string, seen map[string]int) int {
	if seen != nil {
		if j, ok := seen[key]; ok {
			return j
		}
		return -1
	}
	for j := range out {
		if out[j].Key == key {
			return j
		}
	}
	return -1
}

// splitArray splits a valid JSON array into its elements; null is an
// empty array.
func splitArray(b []byte) ([]json.RawMessage, error) {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil, nil
	}
	if len(b) == 0 || b[0] != '[' {
		return nil, fmt.Errorf("want an array, found %s", kind(b))
	}
	var out []json.RawMessage
	i := skipSpace(b, 1)
	for i < len(b) && b[i] != ']' {
		end := valueEnd(b, i)
		out = append(out, json.RawMessage(b[i:end]))
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return out, nil
}

func article(k string) string {
	switch k {
	case "array", "object":
		return "an " + k
	case "null", "nothing":
		return k
	}
	return "a " + k
}

// unquote decodes a JSON string literal.
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// The leaf decoders: where names the object, key the field, for errors.

func fieldError(where, key, want string, raw []byte) error {
	return fmt.Errorf("%s: field %q: want %s, found %s", where, key, want, kind(raw))
}

func decodeString(where, key string, raw []byte, dst *string) error {
	if kind(raw) != "string" {
		return fieldError(where, key, "a string", raw)
	}
	s, err := unquote(raw)
	if err != nil {
		return fmt.Errorf("%s: field %q: %w", where, key, err)
	}
	*dst = s
	return nil
}

func decodeNullableString(where, key string, raw []byte, dst **string) error {
	if kind(raw) == "null" {
		*dst = nil
		return nil
	}
	var s string
	if err := decodeString(where, key, raw, &s); err != nil {
		return fieldError(where, key, "a string or null", raw)
	}
	*dst = &s
	return nil
}

func decodeInt(where, key string, raw []byte, dst *int) error {
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		if kind(raw) == "number" {
			return fmt.Errorf("%s: field %q: want a whole number, found %s", where, key, raw)
		}
		return fieldError(where, key, "a whole number", raw)
	}
	*dst = n
	return nil
}

func decodeStrings(where, key string, raw []byte, dst *[]string) error {
	elems, err := splitArray(raw)
	if err != nil {
		return fieldError(where, key, "an array of strings", raw)
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if err := decodeString(where, fmt.Sprintf("%s[%d]", key, i), e, &out[i]); err != nil {
			return err
		}
	}
	*dst = out
	return nil
}

func decodeInts(where, key string, raw []byte, dst *[]int) error {
	elems, err := splitArray(raw)
	if err != nil {
		return fieldError(where, key, "an array of whole numbers", raw)
	}
	out := make([]int, len(elems))
	for i, e := range elems {
		if err := decodeInt(where, fmt.Sprintf("%s[%d]", key, i), e, &out[i]); err != nil {
			return err
		}
	}
	*dst = out
	return nil
}

// compact returns raw without insignificant whitespace (a fresh copy).
func compact(raw []byte) json.RawMessage {
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return c.Bytes()
}

// The encoder: appends JSON to a byte slice, HTML characters unescaped
// (jq does not escape "<", ">" or "&" either).

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func appendNullableString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendInts(b []byte, ns []int) []byte {
	b = append(b, '[')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}

// appendKey appends `,"key":` (without the comma for the first member).
func appendKey(b []byte, first bool, key string) []byte {
	if !first {
		b = append(b, ',')
	}
	b = appendString(b, key)
	return append(b, ':')
}

func appendExtra(b []byte, first bool, m Members) []byte {
	for _, e := range m {
		b = appendKey(b, first, e.Key)
		b = append(b, e.Value...)
		first = false
	}
	return b
}
