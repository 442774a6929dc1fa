package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/monitor"
	"github.com/custodian-dev/custodian/reason"
)

// MonitorResult is what one pass of the heartbeat monitor did
// (`custodian monitor --once --json` prints it).
type MonitorResult struct {
	Revision uint64           `json:"revision"`
	Actions  []monitor.Action `json:"actions"`
	Notices  []string         `json:"notices,omitempty"` // escalation notice files written
	Halted   []string         `json:"halted,omitempty"`  // slices halted by an escalation
	// Pending lists agents whose retry request or escalation still stands.
	Pending  []PendingAgent `json:"pending"`
	Warnings []string       `json:"warnings,omitempty"`
}

// PendingAgent is a silent agent the monitor already acted on.
type PendingAgent struct {
	Agent            string `json:"agent"`
	Slice            string `json:"current_slice,omitempty"`
	LastExecution    string `json:"last_execution"`
	RetryRequestedAt string `json:"retry_requested_at,omitempty"`
	EscalatedAt      string `json:"escalated_at,omitempty"`
}

// MonitorOnce is one pass of the heartbeat monitor (the daemon's loop and
// `custodian monitor`): monitor.Evaluate decides which silent agents need
// a retry request or an escalation under cfg's heartbeat policy at now,
// and each is committed through svc's rules (asdd.AgentTimeout: the retry
// marker, or the escalation marker and a halt of the agent's slice with
// its notice and failure-log row), one operation per agent, each re-checked
// against the latest manifest. Markers left on a heartbeat that spoke
// again (or left ACTIVE) are cleared (asdd.ClearMarkers). NOT_FOUND when
// there is no manifest.
func MonitorOnce(ctx context.Context, svc Service, cfg *asdd.Config, now time.Time) (*MonitorResult, error) {
	m, err := svc.Manifest(ctx)
	if err != nil {
		return nil, err
	}
	res := &MonitorResult{Actions: []monitor.Action{}, Pending: []PendingAgent{}, Revision: m.Revision}
	acted := false
	for _, a := range monitor.Evaluate(heartbeatsOf(m), policyOf(cfg), now.UTC()) {
		ok, err := monitorAct(ctx, svc, a, res)
		if err != nil {
			return nil, err
		}
		acted = acted || ok
	}
	if acted {
		if m, err = svc.Manifest(ctx); err != nil {
			return nil, err
		}
	}
	res.Pending = pendingOf(m)
	return res, nil
}

// monitorAct commits one action of the monitor and records it in res;
// it reports whether anything was committed.
func monitorAct(ctx context.Context, svc Service, a monitor.Action, res *MonitorResult) (bool, error) {
	if a.Kind == monitor.Clear {
		return clearMarkers(ctx, svc, a, res)
	}
	r, err := svc.ASDD(ctx, asdd.AgentTimeout{Agent: strings.TrimSuffix(a.Agent, "_agent")})
	if code := reason.CodeOf(err); code == reason.InvalidTransition || code == reason.InvalidInput {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v", a.Agent, err))
		return false, nil
	} else if err != nil {
		return false, err
	}
	// Report what the rules did, which is what the monitor asked for
	// unless the state moved meanwhile.
	for _, e := range r.Events {
		switch e.Type {
		case "retry_requested":
			a.Kind = monitor.RequestRetry
		case "agent_escalated":
			a.Kind = monitor.Escalate
		}
	}
	res.Actions, res.Revision = append(res.Actions, a), r.Revision
	if r.Verdict != nil && a.Slice != "" {
		res.Halted = append(res.Halted, a.Slice)
	}
	for _, e := range r.Effects {
		if e.Kind == asdd.EffectWriteFile {
			res.Notices = append(res.Notices, e.Path)
		}
	}
	res.Warnings = append(res.Warnings, r.Warnings...)
	return true, nil
}

// clearMarkers removes the retry and escalation markers of a heartbeat the
// monitor found stale, through the rules (asdd.ClearMarkers re-checks
// against the latest manifest that they still are).
func clearMarkers(ctx context.Context, svc Service, a monitor.Action, res *MonitorResult) (bool, error) {
	r, err := svc.ASDD(ctx, asdd.ClearMarkers{Heartbeat: a.Agent})
	switch reason.CodeOf(err) {
	case "":
	case reason.InvalidTransition, reason.NotFound:
		return false, nil // the state moved meanwhile
	default:
		return false, err
	}
	if !r.Committed {
		return false, nil
	}
	res.Actions, res.Revision = append(res.Actions, a), r.Revision
	return true, nil
}

// heartbeatsOf converts the manifest's heartbeats for the monitor.
func heartbeatsOf(m *asdd.Manifest) []monitor.Heartbeat {
	var out []monitor.Heartbeat
	for _, k := range sortedKeys(m.AgentHeartbeats) {
		h := m.AgentHeartbeats[k]
		mh := monitor.Heartbeat{Agent: k, Status: h.Status, Slice: h.CurrentSlice, Wave: h.CurrentWave, TasksDone: h.TasksCompleted, TasksRemaining: h.TasksRemaining}
		mh.Last, _ = asdd.ParseTimestamp(h.LastExecution)
		mh.RetryRequested, _ = asdd.ParseTimestamp(h.RetryRequestedAt)
		mh.Escalated, _ = asdd.ParseTimestamp(h.EscalatedAt)
		out = append(out, mh)
	}
	return out
}

func policyOf(cfg *asdd.Config) monitor.Policy {
	return monitor.Policy{Timeout: cfg.Heartbeat.Timeout.D(), Retries: cfg.Heartbeat.Retries}
}

// pendingOf lists the heartbeats that carry a retry request or escalation.
func pendingOf(m *asdd.Manifest) []PendingAgent {
	out := []PendingAgent{}
	for _, k := range sortedKeys(m.AgentHeartbeats) {
		h := m.AgentHeartbeats[k]
		if h.RetryRequestedAt != "" || h.EscalatedAt != "" {
			out = append(out, PendingAgent{Agent: k, Slice: h.CurrentSlice, LastExecution: h.LastExecution, RetryRequestedAt: h.RetryRequestedAt, EscalatedAt: h.EscalatedAt})
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
