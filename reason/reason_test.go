package reason

import (
	"fmt"
	"testing"
)

// TestExitCodes: DESIGN.md §6's table, code by code (issue 18 item 16:
// UNAUTHORIZED exits 6).
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{fmt.Errorf("disk on fire"), ExitInternal},
		{New(InvalidInput, "x"), ExitUsage},
		{&UsageError{Err: fmt.Errorf("bad flag")}, ExitUsage},
		{New(InvalidTransition, "x"), ExitRejected},
		{New(BelowThreshold, "x"), ExitRejected},
		{New(Halted, "x"), ExitRejected},
		{New(SliceLocked, "x"), ExitConflict},
		{New(Conflict, "x"), ExitConflict},
		{New(StateDrift, "x"), ExitIntegrity},
		{New(StateInconsistency, "x"), ExitIntegrity},
		{New(CorruptState, "x"), ExitIntegrity},
		{New(Unauthorized, "x"), ExitUnauthorized},
		{fmt.Errorf("wrapped: %w", &Error{Code: "UNAUTHORIZED", Message: "a bearer token is required"}), 6},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
