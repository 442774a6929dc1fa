// Package jsonenc appends JSON text without reflection, byte for byte as
// encoding/json's Marshal writes it, for the few hot paths (journal
// records, patches, events) where Marshal's reflection is most of the
// cost.
package jsonenc

import (
	"encoding/json"
	"strconv"
)

// String appends s quoted as json.Marshal quotes it: HTML characters and
// U+2028/U+2029 escaped, invalid UTF-8 replaced.
func String(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Member appends `"key":` after a comma unless first.
func Member(b []byte, first bool, key string) []byte {
	if !first {
		b = append(b, ',')
	}
	return append(String(b, key), ':')
}

// Value appends v as json.Marshal encodes it, without reflection for
// strings, booleans, integers and nil.
func Value(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return String(b, v), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	}
	m, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, m...), nil
}
