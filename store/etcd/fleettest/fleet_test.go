package fleettest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
	"github.com/custodian-dev/custodian/wire"
)

func TestMain(m *testing.M) {
	code := etcdtest.Main(m)
	testbin.Remove()
	os.Exit(code)
}

// Three daemons on one etcd, 64 clients spread across them logging changes
// to eight dev cycles (the cycle's operation, its rules run in the daemon);
// one daemon is killed with SIGKILL under load and its clients fail over.
// Every acknowledged change is in the final documents, every document
// verifies, and the watchers on the surviving daemons saw the same commits
// in the same order (the killed daemon's watcher a prefix of it).
func TestFleet(t *testing.T) {
	srv := etcdtest.Shared(t)
	prefix := etcdtest.Prefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	daemons := make([]*proc, daemonCount)
	clients := make([]*client.Client, daemonCount)
	for i := range daemons {
		daemons[i] = startDaemon(t, srv, prefix)
		c, err := client.New(daemons[i].addr, client.Options{Token: fleetToken})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	direct := etcd.New(etcdtest.Client(t), etcd.Options{Prefix: prefix})
	const docs = 8
	id := func(j int) string { return fmt.Sprintf("cycle-v1-20261125T120000-fleet%d", j) }
	key := func(j int) string { return cycle.Key(id(j)) }
	for j := range docs {
		c := clients[j%daemonCount]
		args, _ := json.Marshal(wire.CycleCreate{Task: "fleet"})
		if _, err := c.Cycle(ctx, wire.CycleRequest{ID: id(j), Op: "create", Args: args, Actor: "setup"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Cycle(ctx, wire.CycleRequest{ID: id(j), Op: "iterate", Args: json.RawMessage(`{}`), Actor: "setup"}); err != nil {
			t.Fatal(err)
		}
	}

	// One watcher of document 0 through each daemon.
	type seen struct {
		mu   sync.Mutex
		seq  []string
		last uint64
	}
	watched := make([]*seen, daemonCount)
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var wwg sync.WaitGroup
	for i, c := range clients {
		watched[i] = &seen{}
		wwg.Add(1)
		go func() {
			defer wwg.Done()
			for cm, err := range c.Watch(wctx, key(0), 0) {
				if err != nil {
					return
				}
				w := watched[i]
				w.mu.Lock()
				w.seq = append(w.seq, fmt.Sprintf("%d:%s", cm.Rev, cm.Hash))
				w.last = cm.Rev
				w.mu.Unlock()
			}
		}()
	}

	perClient := testenv.Rounds(6, 12)
	if testing.Short() {
		perClient = 6
	}
	const nClients = 64
	killAt := int64(nClients * perClient / 3)
	var (
		acked    sync.Map // doc index -> *sync.Map of field -> true
		nAcked   atomic.Int64
		failover atomic.Int64
		killOnce sync.Once
		wg       sync.WaitGroup
	)
	for j := range docs {
		acked.Store(j, &sync.Map{})
	}
	start := time.Now()
	for i := range nClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, j := i%daemonCount, i%docs
			for n := range perClient {
				field := fmt.Sprintf("c%d-%d", i, n)
				for attempt := 0; ; attempt++ {
					req, err := wire.CycleRequestOf(id(j), cycle.AppendChange{File: "src/" + field + ".go", Action: "create", Agent: "cd"}, nil, fmt.Sprint("client-", i))
					if err != nil {
						t.Error(err)
						return
					}
					_, err = clients[d].Cycle(ctx, req)
					if err == nil {
						break
					}
					if reason.CodeOf(err) != "" || attempt >= daemonCount {
						t.Errorf("client %d via daemon %d: %v", i, d, err)
						return
					}
					// The daemon is gone: the same change through the next
					// one (logged twice at worst, never lost).
					failover.Add(1)
					d = (d + 1) % daemonCount
				}
				a, _ := acked.Load(j)
				a.(*sync.Map).Store(field, true)
				if nAcked.Add(1) == killAt {
					killOnce.Do(func() {
						if err := daemons[2].cmd.Process.Signal(syscall.SIGKILL); err != nil {
							t.Error(err)
						}
					})
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		return
	}
	t.Logf("%d acknowledged commits from %d clients through %d daemons in %v (%.0f/s), %d fail-overs after the SIGKILL",
		nAcked.Load(), nClients, daemonCount, elapsed.Round(time.Millisecond), float64(nAcked.Load())/elapsed.Seconds(), failover.Load())

	for j := range docs {
		doc, err := direct.Get(ctx, key(j))
		if err != nil {
			t.Fatal(err)
		}
		st, err := cycle.Decode(doc.Value)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		if st.Changes != nil {
			for _, c := range st.Changes.Changes {
				m[strings.TrimSuffix(strings.TrimPrefix(c.File, "src/"), ".go")] = true
			}
		}
		a, _ := acked.Load(j)
		lost := 0
		a.(*sync.Map).Range(func(f, _ any) bool {
			if !m[f.(string)] {
				lost++
			}
			return true
		})
		if lost > 0 {
			t.Errorf("%s: %d acknowledged updates lost", key(j), lost)
		}
		if err := direct.Verify(ctx, key(j)); err != nil {
			t.Error(err)
		}
	}

	final, err := direct.Get(ctx, key(0))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		done := true
		for i := range 2 {
			watched[i].mu.Lock()
			done = done && watched[i].last >= final.Revision
			watched[i].mu.Unlock()
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watchers on the surviving daemons did not reach revision %d", final.Revision)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopWatch()
	wwg.Wait()
	want := strings.Join(watched[0].seq, ",")
	if uint64(len(watched[0].seq)) != final.Revision {
		t.Fatalf("watcher 0 saw %d commits, want %d", len(watched[0].seq), final.Revision)
	}
	if got := strings.Join(watched[1].seq, ","); got != want {
		t.Fatalf("the two surviving daemons' watchers saw different sequences")
	}
	if got := strings.Join(watched[2].seq, ","); !strings.HasPrefix(want, got) {
		t.Fatalf("the killed daemon's watcher saw commits out of order")
	}
	t.Logf("watchers saw %d, %d and (killed daemon) %d commits of %s", len(watched[0].seq), len(watched[1].seq), len(watched[2].seq), key(0))
	// The surviving daemons stop cleanly on SIGTERM.
	daemons[0].stop(t)
	daemons[1].stop(t)
}
