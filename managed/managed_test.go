package managed_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/managed"
	"github.com/custodian-dev/custodian/reconcile"
	"github.com/custodian-dev/custodian/runner"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

func TestOwned(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{".asdd/state/manifest.json", true},
		{".asdd/state/journal.ndjson", true},
		{".asdd/state/journal.000000000001-000000000009.ndjson", true},
		{".asdd/state/.lock", true},
		{".asdd/state/.marks", true},
		{".asdd/state/custodian.pid", true},
		{".asdd/state", true},
		{".ASDD/State/Journal.ndjson", true}, // case-insensitive file systems
		{".asdd/config.yaml", true},
		{".asdd/escalations/ESC-SLICE-1-r4.md", true},
		{".asdd/runs/runner.json", true},
		{"docs/agent-failure-log.md", true},
		{".impl/manifest.json", true},
		{".impl/manifest.json.tmp", true},
		{".impl/journal.ndjson", true},
		{".impl/journal.000000000001-000000000002.ndjson", true},
		{".impl/.lock", true},
		{".impl/.marks", true},
		{".impl/.head", true},
		{".impl/.head.orphan-20260420T140000Z", true},
		{".agents/tmp/.state.head", true},
		{".impl/.checkpoint", true},
		{".agents/tmp/.state.checkpoint", true},
		{".asdd/state/.checkpoint", true},
		{".impl/.hidden-notes.md", false},
		{".agents/tmp/state.json", true},
		{".agents/tmp/state.journal.ndjson", true},
		{".agents/tmp/.state.lock", true},
		{".agents/tmp/phases/spec-output.md", true},
		{".workflow/.cycle/c-1.json", true},
		{".workflow/.cycle/c-1.progress/ra/requirements.md", true},
		{"./.asdd/config.yaml", true},
		{".claude/settings.json", true},
		{".claude/settings.local.json", true},
		{".claude/agents/reviewer.md", false},

		{".asdd/specs/SLICE-1/requirements.md", false},
		{".asdd/steering/style.md", false},
		{".asdd", false},
		{".asdd/config.yaml.example", false},
		{".asdd/statement.md", false},
		{"docs/agent-failure-log.md.bak", false},
		{"docs/other.md", false},
		{".impl/notes.md", false},
		{".agents/tmp/notes.md", false},
		{".workflow/plan.md", false},
		{"README.md", false},
	} {
		if got := managed.Owned(tc.path); got != tc.want {
			t.Errorf("Owned(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// TestOwnedMatchesThePackages keeps the list in step with the packages
// that write the files.
func TestOwnedMatchesThePackages(t *testing.T) {
	for _, p := range []string{asdd.Key, asdd.ConfigPath, asdd.EscalationDir + "/x.md", asdd.FailureLogPath,
		asdd.SteeringProposalDir + "/ESC-1.md", impl.Key, agentstate.Key, agentstate.PhasesDir + "/x-output.md", cycle.Key("c-1"), cycle.ProgressDir("c-1") + "/a/b.md",
		runner.RunDir + "/runner.json", reconcile.DefaultCachePath, reconcile.EscalationsDir + "/y.md", file.DefaultPidFile} {
		if !managed.Owned(p) {
			t.Errorf("%s is written by the custodian but not Owned", p)
		}
	}
	for _, k := range []string{asdd.Key, impl.Key, agentstate.Key, cycle.Key("cycle-v1-20260122T020000-k3x9qa")} {
		if !managed.IsDocument(k) {
			t.Errorf("%s is not a document key", k)
		}
	}
	for _, k := range []string{"package.json", ".vscode/settings.json", ".workflow/.cycle/a/b.json"} {
		if managed.IsDocument(k) {
			t.Errorf("%s is a document key", k)
		}
	}
}

// TestOwnedCoversTheStoreFiles commits to every kind of document through
// the file store, with small segments so journals rotate, and checks that
// every file the store leaves is Owned.
func TestOwnedCoversTheStoreFiles(t *testing.T) {
	dir := t.TempDir()
	st, err := file.Open(dir, file.Options{SegmentBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, key := range []string{asdd.Key, impl.Key, agentstate.Key, cycle.Key("c-1")} {
		for i := range 8 {
			v, _ := json.Marshal(map[string]any{"n": i, "pad": string(make([]byte, 100))})
			if _, err := st.Update(ctx, key, func(store.Document) (store.Change, error) {
				return store.Change{Value: v}, nil
			}, store.Create()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		n++
		if !managed.Owned(filepath.ToSlash(rel)) {
			t.Errorf("the store wrote %s, which is not Owned", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 12 {
		t.Fatalf("only %d files written", n)
	}
}

// Every file the custodian owns lies under one of the sandbox's read-only
// paths.
func TestSandboxPathsCoverEveryOwnedFile(t *testing.T) {
	files := []string{managed.ASDDKey, ".asdd/state/journal.000001", ".asdd/state/.lock", managed.ConfigPath,
		".asdd/escalations/E-1.md", ".asdd/steering-proposals/p.md", ".asdd/runs/r.json", managed.FailureLogPath,
		managed.ImplKey, ".impl/journal.000003", ".impl/.lock", ".impl/manifest.json.tmp-1",
		managed.StateKey, ".agents/tmp/state.journal.000001", ".agents/tmp/.state.lock", ".agents/tmp/phases/p1.md",
		".workflow/.cycle/c1.json", ".workflow/.cycle/c1.progress/x"}
	for _, f := range files {
		if !managed.Owned(f) {
			t.Errorf("%s is not owned", f)
			continue
		}
		covered := false
		for _, p := range managed.SandboxPaths() {
			if f == p || strings.HasPrefix(f, p+"/") {
				covered = true
			}
		}
		if !covered {
			t.Errorf("%s is not under any of %v", f, managed.SandboxPaths())
		}
	}
}
