package asdd

import (
	"math"
	"math/big"
)

// eps absorbs binary floating-point noise in threshold comparisons: scores
// are given with a few decimals, so 0.86-0.85 must count as 0.01.
const eps = 1e-9

func below(score, minimum float64) bool { return score < minimum-eps }

// round4 rounds to 4 decimals (raised minimums: 0.90+0.05 is 0.95).
func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// live reports whether a chain entry still counts (it was not superseded
// by a return to an earlier phase).
func live(e ChainEntry) bool { return e.Outcome != OutcomeSuperseded }

// ComputeCCS is the Cumulative Confidence Score of a chain: the product of
// the latest live score of each CCS agent, multiplied in the configured
// agent order. ok is false when no CCS agent has scored yet. The value is
// exact (no rounding); display it with FormatScore.
func ComputeCCS(chain []ChainEntry, cfg *Config) (ccs float64, ok bool) {
	latest := map[string]float64{}
	for _, e := range chain {
		if live(e) {
			latest[e.Agent] = e.Score
		}
	}
	ccs = 1
	for _, a := range cfg.CCS.Agents {
		if v, has := latest[a]; has {
			ccs *= v
			ok = true
		}
	}
	if !ok {
		return 0, false
	}
	return ccs, true
}

// CCSOf is ComputeCCS of the scores given in order, as in seed 004's
// worked examples.
func CCSOf(scores ...float64) float64 {
	p := 1.0
	for _, s := range scores {
		p *= s
	}
	return p
}

// WeakLink returns the live CCS entry with the lowest score: the agent a
// Tech Lead looks at first in a low-CCS slice.
func WeakLink(s *Slice, cfg *Config) (ChainEntry, bool) {
	latest := map[string]int{}
	for i, e := range s.ConfidenceChain {
		if live(e) && cfg.IsCCSAgent(e.Agent) {
			latest[e.Agent] = i
		}
	}
	var best ChainEntry
	found := false
	for _, a := range cfg.CCS.Agents {
		i, ok := latest[a]
		if !ok {
			continue
		}
		if e := s.ConfidenceChain[i]; !found || e.Score < best.Score {
			best, found = e, true
		}
	}
	return best, found
}

// GlobalConfidence is the mean CCS of the active slices (not DONE, not
// QUICK_FIX) that have one. The sum is taken exactly and rounded once (see
// ccsSum), so the mean does not depend on the order of the slices, and
// equals what Apply stores (rounded to 4 decimals) whether it summed every
// slice or updated the sum from the slices an operation changed.
func GlobalConfidence(m *Manifest) (float64, bool) {
	var sum ccsSum
	for _, s := range m.Slices {
		sum.add(s, 1)
	}
	return sum.mean()
}

// activeCCS is what a slice adds to the global score: its CCS, when it has
// one and is active.
func activeCCS(s *Slice) (float64, bool) {
	if s == nil || s.CCS == nil || !Active(s.Status) {
		return 0, false
	}
	return *s.CCS, true
}

// sameContribution reports whether a and b add the same to the global
// score (the same value, bit for bit, or nothing).
func sameContribution(a, b *Slice) bool {
	x, okx := activeCCS(a)
	y, oky := activeCCS(b)
	return okx == oky && math.Float64bits(x) == math.Float64bits(y)
}

// ccsLimbs is the number of 32-bit limbs of a ccsSum: every finite float64
// is a whole number of 2^-1074 (the smallest subnormal) below 2^2098.
const ccsLimbs = 66

// ccsSum is the exact sum of a multiset of float64 values (the active
// slices' CCS). Every finite value is m·2^-1074 for an integer m < 2^2098;
// its 32-bit pieces are added to (or, for a removal, subtracted from) the
// limbs, whose carries are left pending: limb i holds the sum of the
// current values' pieces at 2^(32i-1074), so adding and removing values in
// any order leaves the same limbs, and no limb overflows below 2^30
// values. Infinities and NaNs are counted apart. The zero value is the
// empty sum.
type ccsSum struct {
	limb            [ccsLimbs]int64
	n               int // values summed
	nan, pInf, nInf int
}

// add adds the slice's contribution (activeCCS) to the sum, or removes it
// with sign -1.
func (c *ccsSum) add(s *Slice, sign int) {
	x, ok := activeCCS(s)
	if !ok {
		return
	}
	c.n += sign
	switch {
	case math.IsNaN(x):
		c.nan += sign
		return
	case math.IsInf(x, 1):
		c.pInf += sign
		return
	case math.IsInf(x, -1):
		c.nInf += sign
		return
	}
	b := math.Float64bits(x)
	m, e := b&(1<<52-1), int(b>>52&0x7ff)
	shift := 0
	if e > 0 { // normal: (2^52+m)·2^(e-1075) = (2^52+m)·2^(e-1) units
		m |= 1 << 52
		shift = e - 1
	}
	if m == 0 {
		return
	}
	k, r := shift/32, uint(shift%32)
	lo, hi := (m&0xffffffff)<<r, (m>>32)<<r // < 2^63 and < 2^52
	sg := int64(sign)
	if b>>63 != 0 {
		sg = -sg
	}
	c.limb[k] += sg * int64(lo&0xffffffff)
	c.limb[k+1] += sg * int64(lo>>32+hi&0xffffffff)
	c.limb[k+2] += sg * int64(hi>>32)
}

// total is the float64 nearest to the exact sum (ties to even), as a
// float64 addition would round the same two values; with infinities or
// NaNs, what float64 addition gives in any order.
func (c *ccsSum) total() float64 {
	switch {
	case c.nan > 0 || c.pInf > 0 && c.nInf > 0:
		return math.NaN()
	case c.pInf > 0:
		return math.Inf(1)
	case c.nInf > 0:
		return math.Inf(-1)
	}
	top := ccsLimbs - 1
	for top >= 0 && c.limb[top] == 0 {
		top--
	}
	if top < 0 {
		return 0
	}
	var z, l big.Int
	for i := top; i >= 0; i-- { // z = Σ limb[i]·2^(32i), exactly
		z.Lsh(&z, 32)
		z.Add(&z, l.SetInt64(c.limb[i]))
	}
	f := new(big.Float).SetInt(&z) // exact: the precision is z's length
	v, _ := f.SetMantExp(f, -1074).Float64()
	return v
}

// mean is the mean of the values (ok false when there are none).
func (c *ccsSum) mean() (float64, bool) {
	if c.n == 0 {
		return 0, false
	}
	return c.total() / float64(c.n), true
}
