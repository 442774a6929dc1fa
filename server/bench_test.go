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
// over loopback HTTP, on a manifest of 10 and 1,000 slices, with
// GOMAXPROCS×-parallel clients (go test -bench Heartbeat -cpu 1,16,64).
func BenchmarkHeartbeat(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			doc, err := bench.Manifest(n, 0)
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
