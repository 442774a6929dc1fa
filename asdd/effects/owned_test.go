package effects

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 18 item 1: a halt marker may only ever be written into an
// ordinary project file. An artifact that names, or resolves through
// symlinks to, a file the custodian owns is refused with INVALID_INPUT
// when it is proposed, and again when the marker is applied.
func TestHaltMarkersOnlyOnProjectFiles(t *testing.T) {
	p, dir := open(t)
	owned := map[string]string{
		".impl/journal.ndjson":       `{"rev":1}` + "\n",
		".impl/manifest.json":        `{}`,
		".asdd/state/journal.ndjson": `{"rev":1}` + "\n",
		".asdd/config.yaml":          "gating_margin: 0.02\n",
		"docs/agent-failure-log.md":  "# Agent Failure Log\n",
		".workflow/.cycle/c-1.json":  `{}`,
		".asdd/runs/runner.json":     `{}`,
	}
	for name, data := range owned {
		write(t, dir, name, data)
	}
	write(t, dir, "docs/spec.md", "# Spec\n")
	links := map[string]string{
		"notes":          ".asdd/state",               // a directory symlink into the state
		"docs/plan.md":   "../.impl/journal.ndjson",   // a file symlink to a journal
		"docs/cfg":       "../.asdd",                  // through a parent of an owned file
		"a/b":            "../docs/cfg/../.impl",      // chained, with ".." after a symlink
		"loop1":          "loop2",                     // a loop
		"loop2":          "loop1",                     //
		"docs/indirect":  "plan.md",                   // a symlink to a symlink
		"docs/spec-link": "spec.md",                   // harmless: an ordinary file
		"docs/sub":       "../.workflow/.cycle/../..", // back to the root
	}
	for name, target := range links {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	refused := []string{
		".impl/journal.ndjson", ".impl/manifest.json", ".asdd/state/journal.ndjson", ".asdd/config.yaml",
		"docs/agent-failure-log.md", ".workflow/.cycle/c-1.json", ".asdd/runs/runner.json",
		"notes/journal.ndjson", "docs/plan.md", "docs/cfg/config.yaml", "a/b/journal.ndjson", "docs/indirect",
		"docs/cfg/state/journal.ndjson",
	}
	for _, name := range refused {
		if _, err := p.Artifact("spec", name, asdd.DefaultMarker); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("Artifact(%s): %v, want INVALID_INPUT", name, err)
		}
		err := p.Apply([]asdd.Effect{{Kind: asdd.EffectMarkArtifact, Path: name, Marker: asdd.DefaultMarker}})
		if err == nil {
			t.Errorf("marking %s succeeded", name)
		}
	}
	if _, err := p.Artifact("spec", "loop1", asdd.DefaultMarker); reason.CodeOf(err) != reason.StateInconsistency || !strings.Contains(err.Error(), "loop1") {
		t.Errorf("Artifact(loop1): %v, want STATE_INCONSISTENCY naming it", err)
	}
	for name, data := range owned {
		if got := read(t, dir, name); got != data {
			t.Errorf("%s changed: %q", name, got)
		}
	}
	for _, name := range []string{"docs/spec.md", "docs/spec-link", "docs/sub/docs/spec.md"} {
		a, err := p.Artifact("spec", name, asdd.DefaultMarker)
		if err != nil {
			t.Fatalf("Artifact(%s): %v", name, err)
		}
		if a.SHA256 != Sum([]byte("# Spec\n")) {
			t.Fatalf("%s hashed %s", name, a.SHA256)
		}
	}
	if err := p.Apply([]asdd.Effect{{Kind: asdd.EffectMarkArtifact, Path: "docs/spec.md", Marker: asdd.DefaultMarker}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, "docs/spec.md"); !strings.HasPrefix(got, asdd.DefaultMarker) {
		t.Fatalf("ordinary file not marked: %q", got)
	}
}

// The check is made again when the marker is written: an artifact swapped
// for a symlink to a journal after it was proposed is not marked, nor is a
// journal reached through a temporary file name planted as a symlink.
func TestHaltMarkersSwappedAfterProposal(t *testing.T) {
	p, dir := open(t)
	journal := `{"rev":1}` + "\n"
	write(t, dir, ".impl/journal.ndjson", journal)
	write(t, dir, "docs/spec.md", "# Spec\n")
	if _, err := p.Artifact("spec", "docs/spec.md", asdd.DefaultMarker); err != nil {
		t.Fatal(err)
	}
	// planted temporary names
	for _, suffix := range []string{".custodian-tmp", ".tmp"} {
		if err := os.Symlink("../.impl/journal.ndjson", filepath.Join(dir, "docs/spec.md"+suffix)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Apply([]asdd.Effect{{Kind: asdd.EffectMarkArtifact, Path: "docs/spec.md", Marker: asdd.DefaultMarker}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dir, ".impl/journal.ndjson"); got != journal {
		t.Fatalf("journal changed through a planted temporary file: %q", got)
	}
	// swapped after the proposal
	if err := os.Remove(filepath.Join(dir, "docs/spec.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../.impl/journal.ndjson", filepath.Join(dir, "docs/spec.md")); err != nil {
		t.Fatal(err)
	}
	err := p.Apply([]asdd.Effect{{Kind: asdd.EffectMarkArtifact, Path: "docs/spec.md", Marker: "X"}})
	if err == nil || !strings.Contains(err.Error(), "custodian") {
		t.Fatalf("marking a swapped artifact: %v", err)
	}
	if got := read(t, dir, ".impl/journal.ndjson"); got != journal {
		t.Fatalf("journal changed: %q", got)
	}
	// the escalation directory swapped for a symlink into the state
	if err := os.MkdirAll(filepath.Join(dir, ".asdd/state"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("state", filepath.Join(dir, ".asdd/escalations")); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply([]asdd.Effect{{Kind: asdd.EffectWriteFile, Path: ".asdd/escalations/journal.ndjson", Content: "x"}}); err == nil {
		t.Fatal("a notice was written through a symlinked escalation directory")
	}
	if _, err := os.Stat(filepath.Join(dir, ".asdd/state/journal.ndjson")); err == nil {
		t.Fatal("a file was written into the state directory")
	}
	// effects write the custodian's files only where they belong
	for _, e := range []asdd.Effect{
		{Kind: asdd.EffectWriteFile, Path: "docs/spec.md", Content: "x"},
		{Kind: asdd.EffectUpsertRow, Path: ".impl/journal.ndjson", Key: "K", Content: "| x |"},
	} {
		if err := p.Apply([]asdd.Effect{e}); err == nil {
			t.Errorf("%s to %s applied", e.Kind, e.Path)
		}
	}
	if got := read(t, dir, ".impl/journal.ndjson"); got != journal {
		t.Fatalf("journal changed: %q", got)
	}
}
