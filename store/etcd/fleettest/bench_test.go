package fleettest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
	"github.com/custodian-dev/custodian/wire"
)

// BenchmarkDaemonOnEtcd measures commits through one real
// `custodian serve --store etcd://…` process with 1 and 64 concurrent
// clients: raw document writes (the daemon's etcd store group-commits
// concurrent updates into one transaction) and ASDD heartbeats (the rules
// run in the daemon).
//
//	go test -run XXX -bench DaemonOnEtcd -benchtime 3s ./store/etcd/fleettest
func BenchmarkDaemonOnEtcd(b *testing.B) {
	srv := etcdtest.Shared(b)
	d := startDaemon(b, srv, etcdtest.Prefix(b))
	c, err := client.New(d.addr, client.Options{Token: fleetToken})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	admin, err := client.New(d.addr, client.Options{Token: "fleet-admin"})
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Op(ctx, "init", asdd.Init{Sprint: "bench"}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.State(ctx, wire.StateRequest{Op: "init", Task: "bench"}); err != nil {
		b.Fatal(err)
	}
	kinds := []struct {
		name string
		op   func(id int64, n int) error
	}{
		{"jq", func(id int64, n int) error {
			_, err := c.ApplyJQ(ctx, wire.JQRequest{Key: ".agents/tmp/state.json", Program: `.bench = $n`, Args: []wire.JQArg{{Name: "n", Value: fmt.Appendf(nil, "%d", n)}}, Actor: "bench"})
			return err
		}},
		{"heartbeat", func(id int64, n int) error {
			agents := asdd.DefaultConfig().Agents
			done := n // changes every beat, so every beat is a commit
			_, err := c.Heartbeat(ctx, asdd.Beat{Agent: agents[int(id)%len(agents)].Name, Status: "ACTIVE", Completed: &done})
			return err
		}},
	}
	for _, k := range kinds {
		for _, clients := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/clients=%d", k.name, clients), func(b *testing.B) {
				var seq atomic.Int64
				b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
				if clients == 1 {
					for n := 0; b.Loop(); n++ {
						if err := k.op(0, n); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.RunParallel(func(pb *testing.PB) {
						id := seq.Add(1)
						for n := 0; pb.Next(); n++ {
							if err := k.op(id, n); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
			})
		}
	}
}
