package etcd_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
)

// BenchmarkCommit measures durable commits (etcd acknowledges a
// transaction once its raft log entry is fsynced) from one client, one
// goroutine, on a small document.
func BenchmarkCommit(b *testing.B) {
	s := open(b, etcd.Options{})
	ctx := context.Background()
	const key = "bench/doc.json"
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		n := i
		if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
			return store.Change{Value: fmt.Appendf(nil, `{"n":%d,"pad":"%0200d"}`, n, 0), Actor: "bench"}, nil
		}, store.Create()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkCommitParallelDocs measures commits from one client with 16
// goroutines, each on its own document: etcd batches concurrent
// transactions into one raft fsync.
func BenchmarkCommitParallelDocs(b *testing.B) {
	s := open(b, etcd.Options{})
	ctx := context.Background()
	var seq atomic.Int64
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		key := fmt.Sprintf("bench/doc-%d.json", seq.Add(1))
		n := 0
		for pb.Next() {
			n++
			v := n
			if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
				return store.Change{Value: fmt.Appendf(nil, `{"n":%d}`, v), Actor: "bench"}, nil
			}, store.Create()); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}
