package asdd

import (
	"slices"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

func TestBoard(t *testing.T) {
	w := newWorld(t)
	w.drive("A", Design)
	w.drive("B", Spec)
	w.halt(prop("spec", "B", 0.5, artsFor("spec", "B")...), reason.BelowThreshold, ModeBelowMinimum)
	w.do(Quick{Description: "typo"})
	w.do(LockSlice{Slice: "A", Holder: "design", TTL: 3 * time.Minute})
	w.do(Beat{Agent: "design", Status: HeartbeatActive, Slice: "A"})
	b := NewBoard(w.m, w.cfg, w.now.Add(20*time.Minute))
	var ids []string
	for _, s := range b.Slices {
		ids = append(ids, s.ID)
	}
	if !slices.Equal(ids, []string{"B", "A", "QUICK-001"}) { // BLOCKED@SPEC, DESIGN, QUICK_FIX
		t.Fatalf("order %v", ids)
	}
	blocked := b.Slices[0]
	if blocked.Block == nil || blocked.Block.AtPhase != Spec || !slices.Equal(blocked.Block.AwaitingBy, []string{"TL"}) || blocked.WeakLink.Agent != "spec" {
		t.Fatalf("blocked slice %+v", blocked)
	}
	if a := b.Slices[1]; a.Lock == nil || !a.Lock.Expired {
		t.Fatalf("lock %+v", a.Lock)
	}
	if len(b.Escalations) != 1 || b.Escalations[0].Slice != "B" {
		t.Fatalf("escalations %+v", b.Escalations)
	}
	stale := 0
	for _, h := range b.Heartbeats {
		if h.Stale {
			stale++
			if h.Agent != "design_agent" || *h.AgeSeconds != 20*60 {
				t.Fatalf("stale heartbeat %+v", h)
			}
		}
	}
	if stale != 1 {
		t.Fatalf("%d stale heartbeats", stale)
	}
	// CommitEffects re-derives the escalation files of the touched slice.
	out := w.do(LockSlice{Slice: "B", Holder: "x"})
	if effs := CommitEffects(out); len(effs) != 2 || effs[0].Path != w.slice("B").OpenEscalation().Path {
		t.Fatalf("commit effects %+v", effs)
	}
}
