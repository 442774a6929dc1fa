package etcd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/wire"
)

// TestRevisionMemberIsTheJournalRevisionOnEtcd: on etcd too, whatever the
// sequence of the rules' operations, rollbacks and raw writes with a stale
// revision member, the manifest's revision member equals the revision of
// the commit that wrote it, now and at every past revision.
func TestRevisionMemberIsTheJournalRevisionOnEtcd(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		st := open(t, etcd.Options{})
		svc := app.NewLocal(app.Options{Store: st, Root: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
		if _, err := svc.ASDD(ctx, asdd.Init{Sprint: "S1"}); err != nil {
			rt.Fatal(err)
		}
		slices := 0
		for i := range rapid.IntRange(1, 10).Draw(rt, "steps") {
			switch op := rapid.SampledFrom([]string{"heartbeat", "slice", "rollback", "raw write"}).Draw(rt, fmt.Sprint("op", i)); op {
			case "heartbeat":
				if _, err := svc.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive, Remaining: &i}); err != nil {
					rt.Fatal(err)
				}
			case "slice":
				slices++
				if _, err := svc.ASDD(ctx, asdd.AddSlice{ID: fmt.Sprintf("SLICE-%03d", slices), Name: "s", Type: asdd.TypeFeature, GovernanceMode: "MANUAL"}); err != nil {
					rt.Fatal(err)
				}
			case "rollback":
				doc, err := st.Get(ctx, asdd.Key)
				if err != nil {
					rt.Fatal(err)
				}
				to := rapid.Uint64Range(1, doc.Revision).Draw(rt, "to")
				if _, err := svc.Rollback(ctx, wire.RollbackRequest{Key: asdd.Key, To: to, Actor: "tl", Reason: "undo"}); err != nil {
					rt.Fatal(err)
				}
			case "raw write":
				doc, err := st.Get(ctx, asdd.Key)
				if err != nil {
					rt.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(doc.Value, &m); err != nil {
					rt.Fatal(err)
				}
				m["revision"] = rapid.IntRange(0, 99).Draw(rt, "written revision")
				m["project_context"].(map[string]any)["current_sprint"] = fmt.Sprint("raw ", i)
				v, _ := json.Marshal(m)
				if _, err := svc.Put(ctx, app.PutDocument{Key: asdd.Key, PutRequest: wire.PutRequest{Value: v, Actor: "tl", Reason: "raw"}}); err != nil {
					rt.Fatal(err)
				}
			}
		}
		doc, err := st.Get(ctx, asdd.Key)
		if err != nil {
			rt.Fatal(err)
		}
		for r := uint64(1); r <= doc.Revision; r++ {
			at, err := st.GetAt(ctx, asdd.Key, r)
			if err != nil {
				rt.Fatal(err)
			}
			var m struct{ Revision uint64 }
			if err := json.Unmarshal(at.Value, &m); err != nil {
				rt.Fatal(err)
			}
			if m.Revision != r {
				rt.Fatalf("revision %d's value says revision %d", r, m.Revision)
			}
		}
		if err := st.Verify(ctx, asdd.Key); err != nil {
			rt.Fatal(err)
		}
	})
}
