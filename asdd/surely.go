package asdd

// SliceSurelyValid reports whether s certainly matches the slice part of
// the manifest schema, so that the schema need not be run on its encoding:
// the slice a proposal changes takes this path. It checks in Go what the
// schema asks of the members the custodian writes (the id's pattern, the
// phases, scores between 0 and 1, counts not negative, hashes, the required
// members of a lock, a task, a sign-off, an escalation, the block record of
// a BLOCKED slice) and answers false for anything it does not vouch for (a
// slice or a part of it holding unknown members), which is then checked
// against the schema, which names the problem. TestSliceSurelyValidImpliesSchema
// holds the two together.
func SliceSurelyValid(s *Slice) bool {
	if s == nil || len(s.Extra) > 0 || !sliceIDRE().MatchString(s.SliceID) || !isPhase(s.Status) {
		return false
	}
	for _, p := range [...]string{s.BlockedAtPhase, s.LKGPhase, s.ResumePhase} {
		if p != "" && !isPhase(p) {
			return false
		}
	}
	if s.Status == Blocked && (s.BlockedAtPhase == "" || s.LKGPhase == "" || s.BlockReason == "" || s.RollbackTimestamp == "") {
		return false
	}
	if !unitPtr(s.CCS) || !countPtr(s.RequirementsValidated) || !countPtr(s.RequirementsCorrected) || !countPtr(s.RequirementsMissing) {
		return false
	}
	for _, list := range [...][]ChainEntry{s.ConfidenceChain, s.ChainHistory} {
		for i := range list {
			if !chainEntrySurelyValid(&list[i]) {
				return false
			}
		}
	}
	for _, so := range s.SignOffs {
		if so.Role == "" || so.Rationale == "" {
			return false
		}
	}
	for _, a := range s.Assumptions {
		if a.Text == "" || (a.Status != AssumptionAssumed && a.Status != AssumptionCorrected) {
			return false
		}
	}
	for _, h := range s.ArtifactHashes {
		if !hashRE().MatchString(h) {
			return false
		}
	}
	if l := s.Lock; l != nil && (l.Holder == "" || len(l.Extra) > 0) {
		return false
	}
	for _, n := range s.Attempts {
		if n < 0 {
			return false
		}
	}
	for _, v := range s.RaisedMinimums {
		if !unit(v) {
			return false
		}
	}
	for i := range s.Tasks {
		tk := &s.Tasks[i]
		if tk.ID == "" || tk.Wave < 1 || len(tk.Extra) > 0 || (tk.Status != TaskPending && tk.Status != TaskClaimed && tk.Status != TaskDone) {
			return false
		}
	}
	for i := range s.Escalations {
		e := &s.Escalations[i]
		if e.ID == "" || e.Path == "" || e.FailureMode == "" || !unitPtr(e.Score) || !unitPtr(e.CCS) ||
			(e.Status != EscalationOpen && e.Status != EscalationResolved) {
			return false
		}
	}
	return true
}

func chainEntrySurelyValid(e *ChainEntry) bool {
	return e.Agent != "" && unit(e.Score) && e.Attempt >= 0 && (e.Phase == "" || isPhase(e.Phase)) && unitPtr(e.Minimum) &&
		(e.Outcome == "" || e.Outcome == OutcomeAccepted || e.Outcome == OutcomeHalted || e.Outcome == OutcomeSuperseded) &&
		len(e.Extra) == 0
}

// isPhase reports whether p is one of the schema's phases.
func isPhase(p string) bool {
	switch p {
	case Discovery, Spec, Validation, Design, Implementation, CICD, Observability, Done,
		Blocked, Partial, QuickFix, BehaviorCapture, NeedsHumanReview:
		return true
	}
	return false
}

func unit(v float64) bool { return v >= 0 && v <= 1 }

func unitPtr(v *float64) bool { return v == nil || unit(*v) }

func countPtr(v *int) bool { return v == nil || *v >= 0 }
