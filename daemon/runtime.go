package daemon

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
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
// The limit is a floor, not a cap on the live data: after each collection
// it is raised to twice the live heap when that is more (and lowered back
// as the live heap shrinks), so that a daemon holding documents nearly as
// large as the limit collects at twice its live data, as Go does by
// default, instead of continuously (measured at 40,000 slices, 115 MB
// live against the 160 MB limit: a collection every 50 ms and 58% of the
// CPU per proposal in the collector).
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
		limits.floor.Store(memoryLimit)
		debug.SetMemoryLimit(memoryLimit)
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(400)
		}
		limits.start.Do(limits.arm)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		spareP.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1) })
	}
}

var spareP sync.Once

// limits keeps the soft memory limit at max(floor, liveFactor × the live
// heap), checked after every collection.
var limits limitFloor

// liveFactor is the least heap the limit allows per byte of live data.
const liveFactor = 2

type limitFloor struct {
	floor atomic.Int64 // the configured limit
	set   int64        // the limit last set (the cleanup goroutine's)
	start sync.Once
}

// gcSentinel is allocated to be collected: its cleanup runs once after
// the collection that finds it unreachable. (It holds pointers so that it
// is never one of the tiny allocator's blocks, whose cleanups may not run.)
type gcSentinel struct{ _, _ *byte }

// arm allocates the next sentinel; its cleanup adjusts the limit and arms
// again, so that the limit follows every collection for the process's
// lifetime.
func (l *limitFloor) arm() {
	runtime.AddCleanup(new(gcSentinel), func(struct{}) {
		l.adjust()
		l.arm()
	}, struct{}{})
}

func (l *limitFloor) adjust() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	want := max(l.floor.Load(), int64(s[0].Value.Uint64())*liveFactor)
	// Only a change of more than 1/16 is set: a live heap that moves a
	// little at every collection does not reset the limit each time.
	if d := want - l.set; d > l.set/16 || -d > l.set/16 || want == l.floor.Load() && l.set != want {
		l.set = want
		debug.SetMemoryLimit(want)
	}
}
