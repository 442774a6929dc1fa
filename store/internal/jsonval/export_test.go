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

// IndentedCopyRefused reports whether TreeBytesIndented would fall back to
// indenting the whole value because anchor is not in the indented form
// (rather than copying what is shared from it).
func IndentedCopyRefused(anchor []byte, anchorTree, tree any) bool {
	_, err := treeBytes(anchor, anchorTree, tree, true)
	return err == errNotIndented
}

// DecodeStrict is the fast decoder alone: ok is false for what only
// encoding/json takes (a member named twice, invalid UTF-8).
func DecodeStrict(raw []byte) (any, bool) { return decodeFast(raw) }
