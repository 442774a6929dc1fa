// Package cli holds Custodian's cobra commands: it parses flags, calls the
// domains and the store, and renders results as text or --json. Exit codes
// and error printing are decided in one place (Main).
//
// Commands register themselves from their own files with Register, so each
// domain's commands live in a file of their own (asdd.go, impl.go, …).
package cli
