package asdd

import (
	"github.com/custodian-dev/custodian/reason"
)

// ClearMarkers removes a heartbeat's retry request and escalation marker
// once its agent spoke again (a heartbeat at or after the latest marker)
// or left ACTIVE: the monitor's "cleared". A heartbeat with no marker, or
// still silent, is an INVALID_TRANSITION and nothing changes.
type ClearMarkers struct {
	// Heartbeat is the heartbeat's key in agent_heartbeats.
	Heartbeat string `json:"heartbeat,omitempty"`
}

// Actor is the monitor.
func (ClearMarkers) Actor() string { return "monitor" }

func (o ClearMarkers) apply(t *tx) error {
	cur := t.m.AgentHeartbeats[o.Heartbeat]
	if cur == nil {
		return reason.New(reason.NotFound, "no heartbeat %q", o.Heartbeat)
	}
	if !Clearable(cur) {
		return reason.New(reason.InvalidTransition, "heartbeat %s has no marker to clear, or its agent is still silent", o.Heartbeat)
	}
	h := t.heartbeat(o.Heartbeat, false)
	h.RetryRequestedAt, h.EscalatedAt = "", ""
	t.event("heartbeat_cleared", h.CurrentSlice, o.Heartbeat, map[string]any{"status": h.Status, "last_execution": h.LastExecution})
	t.summary("%s spoke again or left ACTIVE: retry request and escalation cleared", o.Heartbeat)
	return nil
}

// Clearable reports whether h carries a marker that no longer applies: its
// agent left ACTIVE, or sent a heartbeat at or after the latest marker.
func Clearable(h *Heartbeat) bool {
	if h == nil || h.RetryRequestedAt == "" && h.EscalatedAt == "" {
		return false
	}
	if h.Status != HeartbeatActive {
		return true
	}
	last, ok := ParseTimestamp(h.LastExecution)
	if !ok {
		return false
	}
	for _, m := range []string{h.RetryRequestedAt, h.EscalatedAt} {
		if at, ok := ParseTimestamp(m); ok && last.Before(at) {
			return false
		}
	}
	return true
}
