package asdd

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// SlicesChanged names exactly the positions whose slice is not the
// input's, for Apply's and ApplyFinalized's results alike, and says ok
// only for the manifest the result was made from and only while the
// result keeps its list.
func TestPropertySlicesChanged(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := New()
		for i := range rapid.IntRange(0, 150).Draw(t, "slices") {
			m.Slices = append(m.Slices, &Slice{SliceID: fmt.Sprintf("S%d", i), Name: "s", Type: "FEATURE", Status: Discovery,
				GovernanceMode: "MANUAL", CreatedAt: "2026-11-01T00:00:00Z", UpdatedAt: "2026-11-01T00:00:00Z"})
		}
		now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
		for range rapid.IntRange(1, 20).Draw(t, "steps") {
			id := fmt.Sprintf("S%d", rapid.IntRange(0, len(m.Slices)).Draw(t, "slice"))
			agent := rapid.SampledFrom(propAgents).Draw(t, "agent")
			var op Op
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 0:
				op = AddSlice{ID: fmt.Sprintf("S%d", len(m.Slices)), Name: "added"}
			case 1:
				n := rapid.IntRange(0, 5).Draw(t, "n")
				op = Beat{Agent: agent, Slice: id, Completed: &n}
			case 2:
				op = LockSlice{Slice: id, Holder: agent, TTL: time.Duration(rapid.IntRange(1, 600).Draw(t, "ttl")) * time.Second}
			case 3:
				op = UnlockSlice{Slice: id, Holder: agent}
			case 4:
				op = AddTask{Slice: id, Title: "task"}
			case 5:
				op = Quick{Description: "fix " + id}
			}
			now = now.Add(time.Duration(rapid.IntRange(0, 900).Draw(t, "clock")) * time.Second)
			apply := ApplyFinalized
			if rapid.Bool().Draw(t, "full") {
				apply = Apply
			}
			out, err := apply(m, op, propConfig, now)
			if err != nil {
				continue
			}
			next := out.Manifest
			var want []int
			for i, s := range next.Slices {
				if i >= len(m.Slices) || s != m.Slices[i] {
					want = append(want, i)
				}
			}
			got, ok := next.SlicesChanged(m)
			if !ok || !slices.Equal(got, want) {
				t.Fatalf("%T: SlicesChanged = %v, %v; want %v, true", op, got, ok, want)
			}
			if _, ok := next.SlicesChanged(next.Clone()); ok && len(next.Slices) > 0 {
				t.Fatalf("%T: SlicesChanged says ok for a manifest it was not made from", op)
			}
			replaced := *next
			replaced.Slices = slices.Clone(next.Slices)
			if _, ok := replaced.SlicesChanged(m); ok && len(next.Slices) > 0 {
				t.Fatalf("%T: SlicesChanged says ok for a manifest whose list was replaced", op)
			}
			m = next
		}
		if _, ok := m.Clone().SlicesChanged(m); ok {
			t.Fatal("SlicesChanged says ok for a clone")
		}
	})
}
