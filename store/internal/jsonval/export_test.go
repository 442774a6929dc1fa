package jsonval

import "testing"

// MustDecode decodes raw as a tree.
func MustDecode(tb testing.TB, raw []byte) any {
	tb.Helper()
	v, err := Decode(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// DecodeStrict is the fast decoder alone: ok is false for what only
// encoding/json takes (a member named twice, invalid UTF-8).
func DecodeStrict(raw []byte) (any, bool) { return decodeFast(raw) }
