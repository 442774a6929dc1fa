package etcd_test

import (
	"context"
	"encoding/json"
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

// BenchmarkCommitGroup measures commits from one client with 64 goroutines
// on one document: concurrent Updates are group-committed, many records
// per etcd transaction.
func BenchmarkCommitGroup(b *testing.B) {
	s := open(b, etcd.Options{})
	ctx := context.Background()
	const key = "bench/group.json"
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{}`)}, nil
	}, store.Create()); err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	b.SetParallelism(32) // 64 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		id := seq.Add(1)
		n := 0
		for pb.Next() {
			n++
			v := n
			if _, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
				m := map[string]any{}
				if err := json.Unmarshal(cur.Value, &m); err != nil {
					return store.Change{}, err
				}
				m[fmt.Sprint("w", id)] = v
				b, err := json.Marshal(m)
				return store.Change{Value: b, Actor: "bench"}, err
			}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}
