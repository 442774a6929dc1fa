package asdd

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// Whenever the fast check passes a heartbeat, the schema passes it too.
func TestHeartbeatSurelyValidImpliesSchema(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		count := func(label string) *int {
			if rapid.Bool().Draw(t, label+"?") {
				return nil
			}
			n := rapid.IntRange(-3, 1<<40).Draw(t, label)
			return &n
		}
		h := &Heartbeat{
			LastExecution:    rapid.String().Draw(t, "last"),
			Status:           rapid.SampledFrom([]string{"", "ACTIVE", "IDLE", "é", "\xff"}).Draw(t, "status"),
			CurrentSlice:     rapid.String().Draw(t, "slice"),
			CurrentWave:      count("wave"),
			TasksCompleted:   count("done"),
			TasksRemaining:   count("left"),
			RetryRequestedAt: rapid.String().Draw(t, "retry"),
			EscalatedAt:      rapid.String().Draw(t, "esc"),
		}
		if rapid.Bool().Draw(t, "extra") {
			h.Extra = Extra(`{"note":{"x":[1,null]}}`)
		}
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := validatePart(partHeartbeat, b, "/agent_heartbeats/a")
		if heartbeatSurelyValid(h) && schemaErr != nil {
			t.Fatalf("fast check passed %s, the schema refused it: %v", b, schemaErr)
		}
	})
}
