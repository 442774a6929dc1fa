package cmdutil

// The errors that decide a command's exit code.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// RejectedError is an operation the rules (or the input checks) refused:
// nothing was committed. Its text and --json say so.
type RejectedError struct{ err error }

func (e *RejectedError) Error() string { return e.err.Error() }

func (e *RejectedError) Unwrap() error { return e.err }

// Rejected marks a refusal with a reason code as a rejection.
func Rejected(err error) error {
	if _, ok := reason.As(err); !ok {
		return err
	}
	if errors.As(err, new(*RejectedError)) {
		return err
	}
	return &RejectedError{err}
}

// ExitError ends the command with a code and nothing more printed (the
// command has printed what it had to say).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// ExitCode is the process exit code for an error a command returned.
func ExitCode(err error) int {
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	if _, ok := reason.As(err); !ok && isCobraUsage(err) {
		return reason.ExitUsage
	}
	return reason.ExitCode(err)
}

// isCobraUsage recognises the command-line errors cobra itself returns.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "required flag(s)", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "if any flags in the group"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, ": "+p) {
			return true
		}
	}
	return false
}
