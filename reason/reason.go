package reason

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable reason for a rejection.
type Code string

// The reason codes. Their spelling is part of the public contract: scripts
// and agents branch on them.
const (
	// InvalidTransition: the proposed phase change is not allowed by the lifecycle.
	InvalidTransition Code = "INVALID_TRANSITION"
	// BelowThreshold: a confidence score is below the agent's minimum.
	BelowThreshold Code = "BELOW_THRESHOLD"
	// MissingUncertaintyFactors: a score below the uncertainty threshold came without factors.
	MissingUncertaintyFactors Code = "MISSING_UNCERTAINTY_FACTORS"
	// SliceLocked: the slice is leased to another holder.
	SliceLocked Code = "SLICE_LOCKED"
	// StateDrift: an artifact changed without a corresponding manifest update.
	StateDrift Code = "STATE_DRIFT"
	// StateInconsistency: the manifest names an artifact that does not exist.
	StateInconsistency Code = "STATE_INCONSISTENCY"
	// Conflict: a concurrent change could not be merged, or retries ran out.
	Conflict Code = "CONFLICT"
	// NotFound: the document, slice, task or revision does not exist.
	NotFound Code = "NOT_FOUND"
	// InvalidInput: malformed JSON, a bad argument, a path outside the project, an oversized document.
	InvalidInput Code = "INVALID_INPUT"
	// CorruptState: a state file or journal is damaged and could not be recovered.
	CorruptState Code = "CORRUPT_STATE"
	// OutsideQuickBoundary: a quick fix touches an artifact outside the
	// quick-mode boundary (.asdd/config.yaml quick.boundary).
	OutsideQuickBoundary Code = "OUTSIDE_QUICK_FIX_BOUNDARY"
	// GatePending: a phase cannot complete before the agents that gate it
	// have an accepted result (.asdd/config.yaml phase_gates, quick.gates).
	GatePending Code = "GATE_PENDING"
	// Halted: the slice is halted and only a human resolution lets it go on.
	Halted Code = "SLICE_HALTED"
	// NeedsReview: the slice carries guessed fields that a human must review first.
	NeedsReview Code = "NEEDS_HUMAN_REVIEW"
	// Unauthorized: a missing or wrong token, or a human decision asked by an agent.
	Unauthorized Code = "UNAUTHORIZED"
)

// Exit codes of the custodian binary.
const (
	ExitOK           = 0
	ExitInternal     = 1
	ExitUsage        = 2
	ExitRejected     = 3
	ExitConflict     = 4
	ExitIntegrity    = 5
	ExitUnauthorized = 6
)

// Error is a rejection: a stable code and a sentence for people.
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	Err     error          `json:"-"`
}

// New returns an *Error with the given code and formatted message. A %w verb
// in format wraps its operand, as with fmt.Errorf.
func New(code Code, format string, args ...any) *Error {
	wrapped := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: wrapped.Error(), Err: errors.Unwrap(wrapped)}
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the same code, so that
// errors.Is(err, reason.SliceLocked) works on any wrapped *Error.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Code:
		return e.Code == t
	case *Error:
		return e.Code == t.Code
	}
	return false
}

// With returns a copy of e with a detail attached.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// Error makes a Code usable as an errors.Is target.
func (c Code) Error() string { return string(c) }

// ExitCode is the process exit code for errors carrying this code.
func (c Code) ExitCode() int {
	switch c {
	case SliceLocked, Conflict:
		return ExitConflict
	case StateDrift, StateInconsistency, CorruptState:
		return ExitIntegrity
	case InvalidInput:
		return ExitUsage
	case Unauthorized:
		return ExitUnauthorized
	case "":
		return ExitInternal
	}
	return ExitRejected
}

// CodeOf returns the reason code carried by err, or "" when err carries none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// As returns the *Error carried by err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// ExitCode maps any error to the process exit code (0 for nil).
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var u *UsageError
	if errors.As(err, &u) {
		return ExitUsage
	}
	return CodeOf(err).ExitCode()
}

// UsageError is a bad command line: exit 2.
type UsageError struct{ Err error }

func (u *UsageError) Error() string { return u.Err.Error() }
func (u *UsageError) Unwrap() error { return u.Err }

// Usage wraps a message as a usage error.
func Usage(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}
