package asdd

import (
	"fmt"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// ModeAgentTimeout is seed 004's "Agent timeout / crash" failure mode.
const ModeAgentTimeout = "AGENT_TIMEOUT"

// AgentTimeout is the monitor's response to an ACTIVE agent silent past
// the heartbeat timeout (seed 004: "Retry once; then escalate to TL"):
// while retries remain it records a retry request on the heartbeat; after
// that it escalates — the heartbeat is marked escalated and the slice the
// agent was working on halts with failure mode AGENT_TIMEOUT (resolve it as
// any halt). An agent that is not stale is an INVALID_TRANSITION.
type AgentTimeout struct {
	Agent string `json:"agent,omitempty"`
	// Cause, when the caller saw the failure itself (the runner: the agent
	// crashed, or ran past its own timeout), is the block reason's account
	// of it instead of the heartbeat's silence.
	Cause string `json:"cause,omitempty"`
}

// Actor is the monitor.
func (AgentTimeout) Actor() string { return "monitor" }

// Stale reports whether a heartbeat is ACTIVE and silent for longer than
// timeout at now (since its last execution or its last retry request).
func Stale(h *Heartbeat, timeout time.Duration, now time.Time) bool {
	if h == nil || h.Status != HeartbeatActive || h.EscalatedAt != "" {
		return false
	}
	since := h.LastExecution
	if h.RetryRequestedAt != "" {
		since = h.RetryRequestedAt
	}
	t, ok := ParseTimestamp(since)
	return ok && now.Sub(t) > timeout
}

func (o AgentTimeout) apply(t *tx) error {
	ag, err := t.agent(o.Agent)
	if err != nil {
		return err
	}
	key := HeartbeatKey(ag.Name)
	h := t.heartbeat(key, false)
	timeout := t.cfg.Heartbeat.Timeout.D()
	if !Stale(h, timeout, t.now) {
		return reason.New(reason.InvalidTransition, "%s is not an ACTIVE agent silent for more than %s", key, timeout)
	}
	retries := 0
	if h.RetryRequestedAt != "" {
		retries = 1
	}
	if retries < t.cfg.Heartbeat.Retries {
		h.RetryRequestedAt = t.ts
		t.event("retry_requested", h.CurrentSlice, ag.Name, map[string]any{"last_execution": h.LastExecution})
		t.summary("%s silent since %s: retry requested", key, h.LastExecution)
		return nil
	}
	h.EscalatedAt = t.ts
	t.event("agent_escalated", h.CurrentSlice, ag.Name, map[string]any{"last_execution": h.LastExecution})
	t.summary("%s silent since %s: escalated", key, h.LastExecution)
	s, _ := t.find(h.CurrentSlice)
	if s == nil || s.Status == Blocked || !Active(s.Status) {
		return nil
	}
	t.halt(s, haltSpec{
		mode: ModeAgentTimeout, agent: ag.Name, phase: s.Status, resume: s.Status,
		reason: o.reason(ag.Name, h.LastExecution, timeout, t.cfg.Heartbeat.Retries),
		action: "Retry once; then escalate to TL", route: t.cfg.Escalation,
	})
	t.out.Verdict = reason.New(reason.Halted, "slice %s halted: %s timed out", s.SliceID, key).With("escalation", s.EscalationID)
	return nil
}

func (o AgentTimeout) reason(agent, since string, timeout time.Duration, retries int) string {
	tries := "1 retry"
	if retries != 1 {
		tries = fmt.Sprintf("%d retries", retries)
	}
	if o.Cause != "" {
		return fmt.Sprintf("the %s agent failed: %s (%s)", agent, o.Cause, tries)
	}
	return fmt.Sprintf("the %s agent has been ACTIVE without progress since %s (timeout %s, %s)", agent, since, timeout, tries)
}
