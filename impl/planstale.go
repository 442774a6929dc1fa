package impl

// PlanChange says that the plan document changed since decomposition
// (seed 001: "the manifest can become stale if the plan document is
// modified after decomposition").
type PlanChange struct {
	Path         string `json:"path"`
	DecomposedAt string `json:"decomposed_at"`
	Recorded     string `json:"recorded_sha256"`
	// Current is the plan's hash now, "" when it is missing.
	Current string `json:"current_sha256"`
	// State is "changed" or "missing".
	State string `json:"state"`
}

// PlanStale compares the plan's hash now (current; "" when the file is
// missing) with the one recorded at decomposition. It returns nil when the
// plan is unchanged or no hash was recorded.
func (m *Manifest) PlanStale(current string) *PlanChange {
	if m.Plan.SHA256 == "" || current == m.Plan.SHA256 {
		return nil
	}
	c := &PlanChange{Path: m.Plan.Path, DecomposedAt: m.Plan.DecomposedAt, Recorded: m.Plan.SHA256, Current: current, State: "changed"}
	if current == "" {
		c.State = "missing"
	}
	return c
}

// Line is the change as --stale, --summary and --continue print it:
// plan_stale=<path>|<changed or missing>|<decomposed_at>.
func (c *PlanChange) Line() string {
	return "plan_stale=" + c.Path + "|" + c.State + "|" + c.DecomposedAt
}
