package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// The schema check of a manifest read is skipped only for the exact value
// a validity mark names under this release's schema version: what the
// previous command committed. Bytes that did not come through the rules
// (another tool or release writing through the store), or a mark of
// another version, are checked in full.
func TestValidityMarks(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	// process runs f as one CLI process would: a fresh store and service.
	process := func(f func(st *file.Store, svc *app.Local)) {
		t.Helper()
		st, err := file.Open(root, file.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		f(st, app.NewLocal(app.Options{Store: st, Root: root, Logger: slog.New(slog.DiscardHandler)}))
	}
	marks := func() []map[string]string {
		t.Helper()
		var ms []map[string]string
		if b, err := os.ReadFile(filepath.Join(root, ".asdd", "state", ".valid")); err == nil {
			if err := json.Unmarshal(b, &ms); err != nil {
				t.Fatal(err)
			}
		}
		return ms
	}
	snapshot := func() []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(root, ".asdd", "state", "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	process(func(_ *file.Store, svc *app.Local) {
		for _, op := range []asdd.Op{asdd.Init{}, asdd.AddSlice{ID: "SLICE-001", Name: "one"}} {
			if _, err := svc.ASDD(ctx, op); err != nil {
				t.Fatal(err)
			}
		}
	})
	process(func(_ *file.Store, svc *app.Local) {
		if _, err := svc.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive}); err != nil {
			t.Fatal(err)
		}
	})
	sumOf := func(b []byte) string {
		t.Helper()
		s, err := store.SumOf(b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ms := marks()
	if len(ms) == 0 || ms[len(ms)-1]["bytes"] != store.HashBytes(snapshot()) || ms[len(ms)-1]["schema"] != asdd.SchemaVersion() {
		t.Fatalf("marks %v do not name the committed manifest under %q", ms, asdd.SchemaVersion())
	}

	// A commit that bypasses the rules: a slice the schema refuses.
	var bad []byte
	process(func(st *file.Store, _ *app.Local) {
		if _, err := st.Update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
			bad = []byte(strings.Replace(string(cur.Value), `"status": "DISCOVERY"`, `"status": "NOT_A_PHASE"`, 1))
			if string(bad) == string(cur.Value) {
				t.Fatalf("no DISCOVERY status in %s", cur.Value)
			}
			return store.Change{Value: bad, Actor: "other-tool", Reason: "raw write"}, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	refused := func(why string) {
		t.Helper()
		process(func(st *file.Store, svc *app.Local) {
			before, _ := st.Get(ctx, asdd.Key)
			if _, err := svc.Manifest(ctx); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "/slices/0/status") {
				t.Fatalf("%s: Manifest: %v, want CORRUPT_STATE naming the member", why, err)
			}
			if _, err := svc.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatIdle}); reason.CodeOf(err) != reason.CorruptState {
				t.Fatalf("%s: heartbeat: %v, want CORRUPT_STATE", why, err)
			}
			if after, _ := st.Get(ctx, asdd.Key); after.Revision != before.Revision {
				t.Fatalf("%s: committed revision %d", why, after.Revision)
			}
		})
	}
	refused("bytes no mark names")
	// A mark of these very bytes, but made under another schema version.
	other := []map[string]string{{"schema": "asdd-validate/0 sha256:0000", "sum": sumOf(bad)}, {"schema": "asdd-validate/0 sha256:0000", "bytes": store.HashBytes(bad)}}
	b, _ := json.Marshal(other)
	if err := os.WriteFile(filepath.Join(root, ".asdd", "state", ".valid"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	refused("a mark of another schema version")
	for _, m := range marks() {
		if (m["sum"] == sumOf(bad) || m["bytes"] == store.HashBytes(bad)) && m["schema"] == asdd.SchemaVersion() {
			t.Fatal("bytes that failed were marked valid")
		}
	}
}
