package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/wire"
)

// The on-disk formats are unchanged: a project a previous release wrote
// (all four document kinds, journal segments; e2b548f's with commits of its
// daemon) opens, verifies and takes commits of every kind.
func TestPreviousReleaseProject(t *testing.T) {
	for _, p := range []struct {
		dir, cycle string
		rev        uint64 // the manifest's revision
		slices     int
		cycleOp    string
	}{
		{"prev-release", "cycle-v1-20261125T120000-abcdef", 20, 3, "iterate"},
		{"e2b548f-project", "cycle-v1-20261207T010000-e2b548", 17, 3, "iterate"},
	} {
		t.Run(p.dir, func(t *testing.T) { previousRelease(t, p.dir, p.cycle, p.rev, p.slices, p.cycleOp) })
	}
}

func previousRelease(t *testing.T, dir, cycleID string, rev uint64, slices int, cycleOp string) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", dir))); err != nil {
		t.Fatal(err)
	}
	st, err := file.Open(root, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	cycleKey := cycle.Key(cycleID)
	keys := []string{asdd.Key, impl.Key, agentstate.Key, cycleKey}
	verify := func() {
		t.Helper()
		for _, k := range keys {
			if err := st.Verify(ctx, k); err != nil {
				t.Fatalf("verify %s: %v", k, err)
			}
		}
	}
	verify()
	svc := app.NewLocal(app.Options{Store: st, Root: root, Logger: slog.New(slog.DiscardHandler)})
	m, err := svc.Manifest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Revision != rev || len(m.Slices) != slices || m.Slice("SLICE-001") == nil {
		t.Fatalf("manifest: revision %d, %d slices, SLICE-001 %s", m.Revision, len(m.Slices), m.Slice("SLICE-001").Status)
	}
	if _, err := svc.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatIdle}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ASDD(ctx, asdd.AddSlice{ID: "SLICE-004", Name: "four"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Impl(ctx, wire.ImplRequest{Op: "update-status", TaskID: "1.1", Status: "passed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateState(ctx, wire.StateRequest{Op: "update", Patch: json.RawMessage(`{"currentPhase":"1.2"}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.UpdateCycle(ctx, wire.CycleRequest{ID: cycleID, Op: cycleOp, Args: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	verify()
	hist, err := st.History(ctx, asdd.Key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != int(rev)+2 {
		t.Errorf("manifest history has %d records, want %d (%d written before, 2 now)", len(hist), rev+2, rev)
	}
	// Later commands (fresh processes) go by what this one left: the
	// store's checkpoint and the manifest's validity mark.
	for i := range 3 {
		st2, err := file.Open(root, file.Options{})
		if err != nil {
			t.Fatal(err)
		}
		svc2 := app.NewLocal(app.Options{Store: st2, Root: root, Logger: slog.New(slog.DiscardHandler)})
		if r, err := svc2.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive}); err != nil || r.Revision != rev+3+uint64(i) {
			t.Fatalf("command %d after: %+v %v", i, r, err)
		}
		if err := st2.Verify(ctx, asdd.Key); err != nil {
			t.Fatal(err)
		}
		st2.Close()
	}
	for _, f := range []string{".checkpoint", ".valid"} {
		if _, err := os.Stat(filepath.Join(root, ".asdd", "state", f)); err != nil {
			t.Errorf("no %s after direct commits: %v", f, err)
		}
	}
}
