// Package cmdtest helps test a command package's flag parsing apart from
// what the command does: build the command with a runF that records its
// Options, then Execute it with a command line.
package cmdtest

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// Execute parses args with cmd and runs it, with the root's handling of
// flag errors and no output.
func Execute(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetFlagErrorFunc(cmdutil.FlagError)
	return cmd.Execute()
}

// ExitCode is the exit code the root gives err (cmdutil.ExitCode).
func ExitCode(err error) int {
	if err == nil {
		return reason.ExitOK
	}
	return cmdutil.ExitCode(err)
}
