package jsonval_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// manifest1000 is a 1,000-slice manifest's bytes and parsed value.
func manifest1000(b *testing.B) ([]byte, jsonval.Value) {
	b.Helper()
	raw, err := bench.Manifest(1000, 0)
	if err != nil {
		b.Fatal(err)
	}
	v, err := jsonval.ParseValue(raw, jsonval.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	return raw, v
}

// BenchmarkParseValue parses a 1,000-slice manifest and sums it: a generic
// commit's work on its new value, and twice over a direct-edit check's (the
// file found, the value held). ParseValue is against the same work done
// by the libraries: decoding with encoding/json (UseNumber) instead of
// the jsontext tree reader, the sum of json.Marshal's bytes instead of the
// canonical writer, and both. Without either the operation takes about a
// fifth to a quarter longer, without both about three quarters longer (CPU
// time, alternated runs).
func BenchmarkParseValue(b *testing.B) {
	raw, want := manifest1000(b)
	for _, bc := range []struct {
		name   string
		decode func([]byte) (any, error)
		sum    func(any) (string, error)
	}{
		{"ParseValue", nil, nil},
		{"encoding-json-decode", stdDecode, jsonval.CanonicalSum},
		{"json.Marshal-sum", jsonval.Decode, marshalSum},
		{"both-libraries", stdDecode, marshalSum},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			defer testenv.CPUTime(b)()
			for b.Loop() {
				if bc.decode == nil {
					if _, err := jsonval.ParseValue(raw, jsonval.Limits{}); err != nil {
						b.Fatal(err)
					}
					continue
				}
				if _, err := jsonval.Depth(raw); err != nil {
					b.Fatal(err)
				}
				tree, err := bc.decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				if sum, err := bc.sum(tree); err != nil || sum != want.Sum {
					b.Fatalf("sum %s (%v), want %s", sum, err, want.Sum)
				}
			}
		})
	}
}

// stdDecode is Decode by encoding/json alone.
func stdDecode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// marshalSum is the canonical sum written by json.Marshal.
func marshalSum(tree any) (string, error) {
	b, err := json.Marshal(tree)
	return jsonval.HashBytes(b), err
}
