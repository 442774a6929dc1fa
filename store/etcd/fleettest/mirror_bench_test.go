package fleettest

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
	"github.com/custodian-dev/custodian/wire"
)

// BenchmarkMirrorLag measures how long a commit made through one daemon
// takes to be visible in another daemon's mirror file (two real
// `custodian serve --store etcd://…` processes in two project directories,
// one embedded etcd, loopback), with operations paced at 1,000 per second
// (32 concurrent clients): agent-state updates through the first daemon
// (one document, .agents/tmp/state.json), or commits of 8 documents in
// .workflow/.cycle/ through an etcd store in the benchmark process (what a
// daemon on another machine does; the daemon's own cycle rules sync
// .progress/ files and do not reach 1,000/s here). The lag of a commit is from
// its acknowledgment to the first moment the second daemon's mirror file
// holds that revision or a later one (seen through inotify in the
// benchmark process, the revision read with mirror.Read); a commit the
// second daemon shows before the first acknowledges it counts as 0.
//
//	go test -run XXX -bench MirrorLag -benchtime 5000x ./store/etcd/fleettest
func BenchmarkMirrorLag(b *testing.B) {
	srv := etcdtest.Shared(b)
	for _, docs := range []int{1, 8} {
		b.Run(fmt.Sprintf("docs=%d", docs), func(b *testing.B) {
			prefix := etcdtest.Prefix(b)
			a := startDaemon(b, srv, prefix)
			d := startDaemon(b, srv, prefix)
			c, err := client.New(a.addr, client.Options{Token: "fleet-admin"}) // changes over TCP need a token
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			// commit makes commit n on document i; it returns the key
			// and the revision committed.
			var commit func(i, n int) (string, uint64, error)
			var keys []string
			if docs == 1 {
				if _, err := c.State(ctx, wire.StateRequest{Op: "init", Task: "bench"}); err != nil {
					b.Fatal(err)
				}
				keys = []string{".agents/tmp/state.json"}
				commit = func(_, n int) (string, uint64, error) {
					r, err := c.State(ctx, wire.StateRequest{Op: "update", Patch: fmt.Appendf(nil, `{"n":%d}`, n), Actor: "bench"})
					if err != nil {
						return "", 0, err
					}
					return keys[0], r.Revision, nil
				}
			} else {
				// The daemons' rules for cycle files cost more than the
				// mirror (A syncs .progress/ files): 8 documents are
				// committed through an etcd store in this process, as a
				// daemon on another machine commits.
				es := etcd.New(etcdtest.Client(b), etcd.Options{Prefix: prefix})
				defer es.Close()
				for i := range docs {
					keys = append(keys, cycle.Key(fmt.Sprintf("cycle-v1-20261125T000000-bench%d", i)))
				}
				commit = func(i, n int) (string, uint64, error) {
					r, err := es.Update(ctx, keys[i], func(store.Document) (store.Change, error) {
						return store.Change{Value: fmt.Appendf(nil, `{"n":%d}`, n), Actor: "bench"}, nil
					}, store.Create())
					return keys[i], r.Revision, err
				}
				for i := range docs {
					if _, _, err := commit(i, -1); err != nil {
						b.Fatal(err)
					}
				}
			}
			obs := newObserver(b, d.dir, keys)
			for _, k := range keys {
				obs.waitFor(b, k, 1)
			}
			type ack struct {
				key string
				rev uint64
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
						key, rev, err := commit(n%docs, n)
						at := time.Now()
						if err != nil {
							b.Error(err)
							continue
						}
						mu.Lock()
						acks = append(acks, ack{key, rev, at})
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
			if len(acks) == 0 {
				b.Fatal("no commit acknowledged")
			}
			last := map[string]uint64{}
			for _, a := range acks {
				last[a.key] = max(last[a.key], a.rev)
			}
			for k, rev := range last {
				obs.waitFor(b, k, rev)
			}
			obs.close()
			lags := make([]float64, 0, len(acks))
			for _, a := range acks {
				seen, ok := obs.firstAtLeast(a.key, a.rev)
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

// observer records, from inotify events, when each mirror file held which
// revision (read with mirror.Read: the bytes' hash against the state file).
type observer struct {
	root string
	fw   *fsnotify.Watcher
	keys map[string]string // absolute path -> key
	mu   sync.Mutex
	seen map[string][]sighting // key -> sightings in time order
	done chan struct{}
}

type sighting struct {
	rev uint64
	at  time.Time
}

func newObserver(b *testing.B, root string, keys []string) *observer {
	o := &observer{root: root, keys: map[string]string{}, seen: map[string][]sighting{}, done: make(chan struct{})}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		b.Fatal(err)
	}
	o.fw = fw
	for _, k := range keys {
		abs := filepath.Join(root, filepath.FromSlash(k))
		o.keys[abs] = k
		dir := filepath.Dir(abs)
		for deadline := time.Now().Add(10 * time.Second); ; {
			if err := fw.Add(dir); err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("no mirror directory %s", dir)
			}
			time.Sleep(time.Millisecond)
		}
	}
	go func() {
		defer close(o.done)
		for ev := range fw.Events {
			if k, ok := o.keys[ev.Name]; ok && (ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write)) {
				o.look(k)
			}
		}
	}()
	for _, k := range keys {
		o.look(k)
	}
	return o
}

func (o *observer) look(key string) {
	at := time.Now()
	s, err := mirror.Read(o.root, key)
	if err != nil || s.State != "ok" {
		return
	}
	o.mu.Lock()
	o.seen[key] = append(o.seen[key], sighting{s.Rev, at})
	o.mu.Unlock()
}

// waitFor waits until key's mirror was seen holding revision rev or later.
func (o *observer) waitFor(b *testing.B, key string, rev uint64) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := o.firstAtLeast(key, rev); ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: revision %d never seen in the mirror", key, rev)
		}
		time.Sleep(time.Millisecond)
	}
}

// firstAtLeast is when key's mirror first held revision rev or later.
func (o *observer) firstAtLeast(key string, rev uint64) (time.Time, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.seen[key] {
		if s.rev >= rev {
			return s.at, true
		}
	}
	return time.Time{}, false
}

func (o *observer) close() {
	o.fw.Close()
	<-o.done
}
