package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"testing"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/wire"
)

// foreignManifest is seed 000's example manifest as the ASDD agents write
// it: no journal, no revision member.
const foreignManifest = `{
"project_context": {"current_sprint": "2026-Q2-S3", "product_goals": ["..."], "global_confidence_score": 0.87},
"slices": [{"slice_id": "SLICE-001", "name": "User Authentication Flow", "type": "FEATURE", "status": "DISCOVERY",
  "governance_mode": "MANUAL", "phase_data": {}, "confidence_chain": [], "blockers": [], "dissent_notices": [], "reasoning_traces": []}],
"agent_heartbeats": {"discovery_agent": {"last_execution": "2026-04-20T14:32:00Z", "status": "IDLE"}},
"x_plugin": {"kept": true}
}
`

// revisionMember returns the top-level revision member of a value (-1:
// none).
func revisionMember(t interface{ Fatalf(string, ...any) }, v []byte) int64 {
	var m struct {
		Revision *int64 `json:"revision"`
	}
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatalf("value does not parse: %v\n%s", err, v)
	}
	if m.Revision == nil {
		return -1
	}
	return *m.Revision
}

// TestRevisionMemberIsTheJournalRevisionAfterAnyOperation: whatever the
// sequence of operations (the rules' operations, rollback, a human's raw
// write with a stale revision, direct edits adopted, the adoption of a
// manifest another tool wrote, a repair of a lost journal), the manifest
// file's revision member equals the journal revision of the commit that
// wrote it, and so does every past revision's value; on the file store
// without a daemon (a store opened per operation, as the CLI does) and in
// Hold mode (the daemon's).
func TestRevisionMemberIsTheJournalRevisionAfterAnyOperation(t *testing.T) {
	for _, hold := range []bool{false, true} {
		name := "direct"
		if hold {
			name = "hold"
		}
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { revisionTruth(t, rt, hold) })
		})
	}
}

