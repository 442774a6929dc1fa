package fleettest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
)

// BenchmarkMirrorLag measures how long a commit made through one daemon
// takes to be visible in another daemon's mirror file (two real
// `custodian serve --store etcd://…` processes in two project directories,
// one embedded etcd, loopback), with commits paced at 1,000 per second
// through the first daemon (32 concurrent clients), to one document or
// spread over 8. The lag of a commit is from its acknowledgment to the
// first moment the second daemon's mirror file holds that revision or a
// later one (seen through inotify in the benchmark process); a commit the
// second daemon sees before the first acknowledges it counts as 0.
//
//	go test -run XXX -bench MirrorLag -benchtime 5000x ./store/etcd/fleettest
func BenchmarkMirrorLag(b *testing.B) {
	srv := etcdtest.Shared(b)
	for _, docs := range []int{1, 8} {
		b.Run(fmt.Sprintf("docs=%d", docs), func(b *testing.B) {
			prefix := etcdtest.Prefix(b)
			a := startDaemon(b, srv, prefix)
			d := startDaemon(b, srv, prefix)
			c, err := client.New(a.addr, client.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			keys := make([]string, docs)
			for i := range keys {
				keys[i] = fmt.Sprintf("bench/m%d.json", i)
				if _, err := c.Write(ctx, keys[i], store.Change{Value: json.RawMessage(`{"n":-1}`), Actor: "bench"}, true); err != nil {
					b.Fatal(err)
				}
			}
			obs := newObserver(b, filepath.Join(d.dir, "bench"))
			for _, k := range keys {
				obs.waitFor(b, k, -1)
			}
			type ack struct {
				key string
				rev uint64
				n   int
				at  time.Time
			}
			var (
				mu   sync.Mutex
				acks []ack
				wg   sync.WaitGroup
			)
			work := make(chan int, 1024)
			for range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := range work {
						k := keys[n%docs]
						res, err := c.Write(ctx, k, store.Change{Value: fmt.Appendf(nil, `{"n":%d}`, n), Actor: "bench"}, true)
						at := time.Now()
						if err != nil {
							b.Error(err)
							continue
						}
						mu.Lock()
						acks = append(acks, ack{k, res.Revision, n, at})
						mu.Unlock()
					}
				}()
			}
			b.ResetTimer()
			start := time.Now()
			for n := range b.N {
				if wait := time.Until(start.Add(time.Duration(n) * time.Millisecond)); wait > 0 {
					time.Sleep(wait)
				}
				work <- n
			}
			close(work)
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			// Every commit visible on the second machine.
			last := map[string]ack{}
			for _, a := range acks {
				if a.rev > last[a.key].rev {
					last[a.key] = a
				}
			}
			for k, a := range last {
				obs.waitFor(b, k, a.n)
			}
			obs.close()
			// n -> revision, per key, to read revisions off observations.
			revOf := map[int]uint64{}
			for _, a := range acks {
				revOf[a.n] = a.rev
			}
			lags := make([]float64, 0, len(acks))
			for _, a := range acks {
				seen, ok := obs.firstAtLeast(a.key, a.rev, revOf)
				if !ok {
					b.Fatalf("%s revision %d never seen in the mirror", a.key, a.rev)
				}
				lags = append(lags, max(0, seen.Sub(a.at).Seconds()*1000))
			}
			slices.Sort(lags)
			pct := func(p float64) float64 { return lags[min(len(lags)-1, int(p*float64(len(lags))))] }
			b.ReportMetric(float64(len(acks))/elapsed.Seconds(), "commits/s")
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(lags[len(lags)-1], "max-ms")
			b.ReportMetric(0, "ns/op")
			a.stop(b)
			d.stop(b)
		})
	}
}

// observer records, from inotify events, when each mirror file under dir
// held which value.
type observer struct {
	dir  string
	fw   *fsnotify.Watcher
	mu   sync.Mutex
	seen map[string][]sighting // key -> sightings in time order
	done chan struct{}
}

type sighting struct {
	n  int
	at time.Time
}

func newObserver(b *testing.B, dir string) *observer {
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(dir); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("no mirror directory %s", dir)
		}
		time.Sleep(time.Millisecond)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		b.Fatal(err)
	}
	if err := fw.Add(dir); err != nil {
		b.Fatal(err)
	}
	o := &observer{dir: dir, fw: fw, seen: map[string][]sighting{}, done: make(chan struct{})}
	go func() {
		defer close(o.done)
		for ev := range fw.Events {
			base := filepath.Base(ev.Name)
			if !strings.HasSuffix(base, ".json") || !ev.Has(fsnotify.Create) && !ev.Has(fsnotify.Write) {
				continue
			}
			o.look("bench/" + base)
		}
	}()
	for _, e := range must(os.ReadDir(dir)) {
		if strings.HasSuffix(e.Name(), ".json") {
			o.look("bench/" + e.Name())
		}
	}
	return o
}

func must[T any](v T, _ error) T { return v }

func (o *observer) look(key string) {
	at := time.Now()
	data, err := os.ReadFile(filepath.Join(o.dir, filepath.Base(key)))
	if err != nil {
		return
	}
	var v struct{ N int }
	if json.Unmarshal(data, &v) != nil {
		return
	}
	o.mu.Lock()
	o.seen[key] = append(o.seen[key], sighting{v.N, at})
	o.mu.Unlock()
}

// waitFor waits until key's mirror was seen holding value n.
func (o *observer) waitFor(b *testing.B, key string, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		o.mu.Lock()
		ok := slices.ContainsFunc(o.seen[key], func(s sighting) bool { return s.n == n })
		o.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: value %d never seen in the mirror", key, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// firstAtLeast is when key's mirror first held revision rev or later.
func (o *observer) firstAtLeast(key string, rev uint64, revOf map[int]uint64) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.seen[key] {
		if r, ok := revOf[s.n]; ok && r >= rev {
			return s.at, true
		}
	}
	return time.Time{}, false
}

func (o *observer) close() {
	o.fw.Close()
	<-o.done
}
