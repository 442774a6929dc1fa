package asdd

import (
	"fmt"
	"testing"
)

// BenchmarkApplyProposal measures one proposal's rules on a manifest of
// 1,000 slices through ApplyFinalized (the daemon's path): a spec agent
// re-proposing on a slice whose chain already holds its earlier entry
// (the chain keeps one entry per agent, the earlier one goes to history),
// and a devops agent completing CI_CD (the phase gates are checked).
func BenchmarkApplyProposal(b *testing.B) {
	cfg := DefaultConfig()
	w := &world{cfg: cfg, now: fixedNow}
	must := func(op Op) {
		out, err := ApplyFinalized(w.m, op, cfg, w.now)
		if err != nil {
			b.Fatal(err)
		}
		w.m = out.Manifest
	}
	must(Init{})
	for i := range 1000 {
		id := fmt.Sprintf("S%04d", i)
		must(AddSlice{ID: id})
		must(prop("discovery", id, 0.97, artsFor("discovery", id)...))
	}
	// S0500 stays in SPEC with a spec entry in its chain (--to SPEC).
	keep := prop("spec", "S0500", 0.97, artsFor("spec", "S0500")...)
	keep.To = Spec
	must(keep)
	ci := "S0999"
	for _, a := range []string{"spec", "validation", "domain", "design", "task_planning", "refactor", "implementation", "qa", "security"} {
		must(prop(a, ci, 0.97, artsFor(a, ci)...))
	}
	base := w.m
	for _, c := range []struct {
		name string
		op   Op
	}{
		{"spec-again", keep},
		{"devops-completes-CI_CD", prop("devops", ci, 0.97)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				out, err := ApplyFinalized(base, c.op, cfg, w.now)
				if err != nil || out.Verdict != nil {
					b.Fatal(err, out.Verdict)
				}
			}
		})
	}
}
