package server_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
)

// BenchmarkHeartbeat is one ASDD proposal (a heartbeat) through the daemon
// over loopback HTTP, on a manifest of 10 and 1,000 slices, and on 200
// slices of 100 tasks (20,000 tasks, a 2.6 MB manifest: bench daemon's
// memory row), with GOMAXPROCS×-parallel clients (go test -bench Heartbeat
// -cpu 1,16,64).
func BenchmarkHeartbeat(b *testing.B) {
	for _, c := range []struct{ slices, tasks int }{{10, 0}, {1000, 0}, {200, 100}} {
		name := fmt.Sprintf("slices=%d", c.slices)
		if c.tasks > 0 {
			name = fmt.Sprintf("tasks=%d", c.slices*c.tasks)
		}
		b.Run(name, func(b *testing.B) {
			doc, err := bench.Manifest(c.slices, c.tasks)
			if err != nil {
				b.Fatal(err)
			}
			d := startB(b, doc)
			ctx := context.Background()
			agents := asdd.DefaultConfig().Agents
			var seq atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					k := int(seq.Add(1))
					if _, err := d.c.Heartbeat(ctx, asdd.Beat{Agent: agents[k%len(agents)].Name, Status: "ACTIVE", Completed: &k}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
