// Package testbin builds the custodian binary once per test process so that
// tests can run it as separate OS processes, the way users and agents do.
// The go command caches the linked binary, so the packages of one
// `go test ./...` share one link.
package testbin
