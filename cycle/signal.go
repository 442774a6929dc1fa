package cycle

// Signal actions: what an agent about to act must do.
const (
	ActionContinue = "continue"
	ActionPause    = "pause"
	ActionStop     = "stop"
	ActionUnknown  = "unknown"
)

// Signal is the answer to the seed's checkControlSignals.
type Signal struct {
	CycleID  string `json:"cycle_id"`
	Status   string `json:"status"`
	Continue bool   `json:"continue"`
	Action   string `json:"action"`
}

// CheckSignal returns what an agent must do before its next action, exactly
// as the seed's checkControlSignals: running → continue; paused → pause;
// failed (stopped) → stop; anything else (created, completed) → unknown,
// and the agent must not continue.
func CheckSignal(s State) Signal {
	sig := Signal{CycleID: s.CycleID, Status: s.Status, Action: ActionUnknown}
	switch s.Status {
	case StatusRunning:
		sig.Continue, sig.Action = true, ActionContinue
	case StatusPaused:
		sig.Action = ActionPause
	case StatusFailed:
		sig.Action = ActionStop
	}
	return sig
}
