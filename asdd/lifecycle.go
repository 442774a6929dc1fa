package asdd

import "slices"

// Slice statuses: the lifecycle phases in order, then the special statuses.
const (
	Discovery       = "DISCOVERY"
	Spec            = "SPEC"
	Validation      = "VALIDATION"
	Design          = "DESIGN"
	Implementation  = "IMPLEMENTATION"
	CICD            = "CI_CD"
	Observability   = "OBSERVABILITY"
	Done            = "DONE"
	Blocked         = "BLOCKED"
	Partial         = "PARTIAL"
	QuickFix        = "QUICK_FIX"
	BehaviorCapture = "BEHAVIOR_CAPTURE"
)

// Slice types.
const (
	TypeFeature   = "FEATURE"
	TypeRetroSpec = "RETRO_SPEC"
	TypeQuickFix  = "QUICK_FIX"
)

// Lifecycle is the phase order of seed 000.
var Lifecycle = []string{Discovery, Spec, Validation, Design, Implementation, CICD, Observability, Done}

var specials = []string{Blocked, Partial, QuickFix, BehaviorCapture, NeedsHumanReview}

// IsStatus reports whether s is a known slice status.
func IsStatus(s string) bool { return slices.Contains(Lifecycle, s) || slices.Contains(specials, s) }

// IsPhase reports whether s is one of the lifecycle phases.
func IsPhase(s string) bool { return slices.Contains(Lifecycle, s) }

// PhaseIndex is the position of a status in the lifecycle: PARTIAL counts
// as VALIDATION and BEHAVIOR_CAPTURE (a retro-spec slice's first phase) as
// SPEC; other statuses are -1.
func PhaseIndex(s string) int {
	switch s {
	case Partial:
		s = Validation
	case BehaviorCapture:
		s = Spec
	}
	return slices.Index(Lifecycle, s)
}

// Next is the phase a slice in status s moves to when its phase completes,
// or "" when there is none (DONE, BLOCKED, QUICK_FIX).
func Next(s string) string {
	i := PhaseIndex(s)
	if i < 0 || i+1 >= len(Lifecycle) {
		return ""
	}
	return Lifecycle[i+1]
}

// Previous is the phase before s, the last-known-good phase of a slice
// halted in s; the first phase is its own LKG.
func Previous(s string) string {
	switch i := PhaseIndex(s); {
	case s == BehaviorCapture:
		return BehaviorCapture
	case i <= 0:
		return Discovery
	default:
		return Lifecycle[i-1]
	}
}

// Active reports whether a slice in status s is still in the pipeline.
func Active(s string) bool { return s != Done && s != QuickFix }
