package reconcile

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// demo writes a project whose slices stand at different phases and returns
// it with the time its files carry.
func demo(t *testing.T) (*project, time.Time) {
	p := newProject(t)
	p.write(".asdd/specs/auth/intent.md", "---\nslice_id: SLICE-001\ntitle: User Authentication Flow\n---\nLet users sign in.\n")
	p.write(".asdd/specs/auth/requirements.md", "# Requirements\nREQ-001\n")
	p.write(".asdd/specs/auth/domain-model.md", "entities\n")
	p.write(".asdd/specs/auth/design.md", "design\n")
	p.write(".asdd/specs/auth/tasks.md", "- [ ] T1\n")
	p.write(".asdd/specs/auth/notes.md", "scratch\n")
	p.write(".asdd/traces/SLICE-001-design.md", "why\n")

	p.write(".asdd/specs/SLICE-002/intent.md", "# Checkout — intent\n")

	p.write(".asdd/specs/SLICE-003/intent.md", "# Search\n")
	p.write(".asdd/specs/SLICE-003/requirements.md", "REQ\n")
	p.write(".asdd/traces/SLICE-003-validation.md", "validated\n")

	p.write(".asdd/specs/SLICE-004/intent.md", "# Settlement\n")
	p.write(".asdd/specs/SLICE-004/requirements.md", "REQ\n")
	p.write(".asdd/specs/SLICE-004/design.md", "DRAFT — AGENT HALTED\n\nhalf a design\n")

	if err := os.MkdirAll(p.path(".asdd/specs/payments"), 0o755); err != nil {
		t.Fatal(err)
	}
	p.write(".asdd/specs/slice-006/intent.md", "# Reports - Intent\n")

	for _, f := range []string{"intent", "requirements", "domain-model", "design", "tasks"} {
		p.write(".asdd/specs/SLICE-005/"+f+".md", f+"\n")
	}
	p.write(".asdd/traces/SLICE-005-implementation.md", "x\n")
	p.write(".asdd/traces/SLICE-005-observability.md", "x\n")

	p.write(".asdd/specs/RETRO-AUTH-001/requirements.md", "**Slice:** RETRO-AUTH-001\n# Legacy auth\n")
	p.write(".asdd/traces/SLICE-099-design.md", "orphan\n")

	outside := filepath.Join(t.TempDir(), "x.md")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p.path(".asdd/specs/SLICE-002/requirements.md")); err != nil {
		t.Fatal(err)
	}

	// Stamp every file with a known time, a minute apart in write order.
	base := time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)
	i := 0
	err := filepath.WalkDir(p.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSymlink != 0 {
			return err
		}
		ts := base.Add(time.Duration(i) * time.Minute)
		i++
		return os.Chtimes(path, ts, ts)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, base
}

func TestScanReconstructsSlices(t *testing.T) {
	p, _ := demo(t)
	res, err := Scan(context.Background(), p.root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ ID, Status, Name, Type, Blocked string }
	var got []row
	for _, s := range res.Slices {
		got = append(got, row{s.ID, s.Status, s.Name, s.Type, s.BlockedAtPhase})
	}
	want := []row{
		{"RETRO-AUTH-001", "VALIDATION", "Legacy auth", "RETRO_SPEC", ""},
		{"SLICE-001", "IMPLEMENTATION", "User Authentication Flow", "FEATURE", ""},
		{"SLICE-002", "SPEC", "Checkout", "FEATURE", ""},
		{"SLICE-003", "DESIGN", "Search", "FEATURE", ""},
		{"SLICE-004", "BLOCKED", "Settlement", "FEATURE", "DESIGN"},
		{"SLICE-005", "DONE", "SLICE-005", "FEATURE", ""},
		{"SLICE-006", "SPEC", "Reports", "FEATURE", ""},
		{"payments", "DISCOVERY", "payments", "FEATURE", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("slices (-want +got):\n%s", diff)
	}

	byID := map[string]ScannedSlice{}
	for _, s := range res.Slices {
		byID[s.ID] = s
	}
	auth := byID["SLICE-001"]
	if diff := cmp.Diff(map[string]string{
		"intent": ".asdd/specs/auth/intent.md", "requirements": ".asdd/specs/auth/requirements.md",
		"domain_model": ".asdd/specs/auth/domain-model.md", "design": ".asdd/specs/auth/design.md", "tasks": ".asdd/specs/auth/tasks.md",
	}, auth.PhaseData); diff != "" {
		t.Errorf("phase data: %s", diff)
	}
	if diff := cmp.Diff([]string{".asdd/traces/SLICE-001-design.md"}, auth.Traces); diff != "" {
		t.Errorf("traces: %s", diff)
	}
	if diff := cmp.Diff([]string{".asdd/specs/auth/notes.md"}, auth.Others); diff != "" {
		t.Errorf("others: %s", diff)
	}
	content, _ := os.ReadFile(p.path(".asdd/specs/auth/design.md"))
	if auth.Hashes[".asdd/specs/auth/design.md"] != FormatHash(sha256.Sum256(content)) {
		t.Errorf("hash of design.md: %s", auth.Hashes[".asdd/specs/auth/design.md"])
	}
	if len(auth.Hashes) != 6 {
		t.Errorf("hashes: %v", auth.Hashes)
	}
	for _, f := range []string{"name", "type", "status", "confidence_chain", "created_at", "tasks"} {
		if !slices.Contains(auth.Guessed, f) {
			t.Errorf("SLICE-001: %s not marked guessed: %v", f, auth.Guessed)
		}
	}
	if slices.Contains(auth.Guessed, "slice_id") {
		t.Errorf("SLICE-001's id was read from its intent, yet marked guessed")
	}
	if !slices.Contains(byID["SLICE-006"].Guessed, "slice_id") || slices.Contains(byID["SLICE-002"].Guessed, "slice_id") {
		t.Errorf("id from a lower-case directory name not marked guessed, or SLICE-002's marked")
	}
	if !slices.Contains(byID["payments"].Guessed, "slice_id") {
		t.Errorf("payments: id not marked guessed: %v", byID["payments"].Guessed)
	}
	blocked := byID["SLICE-004"]
	if blocked.LKGPhase != "VALIDATION" || !strings.Contains(blocked.BlockReason, "DRAFT — AGENT HALTED") || !slices.Contains(blocked.Guessed, "blocked_at_phase") {
		t.Errorf("SLICE-004 block record: %+v", blocked)
	}
	if !auth.Created.Before(auth.Updated) || auth.Created.Year() != 2026 {
		t.Errorf("times: %v .. %v", auth.Created, auth.Updated)
	}

	var warnings = strings.Join(res.Warnings, "\n")
	for _, w := range []string{"SLICE-099-design.md belongs to no slice", "SLICE-002/requirements.md skipped"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("no warning %q in:\n%s", w, warnings)
		}
	}
	if _, ok := byID["SLICE-002"].PhaseData["requirements"]; ok {
		t.Error("a symlink leading outside the root was read")
	}
}

