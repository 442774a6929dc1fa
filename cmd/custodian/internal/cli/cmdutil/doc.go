// Package cmdutil is what every command package shares: the App (global flags,
// injected IO, the project root, the store and the application layer a command
// works on), output (text or --json), the errors that decide exit codes, and
// flag and text helpers.
//
// A command package has a constructor (NewCmd) that takes the App and returns
// its cobra command; the root command (package cli) adds each one explicitly.
package cmdutil
