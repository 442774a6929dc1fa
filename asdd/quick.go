package asdd

import (
	"fmt"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// Quick records a QUICK_FIX slice (/asdd:quick): no phase gates.
type Quick struct {
	ID          string     `json:"id,omitempty"` // optional: QUICK-<n>
	Description string     `json:"description,omitempty"`
	Agent       string     `json:"agent,omitempty"` // who made the fix (default implementation)
	Artifacts   []Artifact `json:"artifacts,omitempty"`
}

// Actor is the agent that made the fix.
func (o Quick) Actor() string { return orDefault(o.Agent, "knowledge") }

func (o Quick) apply(t *tx) error {
	desc := strings.TrimSpace(o.Description)
	if desc == "" || strings.ContainsAny(desc, "\n\r") {
		return reason.New(reason.InvalidInput, "quick mode takes a one-line description")
	}
	id := o.ID
	if id == "" {
		for n := 1; ; n++ {
			id = fmt.Sprintf("QUICK-%03d", n)
			if t.index(id) < 0 {
				break
			}
		}
	}
	if !sliceIDRE().MatchString(id) {
		return reason.New(reason.InvalidInput, "slice id %q is not valid", id)
	}
	if t.index(id) >= 0 {
		return reason.New(reason.InvalidInput, "slice %s already exists", id)
	}
	if o.Agent != "" {
		if _, err := t.agent(o.Agent); err != nil {
			return err
		}
	}
	s := newSlice(id, desc, TypeQuickFix, QuickFix, "QUICK", t.ts)
	s.Description = desc
	if err := checkArtifacts(o.Artifacts); err != nil {
		return err
	}
	for _, a := range o.Artifacts {
		if err := t.cfg.Quick.Boundary.Check(a); err != nil {
			return err
		}
		recordArtifact(s, a)
	}
	t.addSlice(s)
	t.out.Slice = id
	t.event("quick_fix", id, o.Agent, map[string]any{"description": desc})
	t.summary("record quick fix %s: %s", id, desc)
	return nil
}