func TestScanProgressAndEmptyProject(t *testing.T) {
	p, _ := demo(t)
	var calls, last, total int
	res, err := Scan(context.Background(), p.root, ScanOptions{Progress: func(d, n int) { calls++; last, total = d, n }})
	if err != nil {
		t.Fatal(err)
	}
	if calls == 0 || last != total || total != res.Files {
		t.Errorf("progress: %d calls, last %d/%d, files %d", calls, last, total, res.Files)
	}

	empty := newProject(t)
	res, err = Scan(context.Background(), empty.root, ScanOptions{})
	if err != nil || len(res.Slices) != 0 {
		t.Fatalf("empty project: %+v, %v", res, err)
	}
}

func TestScanDuplicateIDs(t *testing.T) {
	p := newProject(t)
	p.write(".asdd/specs/a/intent.md", "slice_id: SLICE-001\n")
	p.write(".asdd/specs/b/intent.md", "slice_id: SLICE-001\n")
	res, err := Scan(context.Background(), p.root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Slices[0].ID != "SLICE-001" || res.Slices[1].ID != "b" || !slices.Contains(res.Slices[1].Guessed, "slice_id") {
		t.Fatalf("%+v", res.Slices)
	}
}

func TestScanCustomStages(t *testing.T) {
	p := newProject(t)
	p.write(".asdd/specs/SLICE-001/brief.md", "x")
	stages := []Stage{{Agent: "writer", Artifact: "brief", Phase: "DRAFT", Reached: "REVIEW"}}
	res, err := Scan(context.Background(), p.root, ScanOptions{Stages: stages, Lifecycle: []string{"DRAFT", "REVIEW"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Slices[0]; s.Status != "REVIEW" || s.PhaseData["brief"] == "" {
		t.Fatalf("%+v", s)
	}
}

func TestParseHead(t *testing.T) {
	tests := []struct {
		in   string
		want headInfo
	}{
		{"# Title\nslice_id: SLICE-1\n", headInfo{title: "Title", id: "SLICE-1"}},
		{"---\ntitle: \"Quoted\"\nslice: `S-2`\n---\n# Not this\n", headInfo{title: "Quoted", id: "S-2"}},
		{"DRAFT — AGENT HALTED\n\n# Design\n", headInfo{marker: "DRAFT — AGENT HALTED", title: "Design"}},
		{"- **Slice ID:** SLICE-7\n", headInfo{id: "SLICE-7"}},
		{"slice_id: ../../etc\n", headInfo{}},
		{"nothing here", headInfo{}},
	}
	for _, tc := range tests {
		if got := parseHead([]byte(tc.in), DefaultMarkers); got != tc.want {
			t.Errorf("parseHead(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func FuzzParseHead(f *testing.F) {
	f.Add([]byte("---\nslice_id: SLICE-001\ntitle: x\n---\n# T\n"))
	f.Add([]byte("DRAFT — AGENT HALTED\n\n---\nslice: a\n---\n"))
	f.Add([]byte("\xff\xfe# \xff\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h := parseHead(b, DefaultMarkers)
		if h.id != "" && !validID().MatchString(h.id) {
			t.Fatalf("invalid id %q", h.id)
		}
		if !utf8.ValidString(h.title) || len(h.title) > 200 || strings.Contains(h.title, "\n") {
			t.Fatalf("bad title %q", h.title)
		}
		if h.marker != "" && !slices.Contains(DefaultMarkers, h.marker) {
			t.Fatalf("marker %q", h.marker)
		}
	})
}
