package daemon

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// TuneRuntime sets the Go runtime up for a daemon: the soft memory limit
// (unless $GOMEMLIMIT is set; 0 leaves it) and one more P than the
// runtime's default (unless $GOMAXPROCS is set). Run calls it with
// Config.MemoryLimit.
//
// With a limit (and no $GOGC) the collector also runs less often below it
// (GOGC 400): a daemon's live data is small next to what a burst of commits
// allocates, and collecting at twice the live data would spend a fifth of
// the CPU on it; the limit still bounds the heap.
//
// The spare P: each document's syncer spends much of its time in write and
// fsync system calls, and a P whose goroutine is in a system call is handed
// to other work only after the runtime's monitor notices, typically after
// the call has already returned: on a 2-core machine the daemon then
// leaves about a quarter of the CPU idle while requests queue on the
// blocked P (measured: 150% CPU at 64 clients; 170% and 15-30% more
// proposals/s with the spare P). It is added once per process (tests and
// bench daemon start several daemons).
func TuneRuntime(memoryLimit int64) {
	if memoryLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(400)
		}
	}
	if os.Getenv("GOMAXPROCS") == "" {
		spareP.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1) })
	}
}

var spareP sync.Once
