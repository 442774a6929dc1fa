package asdd

import (
	"encoding/json"

	"github.com/custodian-dev/custodian/reason"
)

// AddSlice adds a slice: a FEATURE starts in DISCOVERY, a RETRO_SPEC in
// BEHAVIOR_CAPTURE.
type AddSlice struct {
	ID             string `json:"id,omitempty"`
	Name           string `json:"name,omitempty"`
	Type           string `json:"type,omitempty"`            // FEATURE (default) or RETRO_SPEC
	GovernanceMode string `json:"governance_mode,omitempty"` // MANUAL (default)
	By             string `json:"by,omitempty"`
}

// Actor is who added the slice.
func (o AddSlice) Actor() string { return orDefault(o.By, "custodian") }

// newSlice is a slice in the seed's layout, with its empty lists.
func newSlice(id, name, typ, status, gov, ts string) *Slice {
	return &Slice{
		SliceID: id, Name: name, Type: typ, Status: status, GovernanceMode: gov,
		PhaseData: map[string]string{}, ConfidenceChain: []ChainEntry{}, Blockers: []json.RawMessage{},
		DissentNotices: []json.RawMessage{}, ReasoningTraces: []string{}, CreatedAt: ts, UpdatedAt: ts,
	}
}

// OrDefault is s, or d when s is empty.
func OrDefault(s, d string) string { return orDefault(s, d) }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (o AddSlice) apply(t *tx) error {
	if !sliceIDRE().MatchString(o.ID) {
		return reason.New(reason.InvalidInput, "slice id %q is not valid (letters, digits, '.', '_', '-'; at most 128)", o.ID)
	}
	if t.index(o.ID) >= 0 {
		return reason.New(reason.InvalidInput, "slice %s already exists", o.ID)
	}
	typ := orDefault(o.Type, TypeFeature)
	status := Discovery
	switch typ {
	case TypeFeature:
	case TypeRetroSpec:
		status = BehaviorCapture
	default:
		if typ == TypeQuickFix {
			return reason.New(reason.InvalidInput, "QUICK_FIX slices are recorded with `custodian quick`")
		}
		if !statusWord().MatchString(typ) {
			return reason.New(reason.InvalidInput, "slice type %q is not valid (FEATURE or RETRO_SPEC)", typ)
		}
	}
	gov := orDefault(o.GovernanceMode, "MANUAL")
	if !statusWord().MatchString(gov) {
		return reason.New(reason.InvalidInput, "governance mode %q is not valid (such as MANUAL)", gov)
	}
	s := newSlice(o.ID, o.Name, typ, status, gov, t.ts)
	if typ == TypeRetroSpec {
		zero := func() *int { v := 0; return &v }
		s.RequirementsValidated, s.RequirementsCorrected, s.RequirementsMissing = zero(), zero(), zero()
		s.ValidationStatus = "PENDING"
	}
	t.addSlice(s)
	t.event("slice_added", o.ID, "", map[string]any{"type": typ, "status": status})
	t.summary("add slice %s (%s) in %s", o.ID, typ, status)
	return nil
}
