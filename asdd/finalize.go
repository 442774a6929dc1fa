package asdd

import (
	"maps"
	"slices"
	"time"
)

// finalize recomputes what is derived — every CCS, stale artifact hashes
// dropped, the global score — and the next manifest's aggregate. Without
// a base aggregate (Apply) it does so for every slice; with the input's
// (ApplyFinalized), only for the slices the transaction changed or added
// (the others are shared with the input, finalized when it was made),
// updating the base from them.
func (t *tx) finalize() {
	var agg *aggregate
	if t.base == nil {
		agg = &aggregate{conf: new(ccsSum)}
		for i := range t.m.Slices {
			s := t.finalizeSlice(i)
			agg.count(s, 1)
			agg.locks.include(s)
		}
		agg.list = t.m.Slices // after finalizeSlice, which may copy it
		agg.global, agg.hasGlobal = agg.conf.mean()
	} else {
		agg = t.update()
	}
	t.m.agg = agg
	if agg.hasGlobal {
		g := round4(agg.global)
		t.m.ProjectContext.GlobalConfidenceScore = &g
	} else {
		t.m.ProjectContext.GlobalConfidenceScore = nil
	}
}

// update finalizes the slices the transaction changed or added and returns
// the base aggregate updated from them (the base itself when nothing
// changed).
func (t *tx) update() *aggregate {
	base := t.base
	if sameList(t.m.Slices, t.in) && t.locks.equal(base.locks) && t.ids == base.ids {
		return base // no slice changed or added
	}
	agg := *base
	agg.list, agg.locks, agg.ids = t.m.Slices, t.locks, t.ids
	if sameList(t.m.Slices, t.in) {
		return &agg // only the lock bound or the index changed
	}
	n, in := len(t.m.Slices), len(t.in)
	if n < in {
		agg.ids = nil // no operation removes a slice; if one did, the positions changed
	}
	copied := false
	visit := func(i int) {
		var old, s *Slice
		if i < in {
			old = t.in[i]
		}
		if i < n {
			s = t.m.Slices[i]
		}
		if s == old {
			return // shared: finalized and counted when it was made
		}
		if s != nil {
			s = t.finalizeSlice(i)
		}
		if old != nil && (s == nil || s.SliceID != old.SliceID) {
			agg.ids = nil // no operation renames a slice; if one did, the index is stale
		}
		agg.locks.include(s)
		if !sameContribution(old, s) {
			if !copied {
				c := *agg.conf
				agg.conf, copied = &c, true
			}
			agg.conf.add(old, -1)
			agg.conf.add(s, 1)
		}
		agg.review += needsReview(s) - needsReview(old)
	}
	if n >= in {
		// Only the slices the transaction copied or added differ from
		// the input's (finalizeSlice copies only those it was given).
		for _, i := range t.changed() {
			visit(i)
		}
	} else {
		for i := range max(n, in) {
			visit(i)
		}
	}
	agg.list = t.m.Slices
	if agg.conf != base.conf {
		agg.global, agg.hasGlobal = agg.conf.mean()
	}
	return &agg
}

// finalizeSlice recomputes slice i's CCS and drops hashes of paths it no
// longer names, copying it first if that changes it; it returns the slice.
func (t *tx) finalizeSlice(i int) *Slice {
	s := t.m.Slices[i]
	v, ok := ComputeCCS(s.ConfidenceChain, t.cfg)
	if ok != (s.CCS != nil) || (ok && *s.CCS != v) {
		s = t.own(i)
		if ok {
			s.CCS = &v
		} else {
			s.CCS = nil
		}
	}
	if len(s.ArtifactHashes) > 0 {
		named := s.Artifacts()
		stale := func(p, _ string) bool {
			_, found := slices.BinarySearch(named, p)
			return !found
		}
		for p, h := range s.ArtifactHashes {
			if stale(p, h) {
				s = t.own(i)
				maps.DeleteFunc(s.ArtifactHashes, stale)
				break
			}
		}
		if len(s.ArtifactHashes) == 0 {
			s = t.own(i)
			s.ArtifactHashes = nil
		}
	}
	return s
}

// aggregate is what a manifest made by Apply or ApplyFinalized keeps about
// its slices so that ApplyFinalized need not read every one of them: the
// exact sum behind the global score, a bound of the lock expiries, how
// many slices are marked for review, and an index of the slices' ids. It
// is never serialized (a decoded or cloned manifest has none) and never
// changed once made: successive manifests share it while nothing it
// holds changes.
type aggregate struct {
	// list is the slice list it describes: ApplyFinalized uses it only on
	// a manifest with that very list.
	list      []*Slice
	conf      *ccsSum // the active slices' CCS; shared while they do not change
	global    float64 // conf.mean(), before rounding
	hasGlobal bool
	locks     lockBound
	review    int         // slices with needs_human_review marks
	ids       *sliceIndex // nil until ApplyFinalized looks a slice up
}

// count adds the slice's contributions (sign 1) or removes them (-1).
func (a *aggregate) count(s *Slice, sign int) {
	a.conf.add(s, sign)
	a.review += sign * needsReview(s)
}

func needsReview(s *Slice) int {
	if s != nil && len(s.NeedsHumanReview) > 0 {
		return 1
	}
	return 0
}

// lockBound is a lower bound of the expiries of a manifest's leases
// (those with a readable expiry: the others never expire): no lease
// expires before at. It is exact when computed over every slice; a lease
// removed or renewed since may leave it too low, which costs one full scan
// of the leases when it passes (expireLocks), and that scan makes it exact
// again.
type lockBound struct {
	at  time.Time
	any bool // false: no lease
	// acquired is the latest acquisition time of a lease: a clock that
	// reads earlier than it stepped back, and the leases are rebased
	// (expireLocks) so that a step back never stretches one beyond its
	// own duration.
	acquired time.Time
}

// include lowers b to the expiry of s's lease, if it has one.
func (b *lockBound) include(s *Slice) {
	if s == nil || s.Lock == nil {
		return
	}
	if exp, ok := ParseTimestamp(s.Lock.Expires); ok && (!b.any || exp.Before(b.at)) {
		b.at, b.any = exp, true
	}
	if acq, ok := ParseTimestamp(s.Lock.Acquired); ok && acq.After(b.acquired) {
		b.acquired = acq
	}
}

func (b lockBound) equal(o lockBound) bool {
	return b.any == o.any && b.at.Equal(o.at) && b.acquired.Equal(o.acquired)
}

// due reports whether a lease may have expired at now, or the clock
// stepped back behind a lease's acquisition.
func (b lockBound) due(now time.Time) bool {
	return b.any && !now.Before(b.at) || now.Before(b.acquired)
}
