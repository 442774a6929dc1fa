package asdd

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// The patch of an operation, applied to the bytes of the manifest it
// started from, gives the bytes of the manifest it made: slices added and
// changed, heartbeats added and changed, the project context and the
// revision; an operation that changes nothing gives "[]".
func TestPatchReproducesTheNextManifest(t *testing.T) {
	cfg := DefaultConfig()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	out, err := Apply(nil, Init{Sprint: "S1"}, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	m := out.Manifest
	ops := []Op{
		AddSlice{ID: "SLICE-001", Name: "one"},
		AddSlice{ID: "SLICE-002", Name: "<two> & é/~"},
		Beat{Agent: "spec", Status: HeartbeatActive, Slice: "SLICE-001"},
		Beat{Agent: "qa", Status: HeartbeatIdle},
		Beat{Agent: "spec", Status: HeartbeatPaused},
		AddSlice{ID: "SLICE-003", Name: "three"},
	}
	for i, op := range ops {
		out, err := Apply(m, op, cfg, now.Add(time.Duration(i)*time.Minute))
		if err != nil {
			t.Fatalf("op %d: %v", i, err)
		}
		next := out.Manifest
		patch, ok, err := Patch(m, next)
		if err != nil || !ok {
			t.Fatalf("op %d (%T): patch %v, ok %v", i, op, err, ok)
		}
		before, _ := Marshal(m)
		after, _ := Marshal(next)
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			t.Fatalf("op %d: %s: %v", i, patch, err)
		}
		got, err := p.Apply(before)
		if err != nil {
			t.Fatalf("op %d: %s does not apply: %v", i, patch, err)
		}
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(after, &w) != nil || !reflect.DeepEqual(g, w) {
			t.Fatalf("op %d (%T): the patch %s gives\n%s\nwant\n%s", i, op, patch, got, after)
		}
		m = next
	}
	if p, ok, err := Patch(m, m); err != nil || !ok || string(p) != "[]" {
		t.Fatalf("no change: %s %v %v", p, ok, err)
	}
	// Slices removed: not a patch Apply makes; the caller encodes the
	// whole manifest.
	fewer := *m
	fewer.Slices = m.Slices[:1]
	if _, ok, err := Patch(m, &fewer); ok || err != nil {
		t.Fatalf("slices removed: ok %v, %v", ok, err)
	}
}
