package asdd

import (
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

func TestClearMarkers(t *testing.T) {
	at := func(d time.Duration) string { return Timestamp(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).Add(d)) }
	tests := []struct {
		name string
		hb   Heartbeat
		want reason.Code // "" clears
	}{
		{"spoke after the retry request", Heartbeat{Status: HeartbeatActive, LastExecution: at(2 * time.Minute), RetryRequestedAt: at(time.Minute)}, ""},
		{"spoke at the escalation", Heartbeat{Status: HeartbeatActive, LastExecution: at(time.Minute), EscalatedAt: at(time.Minute)}, ""},
		{"left ACTIVE", Heartbeat{Status: HeartbeatIdle, LastExecution: at(0), RetryRequestedAt: at(time.Minute)}, ""},
		{"still silent", Heartbeat{Status: HeartbeatActive, LastExecution: at(0), RetryRequestedAt: at(time.Minute)}, reason.InvalidTransition},
		{"silent since the escalation", Heartbeat{Status: HeartbeatActive, LastExecution: at(2 * time.Minute), RetryRequestedAt: at(time.Minute), EscalatedAt: at(3 * time.Minute)}, reason.InvalidTransition},
		{"no marker", Heartbeat{Status: HeartbeatActive, LastExecution: at(0)}, reason.InvalidTransition},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			hb := tc.hb
			m.AgentHeartbeats["spec_agent"] = &hb
			out, err := Apply(m, ClearMarkers{Heartbeat: "spec_agent"}, DefaultConfig(), time.Date(2026, 11, 25, 13, 0, 0, 0, time.UTC))
			if reason.CodeOf(err) != tc.want {
				t.Fatalf("error %v, want code %q", err, tc.want)
			}
			if err != nil {
				if m.AgentHeartbeats["spec_agent"].RetryRequestedAt != tc.hb.RetryRequestedAt {
					t.Fatal("a refused clear changed the input manifest")
				}
				return
			}
			h := out.Manifest.AgentHeartbeats["spec_agent"]
			if h.RetryRequestedAt != "" || h.EscalatedAt != "" {
				t.Fatalf("markers left: %+v", h)
			}
			if len(out.Events) != 1 || out.Events[0].Type != "heartbeat_cleared" {
				t.Fatalf("events %+v", out.Events)
			}
		})
	}
	if _, err := Apply(New(), ClearMarkers{Heartbeat: "nobody"}, DefaultConfig(), time.Now()); reason.CodeOf(err) != reason.NotFound {
		t.Fatalf("unknown heartbeat: %v", err)
	}
}
