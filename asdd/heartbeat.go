package asdd

import "github.com/custodian-dev/custodian/reason"

// Beat records an agent heartbeat (seed 000's agent_heartbeats).
type Beat struct {
	Agent     string `json:"agent,omitempty"`
	Status    string `json:"status,omitempty"` // IDLE, ACTIVE, PAUSED…
	Slice     string `json:"slice,omitempty"`
	Wave      *int   `json:"wave,omitempty"`
	Completed *int   `json:"completed,omitempty"`
	Remaining *int   `json:"remaining,omitempty"`
}

// Actor is the agent.
func (o Beat) Actor() string { return o.Agent }

func (o Beat) apply(t *tx) error {
	a, err := t.agent(o.Agent)
	if err != nil {
		return err
	}
	status := orDefault(o.Status, HeartbeatActive)
	if !statusWord().MatchString(status) {
		return reason.New(reason.InvalidInput, "heartbeat status %q is not valid (IDLE, ACTIVE, PAUSED)", status)
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"wave", o.Wave}, {"tasks completed", o.Completed}, {"tasks remaining", o.Remaining}} {
		if p.v != nil && *p.v < 0 {
			return reason.New(reason.InvalidInput, "%s must not be negative", p.name)
		}
	}
	if o.Slice != "" {
		if _, err := t.lookup(o.Slice); err != nil { // named, not changed
			return err
		}
	}
	key := HeartbeatKey(a.Name)
	h := t.heartbeat(key, true)
	h.LastExecution, h.Status, h.CurrentSlice = t.ts, status, o.Slice
	h.CurrentWave, h.TasksCompleted, h.TasksRemaining = clonePtr(o.Wave), clonePtr(o.Completed), clonePtr(o.Remaining)
	h.RetryRequestedAt, h.EscalatedAt = "", ""
	t.event("heartbeat", o.Slice, a.Name, map[string]any{"status": status})
	t.summary("heartbeat from %s (%s)", key, status)
	return nil
}

// heartbeat returns the heartbeat under key, owned by this transaction;
// with create, a missing one is added (nil otherwise).
func (t *tx) heartbeat(key string, create bool) *Heartbeat {
	h := t.m.AgentHeartbeats[key]
	switch {
	case h == nil && !create:
		return nil
	case h == nil:
		h = &Heartbeat{}
	case !t.ownedHB[h]:
		h = h.clone()
	}
	t.ownedHB[h] = true
	t.m.AgentHeartbeats[key] = h
	return h
}
