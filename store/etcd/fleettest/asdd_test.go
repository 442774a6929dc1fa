package fleettest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
)

// ASDD operations run inside the daemons, so each daemon group-commits the
// concurrent ones on etcd. 64 clients record quick-fix slices through 3
// daemons, one daemon is SIGKILLed under load and its clients fail over:
// every acknowledged slice is in the manifest and the manifest verifies.
func TestFleetASDD(t *testing.T) {
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
	// init is a human decision: it needs the admin token.
	admin, err := client.New(daemons[0].addr, client.Options{Token: "fleet-admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Op(ctx, "init", asdd.Init{Sprint: "fleet"}); err != nil {
		t.Fatal(err)
	}
	const nClients = 64
	perClient := testenv.Rounds(2, 4)
	if testing.Short() {
		perClient = 2
	}
	var (
		mu        sync.Mutex
		acked     []string
		n         atomic.Int64
		failovers atomic.Int64
		killOnce  sync.Once
		wg        sync.WaitGroup
	)
	killAt := int64(nClients * perClient / 3)
	start := time.Now()
	for i := range nClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := i % daemonCount
			for k := range perClient {
				id := fmt.Sprintf("Q-c%d-%d", i, k)
				retried := false
				for {
					_, err := clients[d].Op(ctx, "quick", asdd.Quick{ID: id, Description: "fix " + id})
					if err == nil || (retried && reason.CodeOf(err) == reason.InvalidInput && strings.Contains(err.Error(), "already exists")) {
						// Committed (by this attempt, or by the one the
						// killed daemon did not answer).
						break
					}
					if reason.CodeOf(err) != "" || retried && failovers.Load() > nClients*daemonCount {
						t.Errorf("client %d via daemon %d: %v", i, d, err)
						return
					}
					failovers.Add(1)
					retried = true
					d = (d + 1) % daemonCount
				}
				mu.Lock()
				acked = append(acked, id)
				mu.Unlock()
				if n.Add(1) == killAt {
					killOnce.Do(func() { _ = daemons[2].cmd.Process.Signal(syscall.SIGKILL) })
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		return
	}
	t.Logf("%d ASDD operations from %d clients through %d daemons on etcd in %v (%.0f/s), %d fail-overs after the SIGKILL",
		n.Load(), nClients, daemonCount, elapsed.Round(time.Millisecond), float64(n.Load())/elapsed.Seconds(), failovers.Load())

	direct := etcd.New(etcdtest.Client(t), etcd.Options{Prefix: prefix})
	doc, err := direct.Get(ctx, asdd.Key)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Slices []struct {
			ID string `json:"slice_id"`
		} `json:"slices"`
	}
	if err := json.Unmarshal(doc.Value, &m); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range m.Slices {
		have[s.ID] = true
	}
	for _, id := range acked {
		if !have[id] {
			t.Errorf("acknowledged slice %s is lost", id)
		}
	}
	if len(m.Slices) != len(acked) {
		t.Errorf("%d slices in the manifest, %d acknowledged", len(m.Slices), len(acked))
	}
	if err := direct.Verify(ctx, asdd.Key); err != nil {
		t.Fatal(err)
	}
	recs, err := direct.History(ctx, asdd.Key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("manifest at revision %d, %d bytes", recs[len(recs)-1].Rev, len(doc.Value))
	// The surviving daemons stop cleanly on SIGTERM.
	daemons[0].stop(t)
	daemons[1].stop(t)
}
