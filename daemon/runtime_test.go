package daemon

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestMemoryLimitFollowsLiveHeap: the configured limit is a floor; live
// data above half of it raises the limit to twice the live heap after a
// collection, and the limit comes back to the floor when the data goes.
func TestMemoryLimitFollowsLiveHeap(t *testing.T) {
	if os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("$GOMEMLIMIT set: the daemon leaves the limit alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	defer debug.SetMemoryLimit(math.MaxInt64)
	const floor = 16 << 20
	TuneRuntime(floor)
	defer limits.floor.Store(math.MaxInt64 / liveFactor) // later tests: no floor below the live heap
	limitAfterGC := func(ok func(int64) bool) int64 {
		t.Helper()
		var got int64
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			runtime.GC()
			time.Sleep(10 * time.Millisecond) // the cleanup runs after the collection
			if got = debug.SetMemoryLimit(-1); ok(got) {
				return got
			}
		}
		t.Fatalf("memory limit %d MB after collections", got>>20)
		return got
	}
	live := make([][]byte, 48)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	got := limitAfterGC(func(n int64) bool { return n >= 2*48<<20 })
	if got > 2*64<<20 {
		t.Errorf("limit %d MB with about 48 MB live: want about twice the live heap", got>>20)
	}
	runtime.KeepAlive(live)
	live = nil
	limitAfterGC(func(n int64) bool { return n == floor })
}
