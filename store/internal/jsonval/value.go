package jsonval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/custodian-dev/custodian/reason"
)

// Value is a parsed, validated JSON document value.
type Value struct {
	Raw  json.RawMessage // the bytes as given
	Tree any             // decoded with json.Number for numbers
	Sum  string          // "sha256:<hex>" of the canonical form
}

// ParseValue validates raw as a document value against the limits: well
// formed JSON, one value other than null, no deeper than MaxDepth, no
// larger than MaxBytes.
// Violations are INVALID_INPUT errors naming the problem.
func ParseValue(raw []byte, lim Limits) (Value, error) {
	if len(raw) > lim.maxBytes() {
		return Value{}, reason.New(reason.InvalidInput, "document is %d bytes, over the limit of %d bytes", len(raw), lim.maxBytes())
	}
	if d, err := Depth(raw); err != nil {
		return Value{}, reason.New(reason.InvalidInput, "malformed JSON: %v", err)
	} else if d > lim.maxDepth() {
		return Value{}, reason.New(reason.InvalidInput, "JSON nested %d levels deep, over the limit of %d", d, lim.maxDepth())
	}
	tree, err := Decode(raw)
	if err != nil {
		return Value{}, reason.New(reason.InvalidInput, "malformed JSON: %v", err)
	}
	if tree == nil {
		// A patch from or to null is one from or to no document: a null
		// value committed would not replay.
		return Value{}, reason.New(reason.InvalidInput, "the value is null: a document is any JSON value but null (null is no document)")
	}
	sum, err := canonicalSum(tree)
	if err != nil {
		return Value{}, err
	}
	return Value{Raw: raw, Tree: tree, Sum: sum}, nil
}

// Decode decodes raw as ParseValue does (numbers as json.Number), without
// the limits and the sum.
func Decode(raw []byte) (any, error) {
	if v, ok := decodeFast(raw); ok {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if rest := bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

// Depth returns the deepest nesting of objects and arrays in raw, without
// decoding it, so that absurd inputs are refused cheaply; unbalanced
// brackets are an error.
func Depth(raw []byte) (int, error) {
	d, maxD, inStr, esc := 0, 0, false, false
	for _, c := range raw {
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '[':
			d++
			if d > maxD {
				maxD = d
			}
		case '}', ']':
			d--
			if d < 0 {
				return 0, errors.New("unbalanced brackets")
			}
		}
	}
	return maxD, nil
}

// HashBytes returns "sha256:<hex>" of b.
func HashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// SumOf returns the canonical sum of a raw JSON value.
func SumOf(raw []byte) (string, error) {
	if raw == nil {
		return "", nil
	}
	tree, err := Decode(raw)
	if err != nil {
		return "", reason.New(reason.InvalidInput, "malformed JSON: %v", err)
	}
	return canonicalSum(tree)
}

// ApplyPatch applies an RFC 6902 patch to doc (nil: no document) and returns
// the new value (nil when the patch removes the whole document). Object key
// order of doc is preserved.
func ApplyPatch(doc []byte, patch []byte) ([]byte, error) {
	var ops []op
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, fmt.Errorf("apply patch: %w", err)
	}
	if len(ops) == 0 {
		return doc, nil
	}
	// Whole-document operations, which JSON patch libraries handle unevenly.
	if len(ops) == 1 && ops[0].Path == "" {
		switch ops[0].Op {
		case "add", "replace":
			if string(ops[0].Value) == "null" && doc == nil {
				return nil, nil
			}
			return []byte(ops[0].Value), nil
		case "remove":
			return nil, nil
		}
	}
	if doc == nil {
		return nil, fmt.Errorf("apply patch: patch edits a document that does not exist")
	}
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, fmt.Errorf("apply patch: %w", err)
	}
	opts := jsonpatch.NewApplyOptions()
	opts.EnsurePathExistsOnAdd = false
	out, err := applySafely(p, doc, opts)
	if err != nil {
		return nil, fmt.Errorf("apply patch: %w", err)
	}
	return out, nil
}

// applySafely applies p, turning a panic of the patch library into an
// error: some patches crash it (a test operation whose value holds null
// inside an array, evanphx/json-patch v5.9.11), and a patch is input.
func applySafely(p jsonpatch.Patch, doc []byte, opts *jsonpatch.ApplyOptions) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("the patch library cannot apply this patch (%v)", r)
		}
	}()
	return p.ApplyWithOptions(doc, opts)
}

// Indent formats a value as the snapshot file holds it: two-space indent,
// object key order, strings and numbers kept, a trailing newline — byte
// for byte what encoding/json.Indent writes, by jsontext (several times
// faster). Input that is not valid JSON is refused.
func Indent(raw []byte) ([]byte, error) {
	// jsontext's indenting validates as it goes, so valid JSON is read
	// once; what it refuses (invalid JSON, or valid JSON nested deeper
	// than its limit) goes to encoding/json's scanner, which refuses the
	// invalid.
	body := bytes.TrimRight(raw, " \t\r\n")
	v := jsontext.Value(bytes.Clone(body))
	if err := v.Indent(jsontext.WithIndent("  ")); err != nil {
		var buf bytes.Buffer
		if err := json.Indent(&buf, body, "", "  "); err != nil {
			return nil, fmt.Errorf("indent: %w", err)
		}
		v = buf.Bytes()
	}
	out := append([]byte(v), raw[len(body):]...) // trailing white space kept, as encoding/json.Indent keeps it
	return append(out, '\n'), nil
}
