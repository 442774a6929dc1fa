package cmdutil

import (
	"errors"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

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
