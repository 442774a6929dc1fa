package jsonval_test

import (
	"testing"

	"github.com/custodian-dev/custodian/bench"
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

// BenchmarkSumOf is the canonical sum of a 1,000-slice manifest, which a
// direct commit by model computes of the whole new value.
func BenchmarkSumOf(b *testing.B) {
	raw, _ := manifest1000(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := jsonval.SumOf(raw); err != nil {
			b.Fatal(err)
		}
	}
}
