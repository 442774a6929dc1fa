package etcd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/file"
)

// BenchmarkBackends measures durable commits on every backend in one run,
// so their ratio holds on a noisy machine: the file store as the CLI uses
// it (one commit per lock), the file store in daemon mode (group commit),
// and etcd (group commit into one transaction), from 1 and 64 writers on
// one document, each writer changing its own field.
//
//	go test -run XXX -bench Backends -benchtime 3s ./store/etcd/
func BenchmarkBackends(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"file", func(b *testing.B) store.Store { return openFile(b, file.Options{}) }},
		{"file-daemon", func(b *testing.B) store.Store { return openFile(b, file.Options{Hold: true}) }},
		{"etcd", func(b *testing.B) store.Store { return open(b, etcd.Options{}) }},
	}
	for _, be := range backends {
		for _, writers := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/writers=%d", be.name, writers), func(b *testing.B) {
				commits(b, be.open(b), writers)
			})
		}
	}
}

func openFile(b *testing.B, opts file.Options) store.Store {
	s, err := file.Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func commits(b *testing.B, s store.Store, writers int) {
	ctx := context.Background()
	const key = "bench/backends.json"
	if _, err := s.Update(ctx, key, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{}`)}, nil
	}, store.Create()); err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	b.SetParallelism(max(1, writers/runtime.GOMAXPROCS(0)))
	if writers == 1 {
		b.SetParallelism(1)
	}
	b.ResetTimer()
	run := func(next func() bool) {
		id := seq.Add(1)
		n := 0
		for next() {
			n++
			v := n
			if _, err := s.Update(ctx, key, func(cur store.Document) (store.Change, error) {
				return store.Change{Value: setField(cur.Value, fmt.Sprintf("w%d", id), v), Actor: "bench"}, nil
			}); err != nil {
				b.Error(err)
				return
			}
		}
	}
	if writers == 1 {
		run(func() bool { return b.Loop() })
	} else {
		b.RunParallel(func(pb *testing.PB) { run(pb.Next) })
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// setField returns obj (a flat JSON object of numbers) with field set to v,
// (64 small fields at most: the benchmark measures the stores, not JSON).
func setField(obj []byte, field string, v int) []byte {
	m := map[string]int{}
	if err := json.Unmarshal(obj, &m); err != nil {
		panic(err)
	}
	m[field] = v
	out, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return out
}
