package asdd

import "slices"

// Init sets up a project's manifest (or updates its project context).
type Init struct {
	Sprint string   `json:"sprint,omitempty"`
	Goals  []string `json:"goals,omitempty"`
}

// Actor is the custodian itself.
func (Init) Actor() string { return "custodian" }

func (o Init) apply(t *tx) error {
	if o.Sprint != "" {
		t.m.ProjectContext.CurrentSprint = o.Sprint
	}
	if len(o.Goals) > 0 {
		t.m.ProjectContext.ProductGoals = slices.Clone(o.Goals)
	}
	if sum := t.cfg.SHA256(); sum != "" {
		t.m.ProjectContext.ConfigSHA256 = sum // the config the project starts with
	}
	t.event("initialized", "", "", nil)
	t.summary("initialize the ASDD manifest")
	return nil
}
