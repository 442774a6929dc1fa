package store

import (
	"encoding/json"

	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// The value operations the store offers its callers. The JSON machinery
// behind them (decoding with limits, canonical form, tree patches,
// indentation) is store/internal/jsonval; the canonical form is part of
// the journal's format (a record's sum), described in docs/store.md.

// SumOf returns the canonical sum of a raw JSON value ("sha256:<hex>" of
// its canonical form: compact, object members sorted by key, numbers as
// written), the sum a journal record carries.
func SumOf(raw []byte) (string, error) { return jsonval.SumOf(raw) }

// HashBytes returns "sha256:<hex>" of b.
func HashBytes(b []byte) string { return jsonval.HashBytes(b) }

// Diff returns the RFC 6902 patch turning raw value a into raw value b
// (nil a: from no document).
func Diff(a, b []byte) (json.RawMessage, error) { return jsonval.Diff(a, b) }

// ApplyPatch applies an RFC 6902 patch to doc (nil: no document) and returns
// the new value (nil when the patch removes the whole document), keeping
// doc's member order.
func ApplyPatch(doc []byte, patch []byte) ([]byte, error) { return jsonval.ApplyPatch(doc, patch) }

// Indent formats a value as the snapshot file holds it: two-space indent,
// a final newline. Invalid JSON is refused.
func Indent(raw []byte) ([]byte, error) { return jsonval.Indent(raw) }

// Depth returns the deepest nesting of objects and arrays in raw.
func Depth(raw []byte) (int, error) { return jsonval.Depth(raw) }
