// Package cli is Custodian's command line: the root command and the
// composition root. It adds every command explicitly (one package per noun
// under internal/cli: status, slice, impl, cycle, serve…), hands the store
// openers (package storeopen) to the App, and decides exit codes and error
// printing in one place (Run). Commands parse flags, call the application
// layer (package app) through cmdutil.App, and render text or --json.
//
// The tests here drive the whole CLI end to end: in process through Run
// (golden transcripts under testdata/) and as separate processes.
package cli

//go:generate go run ./gendocs -out ../../../../docs/commands
