package integrity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/reconcile"
)

func FuzzDecodeCheckCache(f *testing.F) {
	good, err := encodeCheckCache(&checkCacheFile{Version: checkCacheVersion, Input: checkInput{Revision: 3,
		Slices:    []checkInputSlice{{ID: "SLICE-001", Status: "DESIGN", NeedsReview: []string{"name"}}},
		Artifacts: []reconcile.Artifact{{Slice: "SLICE-001", Name: "intent", Path: "a.md", Hash: "sha256:00"}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{})
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCheckCache(b)
		if err != nil {
			return
		}
		again, err := encodeCheckCache(c)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		c2, err := decodeCheckCache(again)
		if err != nil || !cmp.Equal(c, c2) {
			t.Fatalf("round trip: %v\n%s", err, cmp.Diff(c, c2))
		}
	})
}