func revisionTruth(t *testing.T, rt *rapid.T, hold bool) {
	root, err := os.MkdirTemp(t.TempDir(), "p")
	if err != nil {
		rt.Fatal(err)
	}
	ctx := context.Background()
	path := filepath.Join(root, filepath.FromSlash(asdd.Key))
	edits := make(chan file.DirectEdit, 16)
	opts := file.Options{
		Now: time.Now, Logger: slog.New(slog.DiscardHandler),
		DirectEdits: file.DirectEditAdopt, Validate: app.DocumentRules.Validate,
		OnDirectEdit: func(e file.DirectEdit) { edits <- e },
	}
	if hold {
		opts.Hold, opts.SnapshotInterval = true, time.Millisecond
		opts.SnapshotOnCommit = func(string) bool { return true }
	}
	var st *file.Store
	var svc *app.Local
	open := func() {
		if st != nil && hold {
			return
		}
		if st != nil {
			st.Close()
		}
		if st, err = file.Open(root, opts); err != nil {
			rt.Fatal(err)
		}
		svc = app.NewLocal(app.Options{Store: st, Root: root, Logger: slog.New(slog.DiscardHandler)})
	}
	defer func() {
		if st != nil {
			st.Close()
		}
	}()
	if rapid.Bool().Draw(rt, "foreign") {
		raw := foreignManifest
		if rapid.Bool().Draw(rt, "with revision member") {
			raw = `{"revision": 0,` + raw[1:]
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			rt.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
			rt.Fatal(err)
		}
	} else {
		open()
		if _, err := svc.ASDD(ctx, asdd.Init{Sprint: "S1"}); err != nil {
			rt.Fatal(err)
		}
	}
	latest := func() store.Document {
		open()
		doc, err := st.Get(ctx, asdd.Key)
		if err != nil {
			rt.Fatal(err)
		}
		return doc
	}
	// check: the file's revision member is the latest revision once
	// something was committed.
	check := func(op string) {
		doc := latest()
		if doc.Revision == 0 {
			return // not adopted yet
		}
		b, err := os.ReadFile(path)
		if err != nil {
			rt.Fatal(err)
		}
		if got := revisionMember(rt, b); got != int64(doc.Revision) {
			rt.Fatalf("after %s: the file says revision %d, the journal is at %d", op, got, doc.Revision)
		}
	}
	slices := 1
	steps := rapid.IntRange(1, 12).Draw(rt, "steps")
	for i := range steps {
		op := rapid.SampledFrom([]string{"heartbeat", "slice", "rollback", "raw write", "direct edit", "repair"}).Draw(rt, fmt.Sprint("op", i))
		open()
		switch op {
		case "heartbeat":
			agent := rapid.SampledFrom([]string{"spec", "design", "discovery"}).Draw(rt, "agent")
			if _, err := svc.ASDD(ctx, asdd.Beat{Agent: agent, Status: asdd.HeartbeatActive}); err != nil {
				rt.Fatal(err)
			}
		case "slice":
			slices++
			if _, err := svc.ASDD(ctx, asdd.AddSlice{ID: fmt.Sprintf("SLICE-%03d", slices), Name: "s", Type: asdd.TypeFeature, GovernanceMode: "MANUAL"}); err != nil {
				rt.Fatal(err)
			}
		case "rollback":
			doc := latest()
			if doc.Revision < 1 {
				continue
			}
			to := rapid.Uint64Range(1, doc.Revision).Draw(rt, "to")
			if _, err := svc.Rollback(ctx, wire.RollbackRequest{Key: asdd.Key, To: to, Actor: "tl", Reason: "undo"}); err != nil {
				rt.Fatal(err)
			}
		case "raw write":
			// A human's raw write of the value as read, its revision
			// member whatever the writer had.
			doc := latest()
			v := stampedAs(rt, doc.Value, rapid.Int64Range(0, 99).Draw(rt, "written revision"), "raw")
			if _, err := svc.Put(ctx, app.PutDocument{Key: asdd.Key, PutRequest: wire.PutRequest{Value: v, Actor: "tl", Reason: "raw"}}); err != nil {
				rt.Fatal(err)
			}
		case "direct edit":
			// A hand edit of a member the rules do not own; the editor
			// leaves the revision member as it was, or writes another.
			if hold && latest().Revision == 0 {
				continue // the daemon adopts edits of documents it keeps
			}
			b, err := os.ReadFile(path)
			if err != nil {
				rt.Fatal(err)
			}
			rev := revisionMember(rt, b)
			if rapid.Bool().Draw(rt, "editor changes the revision") {
				rev = rapid.Int64Range(0, 99).Draw(rt, "edited revision")
			}
			v := stampedAs(rt, b, rev, fmt.Sprint("edit ", i))
			// Written whole and renamed over the file, as an editor saves.
			if err := os.WriteFile(path+".edit", v, 0o644); err != nil {
				rt.Fatal(err)
			}
			if err := os.Rename(path+".edit", path); err != nil {
				rt.Fatal(err)
			}
			if hold {
				select {
				case e := <-edits:
					// An edit of a snapshot the daemon had not rewritten
					// yet is a stale one: kept aside as a CONFLICT where it
					// overlaps a later commit (a three-way merge).
					if !e.Adopted && e.Code != "CONFLICT" {
						rt.Fatalf("edit neither adopted nor a conflict: %+v", e)
					}
				case <-time.After(30 * time.Second):
					rt.Fatal("the daemon did not settle the edit")
				}
			}
		case "repair":
			// The journal is lost; a person keeps the snapshot.
			if hold || latest().Revision == 0 {
				continue
			}
			st.Close()
			st = nil
			dir := filepath.Dir(path)
			for _, f := range []string{"journal.ndjson", ".head", ".checkpoint", ".valid"} {
				os.Remove(filepath.Join(dir, f))
			}
			if st, err = file.Open(root, opts); err != nil {
				rt.Fatal(err)
			}
			svc = app.NewLocal(app.Options{Store: st, Root: root, Logger: slog.New(slog.DiscardHandler)})
			if _, err := st.Repair(ctx, asdd.Key, file.KeepSnapshot, "tl", "journal lost"); err != nil {
				rt.Fatal(err)
			}
		}
		check(op)
	}
	// Every past revision's value names its own revision.
	doc := latest()
	for r := uint64(1); r <= doc.Revision; r++ {
		at, err := st.GetAt(ctx, asdd.Key, r)
		if err != nil {
			rt.Fatal(err)
		}
		if got := revisionMember(rt, at.Value); got != int64(r) {
			rt.Fatalf("revision %d's value says revision %d", r, got)
		}
	}
	if doc.Revision > 0 {
		if err := st.Verify(ctx, asdd.Key); err != nil {
			rt.Fatal(err)
		}
	}
}

// stampedAs returns the manifest v with its revision member set to rev
// (none for -1) and project_context.current_sprint set to sprint: a
// change of a member the rules do not own.
func stampedAs(t *rapid.T, v []byte, rev int64, sprint string) []byte {
	var m map[string]any
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatal(err)
	}
	if rev >= 0 {
		m["revision"] = rev
	}
	m["project_context"].(map[string]any)["current_sprint"] = sprint
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
