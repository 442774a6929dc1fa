package asdd

import "math"

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
// QUICK_FIX) that have one.
func GlobalConfidence(m *Manifest) (float64, bool) {
	sum, n := 0.0, 0
	for _, s := range m.Slices {
		if s.CCS != nil && Active(s.Status) {
			sum += *s.CCS
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}
