package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// The manifest Local keeps between operations (committed as patches the
// store applies to its own copy) is always the store's value: after
// concurrent operations, after a commit that bypassed it (a human's
// write, another service on the same store), in the daemon's Hold mode and
// in direct mode.
func TestHeldManifestIsTheStoresValue(t *testing.T) {
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			root := t.TempDir()
			st, err := file.Open(root, file.Options{Now: now, Hold: hold, SnapshotInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ctx := context.Background()
			l := app.NewLocal(app.Options{Store: st, Root: root, Now: now, Logger: slog.New(slog.DiscardHandler)})
			other := app.NewLocal(app.Options{Store: st, Root: root, Now: now, Logger: slog.New(slog.DiscardHandler)})
			same := func(when string) {
				t.Helper()
				m, rev, err := l.Latest(ctx)
				if err != nil {
					t.Fatal(err)
				}
				doc, err := st.Get(ctx, asdd.Key)
				if err != nil {
					t.Fatal(err)
				}
				mine, _ := asdd.Marshal(m)
				theirs, err := doc.Bytes()
				if err != nil {
					t.Fatal(err)
				}
				held, _ := store.SumOf(mine)
				stored, _ := store.SumOf(theirs)
				if rev != doc.Revision || held != stored {
					t.Fatalf("%s: held revision %d (%s), store at %d (%s):\n%s\n%s", when, rev, held, doc.Revision, stored, mine, theirs)
				}
			}
			must(t)(l.ASDD(ctx, asdd.Init{Sprint: "S1"}))
			for i := range 70 { // more than one chunk of encodings
				must(t)(l.ASDD(ctx, asdd.AddSlice{ID: fmt.Sprintf("SLICE-%03d", i), Name: "<slice> & é"}))
			}
			same("after adding slices")
			agents := []string{"spec", "design", "qa", "implementation"}
			var wg sync.WaitGroup
			for w, a := range agents {
				wg.Go(func() {
					for i := range 15 {
						svc := l
						if i%5 == 4 {
							svc = other
						}
						n := i
						if _, err := svc.ASDD(ctx, asdd.Beat{Agent: a, Status: asdd.HeartbeatActive, Slice: fmt.Sprintf("SLICE-%03d", (w*17+i)%70), Completed: &n}); err != nil {
							t.Error(err)
						}
						if _, err := svc.ASDD(ctx, asdd.LockSlice{Slice: fmt.Sprintf("SLICE-%03d", (w*17+i)%70), Holder: a, TTL: time.Minute}); err != nil && i == 0 {
							t.Log(err)
						}
					}
				})
			}
			wg.Wait()
			same("after concurrent operations")
			// A write that bypasses the application layer: the next
			// operation starts from it, not from the held manifest.
			if _, err := st.Update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
				raw, err := cur.Bytes()
				if err != nil {
					return store.Change{}, err
				}
				var m map[string]any
				if err := json.Unmarshal(raw, &m); err != nil {
					return store.Change{}, err
				}
				m["slices"].([]any)[3].(map[string]any)["name"] = "renamed by hand"
				b, _ := json.Marshal(m)
				return store.Change{Value: b, Actor: "human"}, nil
			}); err != nil {
				t.Fatal(err)
			}
			must(t)(l.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatIdle}))
			same("after a write that bypassed it")
			m, err := l.Manifest(ctx)
			if err != nil || m.Slice("SLICE-003").Name != "renamed by hand" {
				t.Fatalf("the hand edit was lost: %v", err)
			}
			must(t)(other.ASDD(ctx, asdd.Beat{Agent: "qa", Status: asdd.HeartbeatIdle}))
			same("after another service's commit")
			if err := st.Verify(ctx, asdd.Key); err != nil {
				t.Fatal(err)
			}
		})
	}
}
