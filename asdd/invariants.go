package asdd

import (
	"fmt"
	"math"
	"slices"
)

// Invariants returns every way m breaks the rules' invariants (nil when it
// keeps them all): a BLOCKED slice has its block record and an open
// escalation when it names one; the stored CCS equals the product of the chain; no two chain
// entries share an agent and attempt; a DONE slice names every required
// artifact and has a hash for each; every task dependency exists; the
// global score is the mean CCS of the active slices. Manifests written by
// the custodian always pass; a hand-written one may not until its first
// commit recomputes the derived values.
func Invariants(m *Manifest, cfg *Config) []string {
	var bad []string
	add := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	for _, s := range m.Slices {
		id := s.SliceID
		if s.Status == Blocked {
			if s.BlockedAtPhase == "" || s.LKGPhase == "" || s.BlockReason == "" || s.RollbackTimestamp == "" {
				add("%s: BLOCKED without its block record", id)
			}
			if s.EscalationID != "" && s.OpenEscalation() == nil {
				add("%s: BLOCKED with escalation %s not open", id, s.EscalationID)
			}
		} else if s.BlockedAtPhase != "" || s.EscalationID != "" {
			add("%s: block record left on a %s slice", id, s.Status)
		}
		want, ok := ComputeCCS(s.ConfidenceChain, cfg)
		switch {
		case ok != (s.CCS != nil):
			add("%s: ccs present=%v, chain has CCS scores=%v", id, s.CCS != nil, ok)
		case ok && *s.CCS != want:
			add("%s: ccs %v is not the product of its chain %v", id, *s.CCS, want)
		}
		for _, a := range s.DuplicateChainAgents() {
			add("%s: two current confidence chain entries for the %s agent", id, a)
		}
		seen := map[string]bool{}
		for _, e := range s.ConfidenceChain {
			if e.Attempt == 0 {
				continue
			}
			k := fmt.Sprintf("%s#%d", e.Agent, e.Attempt)
			if seen[k] {
				add("%s: two chain entries for %s attempt %d", id, e.Agent, e.Attempt)
			}
			seen[k] = true
		}
		if s.Status == Done {
			for _, p := range s.Artifacts() {
				if s.ArtifactHashes[p] == "" {
					add("%s: DONE but artifact %s has no recorded hash", id, p)
				}
			}
			if s.Type != TypeQuickFix {
				for _, a := range cfg.Agents {
					if len(a.Completes) == 0 {
						continue
					}
					if s.Type == TypeRetroSpec && !slices.ContainsFunc(a.Completes, func(p string) bool { return PhaseIndex(p) > PhaseIndex(Spec) || p == BehaviorCapture }) {
						continue
					}
					for _, r := range a.RequiredArtifacts {
						if s.PhaseData[r] == "" {
							add("%s: DONE without its %s artifact", id, r)
						}
					}
				}
			}
		}
		for _, tk := range s.Tasks {
			for _, d := range tk.DependsOn {
				if findTask(s, d) == nil {
					add("%s: task %s depends on missing task %s", id, tk.ID, d)
				}
			}
		}
	}
	g, ok := GlobalConfidence(m)
	switch gs := m.ProjectContext.GlobalConfidenceScore; {
	case ok != (gs != nil):
		add("global_confidence_score present=%v, active slices with CCS=%v", gs != nil, ok)
	case ok && math.Abs(*gs-g) > 1e-4:
		add("global_confidence_score %v is not the mean CCS %v", *gs, g)
	}
	return bad
}
