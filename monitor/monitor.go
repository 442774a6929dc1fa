package monitor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Active is the heartbeat status the monitor watches.
const Active = "ACTIVE"

// Heartbeat is one agent's last sign of life and the monitor's markers.
type Heartbeat struct {
	Agent          string    // the agent_heartbeats key, e.g. "implementation_agent"
	Status         string    // ACTIVE, IDLE, PAUSED…
	Slice          string    // current slice, if any
	Wave           *int      // current wave, if known
	TasksDone      *int      // tasks completed, if known
	TasksRemaining *int      // tasks remaining, if known
	Last           time.Time // last heartbeat; zero when missing or unreadable
	RetryRequested time.Time // when a retry was requested; zero for none
	Escalated      time.Time // when the agent was escalated; zero for none
}

// Policy says how long silence is tolerated.
type Policy struct {
	// Timeout is how long an ACTIVE agent may stay silent before a retry is
	// requested.
	Timeout time.Duration
	// EscalateAfter is how much longer it may stay silent after the retry
	// request before it is escalated; 0 means Timeout.
	EscalateAfter time.Duration
	// Retries is how many retry requests come before the escalation: 0
	// escalates at the first timeout; 1 or more asks once (seed 004: "retry
	// once; then escalate"), since the manifest keeps one retry marker.
	Retries int
}

// Kind is what an action does.
type Kind string

// The actions.
const (
	// RequestRetry asks for the silent agent's work to be retried; record
	// the time as the heartbeat's RetryRequested.
	RequestRetry Kind = "retry_requested"
	// Escalate raises the silence to a human; record Escalated.
	Escalate Kind = "escalated"
	// Clear removes the markers: the agent spoke again or left ACTIVE.
	Clear Kind = "cleared"
)

// Action is one thing the caller should record.
type Action struct {
	Kind    Kind          `json:"kind"`
	Agent   string        `json:"agent"`
	Slice   string        `json:"slice,omitempty"`
	At      time.Time     `json:"at"`
	Silent  time.Duration `json:"-"`              // how long the agent has been silent (0 for Clear)
	Seconds int64         `json:"silent_seconds"` // Silent in whole seconds
	Message string        `json:"message"`
}

// Evaluate returns the actions due at now, sorted by agent. It is pure.
func Evaluate(hbs []Heartbeat, p Policy, now time.Time) []Action {
	var out []Action
	for _, h := range hbs {
		if a, ok := evaluate(h, p, now); ok {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b Action) int { return cmp.Compare(a.Agent, b.Agent) })
	return out
}

func evaluate(h Heartbeat, p Policy, now time.Time) (Action, bool) {
	a := Action{Agent: h.Agent, Slice: h.Slice, At: now}
	marked := !h.RetryRequested.IsZero() || !h.Escalated.IsZero()
	// Markers no newer than the last heartbeat are stale: it spoke since
	// (manifest times have one-second resolution, so a heartbeat in the
	// same second as the marker counts; a marker is only ever set more
	// than a timeout after the last heartbeat).
	spokeSince := !h.Last.IsZero() && !h.Last.Before(latest(h.RetryRequested, h.Escalated))
	if marked && (h.Status != Active || spokeSince) {
		a.Kind = Clear
		if h.Status != Active {
			a.Message = fmt.Sprintf("%s is %s now: retry request and escalation cleared", h.Agent, orNone(h.Status))
		} else {
			a.Message = fmt.Sprintf("%s sent a heartbeat at %s: retry request and escalation cleared", h.Agent, h.Last.UTC().Format(time.RFC3339))
		}
		return a, true
	}
	if h.Status != Active {
		return a, false
	}
	timeout := p.Timeout
	if timeout <= 0 {
		return a, false
	}
	var silent time.Duration
	if h.Last.IsZero() {
		silent = -1 // unknown: treated as past any timeout
	} else {
		silent = now.Sub(h.Last)
		if silent <= timeout {
			return a, false
		}
	}
	a.Silent = max(silent, 0)
	a.Seconds = int64(a.Silent / time.Second)
	if !h.Escalated.IsZero() {
		return a, false // already escalated; waiting for a human or a heartbeat
	}
	escalateAfter := p.EscalateAfter
	if escalateAfter <= 0 {
		escalateAfter = timeout
	}
	switch {
	case p.Retries <= 0:
		a.Kind = Escalate
		a.Message = fmt.Sprintf("%s is ACTIVE but %s: escalated to the Tech Lead", h.Agent, silence(h, silent, timeout))
	case h.RetryRequested.IsZero():
		a.Kind = RequestRetry
		a.Message = fmt.Sprintf("%s is ACTIVE but %s: retry requested%s", h.Agent, silence(h, silent, timeout), progress(h))
	case now.Sub(h.RetryRequested) > escalateAfter:
		a.Kind = Escalate
		a.Message = fmt.Sprintf("%s stayed silent %s after the retry request of %s: escalated to the Tech Lead%s",
			h.Agent, round(now.Sub(h.RetryRequested)), h.RetryRequested.UTC().Format(time.RFC3339), progress(h))
	default:
		return a, false
	}
	return a, true
}

// Apply records an action on the heartbeat it is about, as the caller's
// manifest would: the marker set, or both cleared.
func Apply(h Heartbeat, a Action) Heartbeat {
	switch a.Kind {
	case RequestRetry:
		h.RetryRequested = a.At
	case Escalate:
		h.Escalated = a.At
	case Clear:
		h.RetryRequested, h.Escalated = time.Time{}, time.Time{}
	}
	return h
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func orNone(s string) string {
	if s == "" {
		return "without a status"
	}
	return s
}

func silence(h Heartbeat, silent, timeout time.Duration) string {
	if silent < 0 {
		return "has no readable last heartbeat"
	}
	return fmt.Sprintf("silent for %s (timeout %s, last heartbeat %s)", round(silent), timeout, h.Last.UTC().Format(time.RFC3339))
}

func progress(h Heartbeat) string {
	var parts []string
	if h.Slice != "" {
		parts = append(parts, "slice "+h.Slice)
	}
	if h.Wave != nil {
		parts = append(parts, fmt.Sprintf("wave %d", *h.Wave))
	}
	if h.TasksDone != nil || h.TasksRemaining != nil {
		parts = append(parts, fmt.Sprintf("tasks %s done, %s remaining", intOr(h.TasksDone), intOr(h.TasksRemaining)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func intOr(p *int) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }

// Loop calls tick every interval until ctx ends, and once at the start.
// after is the timer (time.After when nil), injectable for tests. An error
// from tick ends the loop.
func Loop(ctx context.Context, interval time.Duration, after func(time.Duration) <-chan time.Time, tick func(context.Context) error) error {
	if after == nil {
		after = time.After
	}
	for {
		if err := tick(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-after(interval):
		}
	}
}
