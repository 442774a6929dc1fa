package jsonval_test

import (
	"fmt"
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

// BenchmarkTreeBytes makes the bytes of a 1,000-slice manifest after a
// heartbeat (what the daemon's snapshot writer does with the latest value):
// a scan of the previous bytes, the changed member encoded.
func BenchmarkTreeBytes(b *testing.B) {
	raw, v := manifest1000(b)
	b.SetBytes(int64(len(raw)))
	for i := 0; b.Loop(); i++ {
		patch := fmt.Sprintf(`[{"op":"add","path":"/agent_heartbeats/spec_agent","value":{"last_execution":"2026-11-25T12:00:00Z","status":"ACTIVE","tasks_completed":%d}},{"op":"replace","path":"/revision","value":%d}]`, i, i+2)
		tree, err := jsonval.PatchTree(v.Tree, []byte(patch), jsonval.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := jsonval.TreeBytes(raw, v.Tree, tree); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSumTree is the canonical sum of a 1,000-slice manifest's tree,
// which a direct commit computes of the whole patched value.
func BenchmarkSumTree(b *testing.B) {
	raw, v := manifest1000(b)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := jsonval.SumTree(v.Tree); err != nil {
			b.Fatal(err)
		}
	}
}
