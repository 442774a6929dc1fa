// Package testenv says how long the tests' soak and kill loops run.
//
// A plain `go test ./...` runs a short version of each loop (a few rounds,
// enough to take every path) so that a contributor can run the whole suite
// often; with CUSTODIAN_SOAK=1 in the environment (the soak step of
// .ci/run) they run in full:
//
//	CUSTODIAN_SOAK=1 go test ./...
package testenv

import (
	"flag"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"
)

// SoakEnv is the environment variable that asks for the full loops.
const SoakEnv = "CUSTODIAN_SOAK"

// Soak reports whether this is a soak run: SoakEnv set to anything but ""
// or "0".
func Soak() bool {
	v := os.Getenv(SoakEnv)
	return v != "" && v != "0"
}

// Rounds returns full in a soak run, short otherwise.
func Rounds(short, full int) int {
	if Soak() {
		return full
	}
	return short
}

// Duration returns full in a soak run, short otherwise.
func Duration(short, full time.Duration) time.Duration {
	if Soak() {
		return full
	}
	return short
}

// Logger returns a logger that writes to the test's own log (t.Output):
// shown with -v or when the test fails, never on the terminal of a
// passing run. Give it to the code under test that logs (a store's
// recovery notices), which would otherwise write to stderr.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), nil))
}

// DiscardDefaultLogs makes slog's default logger discard everything, for a
// package's TestMain whose tests run code that logs to slog.Default (as a
// store opened without a Logger does): a test that checks what is logged
// passes its own logger.
func DiscardDefaultLogs() {
	slog.SetDefault(slog.New(slog.DiscardHandler))
}

// RapidChecks makes the property tests of pgregory.net/rapid try n cases
// (rapid's -rapid.checks, 100 by default) unless this is a soak run, a
// -short one (rapid tries a fifth then), or -rapid.checks or RAPID_CHECKS
// says how many; for a package whose properties each run for long (real
// time, not CPU: a runner's polls). Call it from TestMain before m.Run.
func RapidChecks(n int) {
	if Soak() || os.Getenv("RAPID_CHECKS") != "" || flag.Lookup("rapid.checks") == nil {
		return
	}
	if !flag.Parsed() {
		flag.Parse()
	}
	if testing.Short() {
		return
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.checks" })
	if !set {
		flag.Set("rapid.checks", strconv.Itoa(n))
	}
}
