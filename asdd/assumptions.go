package asdd

import (
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// CorrectAssumption is a PO/TL correcting one of the Discovery Agent's
// assumptions (assumptions-first discovery: humans intervene only where an
// assumption is wrong).
type CorrectAssumption struct {
	Slice      string `json:"slice,omitempty"`
	Index      int    `json:"index,omitempty"` // 1-based, as `slice show` numbers them
	Role       string `json:"role,omitempty"`
	Correction string `json:"correction,omitempty"`
}

// Actor is the correcting role.
func (o CorrectAssumption) Actor() string { return o.Role }

func (o CorrectAssumption) apply(t *tx) error {
	if err := t.needRole(o.Role); err != nil {
		return err
	}
	if strings.TrimSpace(o.Correction) == "" {
		return reason.New(reason.InvalidInput, "a correction needs the right assumption")
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if o.Index < 1 || o.Index > len(s.Assumptions) {
		return reason.New(reason.NotFound, "slice %s has no assumption %d (it has %d)", s.SliceID, o.Index, len(s.Assumptions))
	}
	a := &s.Assumptions[o.Index-1]
	a.Status, a.Correction, a.CorrectedBy = AssumptionCorrected, o.Correction, o.Role
	t.touch(s)
	t.event("assumption_corrected", s.SliceID, "", map[string]any{"index": o.Index, "role": o.Role})
	t.summary("%s corrected assumption %d of %s", o.Role, o.Index, s.SliceID)
	return nil
}
