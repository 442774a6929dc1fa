package asdd

import (
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Issue 18 item 10: a clock that steps back gives no negative duration and
// stretches no lease beyond its own length.
func TestClockStepBack(t *testing.T) {
	t.Run("time to resolve", func(t *testing.T) {
		w := newWorld(t)
		w.drive("S", Spec)
		w.halt(prop("spec", "S", 0.80, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
		w.now = w.now.Add(-3 * time.Hour) // NTP steps the clock back
		w.do(Resolve{Slice: "S", Role: "TL", Rationale: "clarified", Action: ActionRerun})
		e := w.slice("S").Escalations[0]
		if strings.HasPrefix(e.TimeToResolve, "-") || e.TimeToResolve != "0s" {
			t.Fatalf("time to resolve %q after a step back", e.TimeToResolve)
		}
	})
	for _, tc := range []struct {
		name string
		step time.Duration
		// The lease is held at minute held after the commit that follows
		// the step (each op adds one) and free at minute freed.
		held, freed int
	}{
		{"step back a day", -24 * time.Hour, 4, 5},
		{"step back one minute", -time.Minute, 4, 5},
		{"no step", 0, 3, 4},
	} {
		t.Run("lease "+tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.do(AddSlice{ID: "S"})
			w.do(LockSlice{Slice: "S", Holder: "spec", TTL: 5 * time.Minute}) // acquired at T, expires T+5m
			w.now = w.now.Add(tc.step)
			// Any commit after the step restarts a lease acquired "in the
			// future" with its own length (a rejected proposal commits
			// nothing, so it is the next commit that does).
			w.do(AddSlice{ID: "T"})
			freedAt := -1
			for i := 1; i <= 8; i++ {
				_, err := w.try(prop("discovery", "S", 0.97, artsFor("discovery", "S")...))
				if err == nil {
					freedAt = i
					break
				}
				if reason.CodeOf(err) != reason.SliceLocked {
					t.Fatal(err)
				}
			}
			if freedAt <= tc.held || freedAt > tc.freed {
				t.Fatalf("lease freed at minute %d after the step, want within (%d, %d]", freedAt, tc.held, tc.freed)
			}
		})
	}
}
