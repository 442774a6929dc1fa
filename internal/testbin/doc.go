// Package testbin builds the custodian binary once per test process so that
// tests can run it as separate OS processes, the way users and agents do.
package testbin
