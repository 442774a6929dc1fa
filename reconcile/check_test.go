package reconcile

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/reason"
)

// project is a temporary project root with some artifacts.
type project struct {
	t    *testing.T
	dir  string
	root *os.Root
}

func newProject(t *testing.T) *project {
	t.Helper()
	dir := t.TempDir()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return &project{t: t, dir: dir, root: r}
}

func (p *project) write(rel, content string) string {
	p.t.Helper()
	full := filepath.Join(p.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
	return FormatHash(sha256.Sum256([]byte(content)))
}

func (p *project) path(rel string) string { return filepath.Join(p.dir, filepath.FromSlash(rel)) }

// age sets a file's mtime into the past (its ctime becomes now).
func (p *project) age(rel string, d time.Duration) {
	p.t.Helper()
	old := time.Now().Add(-d)
	if err := os.Chtimes(p.path(rel), old, old); err != nil {
		p.t.Fatal(err)
	}
}

func (p *project) check(arts []Artifact, opt Options) *Report {
	p.t.Helper()
	rep, err := Check(context.Background(), p.root, arts, opt)
	if err != nil {
		p.t.Fatal(err)
	}
	return rep
}

// codes lists each finding as "slice artifact CODE".
func codes(rep *Report) []string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, f.Slice+" "+f.Artifact+" "+string(f.Code))
	}
	return out
}

// standard writes two slices' artifacts and returns them as the manifest
// records them.
func standard(p *project) []Artifact {
	return []Artifact{
		{Slice: "SLICE-001", SliceStatus: "DESIGN", Name: "intent", Path: ".asdd/specs/auth/intent.md", Hash: p.write(".asdd/specs/auth/intent.md", "# Auth\nLet users sign in.\n")},
		{Slice: "SLICE-001", SliceStatus: "DESIGN", Name: "requirements", Path: ".asdd/specs/auth/requirements.md", Hash: p.write(".asdd/specs/auth/requirements.md", "REQ-001 WHEN a user signs in...\n")},
		{Slice: "SLICE-002", SliceStatus: "DONE", Name: "intent", Path: ".asdd/specs/pay/intent.md", Hash: p.write(".asdd/specs/pay/intent.md", "# Pay\n")},
		{Slice: "SLICE-002", SliceStatus: "DONE", Name: "design", Path: ".asdd/specs/pay/design.md", Hash: p.write(".asdd/specs/pay/design.md", "design\n")},
	}
}

func TestCheckFindings(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.md")
	if err := os.WriteFile(secret, []byte("# Auth\nLet users sign in.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(p *project, arts []Artifact) []Artifact
		want    []string
		message string // a part of the first finding's message
	}{
		{
			name:   "clean",
			mutate: func(p *project, arts []Artifact) []Artifact { return arts },
		},
		{
			name: "file edited",
			mutate: func(p *project, arts []Artifact) []Artifact {
				p.write(".asdd/specs/auth/requirements.md", "REQ-001 WHEN an admin signs in...\n")
				return arts
			},
			want:    []string{"SLICE-001 requirements STATE_DRIFT"},
			message: "modified without a manifest update",
		},
		{
			name: "file deleted",
			mutate: func(p *project, arts []Artifact) []Artifact {
				if err := os.Remove(p.path(".asdd/specs/auth/intent.md")); err != nil {
					t.Fatal(err)
				}
				return arts
			},
			want:    []string{"SLICE-001 intent STATE_INCONSISTENCY"},
			message: "does not exist",
		},
		{
			name: "DONE slice whose artifact vanished",
			mutate: func(p *project, arts []Artifact) []Artifact {
				if err := os.Remove(p.path(".asdd/specs/pay/design.md")); err != nil {
					t.Fatal(err)
				}
				return arts
			},
			want:    []string{"SLICE-002 design STATE_INCONSISTENCY"},
			message: "yet slice SLICE-002 is DONE",
		},
		{
			name: "file replaced by a symlink to outside the root",
			mutate: func(p *project, arts []Artifact) []Artifact {
				f := p.path(".asdd/specs/auth/intent.md")
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(secret, f); err != nil {
					t.Fatal(err)
				}
				return arts
			},
			want:    []string{"SLICE-001 intent INVALID_INPUT"},
			message: "outside the project root",
		},
		{
			name: "relative symlink climbing out of the root",
			mutate: func(p *project, arts []Artifact) []Artifact {
				f := p.path(".asdd/specs/auth/intent.md")
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
				rel, err := filepath.Rel(filepath.Dir(f), secret)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(rel, f); err != nil {
					t.Fatal(err)
				}
				return arts
			},
			want: []string{"SLICE-001 intent INVALID_INPUT"},
		},
		{
			name: "directory replaced by a symlink to outside the root",
			mutate: func(p *project, arts []Artifact) []Artifact {
				d := p.path(".asdd/specs/pay")
				if err := os.RemoveAll(d); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(outside, "intent.md"), []byte("# Pay\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, d); err != nil {
					t.Fatal(err)
				}
				return arts
			},
			want: []string{"SLICE-002 design INVALID_INPUT", "SLICE-002 intent INVALID_INPUT"},
		},
		{
			name: "manifest naming ../../etc/passwd",
			mutate: func(p *project, arts []Artifact) []Artifact {
				return append(arts, Artifact{Slice: "SLICE-003", Name: "requirements", Path: "../../etc/passwd"})
			},
			want:    []string{"SLICE-003 requirements INVALID_INPUT"},
			message: `leaves the project root through ".."`,
		},
		{
			name: "manifest naming an absolute path",
			mutate: func(p *project, arts []Artifact) []Artifact {
				return append(arts, Artifact{Slice: "SLICE-003", Name: "design", Path: "/etc/passwd"})
			},
			want:    []string{"SLICE-003 design INVALID_INPUT"},
			message: "is absolute",
		},
		{
			name: "symlink inside the root is followed",
			mutate: func(p *project, arts []Artifact) []Artifact {
				h := p.write("docs/architecture/domain-model.md", "entities\n")
				if err := os.Symlink("../../../docs/architecture/domain-model.md", p.path(".asdd/specs/auth/domain-model.md")); err != nil {
					t.Fatal(err)
				}
				return append(arts, Artifact{Slice: "SLICE-001", Name: "domain_model", Path: ".asdd/specs/auth/domain-model.md", Hash: h})
			},
		},
		{
			name: "directory symlinked to a sibling inside the root",
			mutate: func(p *project, arts []Artifact) []Artifact {
				d := p.path(".asdd/specs/pay")
				if err := os.Rename(d, p.path("archive-pay")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../../archive-pay", d); err != nil {
					t.Fatal(err)
				}
				return arts
			},
		},
		{
			name: "artifact is a directory",
			mutate: func(p *project, arts []Artifact) []Artifact {
				return append(arts, Artifact{Slice: "SLICE-001", Name: "tasks", Path: ".asdd/specs/auth"})
			},
			want:    []string{"SLICE-001 tasks STATE_INCONSISTENCY"},
			message: "is a directory",
		},
		{
			name: "a path component is a file",
			mutate: func(p *project, arts []Artifact) []Artifact {
				return append(arts, Artifact{Slice: "SLICE-001", Name: "tasks", Path: ".asdd/specs/auth/intent.md/tasks.md"})
			},
			want: []string{"SLICE-001 tasks STATE_INCONSISTENCY"},
		},
		{
			name: "malformed recorded hash",
			mutate: func(p *project, arts []Artifact) []Artifact {
				arts[0].Hash = "md5:abc"
				return arts
			},
			want:    []string{"SLICE-001 intent INVALID_INPUT"},
			message: "not of the form",
		},
		{
			name: "two slices naming one edited file",
			mutate: func(p *project, arts []Artifact) []Artifact {
				arts = append(arts, Artifact{Slice: "SLICE-003", Name: "intent", Path: "./.asdd/specs/pay/intent.md", Hash: arts[2].Hash})
				p.write(".asdd/specs/pay/intent.md", "# Payments\n")
				return arts
			},
			want: []string{"SLICE-002 intent STATE_DRIFT", "SLICE-003 intent STATE_DRIFT"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			arts := tc.mutate(p, standard(p))
			rep := p.check(arts, Options{})
			if diff := cmp.Diff(tc.want, codes(rep)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%+v", diff, rep.Findings)
			}
			if tc.message != "" && !strings.Contains(rep.Findings[0].Message, tc.message) {
				t.Errorf("message %q does not contain %q", rep.Findings[0].Message, tc.message)
			}
			for _, f := range rep.Findings {
				if !errors.Is(f.Err(), f.Code) {
					t.Errorf("finding error %v does not carry %s", f.Err(), f.Code)
				}
			}
			if rep.Clean() != (len(tc.want) == 0) {
				t.Errorf("Clean() = %v with findings %v", rep.Clean(), codes(rep))
			}
		})
	}
}

func TestCheckDriftNamesBothHashes(t *testing.T) {
	p := newProject(t)
	arts := standard(p)
	now := p.write(".asdd/specs/pay/design.md", "design v2\n")
	rep := p.check(arts, Options{})
	if len(rep.Findings) != 1 {
		t.Fatalf("findings: %+v", rep.Findings)
	}
	f := rep.Findings[0]
	if f.Recorded != arts[3].Hash || f.Actual != now {
		t.Errorf("recorded %s actual %s, want %s and %s", f.Recorded, f.Actual, arts[3].Hash, now)
	}
	if got, ok := rep.Current("./.asdd/specs/pay/design.md"); !ok || got != now {
		t.Errorf("Current = %s, %v; want %s", got, ok, now)
	}
	if _, ok := rep.Current("missing.md"); ok {
		t.Error("Current of a path never checked")
	}
}

func TestCheckUnrecordedHashChecksExistenceOnly(t *testing.T) {
	p := newProject(t)
	p.write("a.md", "x")
	rep := p.check([]Artifact{{Slice: "S-1", Name: "intent", Path: "a.md"}, {Slice: "S-1", Name: "design", Path: "b.md"}}, Options{})
	if diff := cmp.Diff([]string{"S-1 design STATE_INCONSISTENCY"}, codes(rep)); diff != "" {
		t.Fatal(diff)
	}
	if rep.Unrecorded != 1 {
		t.Errorf("Unrecorded = %d, want 1", rep.Unrecorded)
	}
}

// warm runs a check that trusts every hash it computes (no racy window).
var warm = Options{RacyWindow: -1}

func TestStatCacheSkipsUnchangedFiles(t *testing.T) {
	p := newProject(t)
	arts := standard(p)
	cold := p.check(arts, warm)
	if cold.Hashed != 4 || cold.Cached != 0 {
		t.Fatalf("cold: hashed %d cached %d", cold.Hashed, cold.Cached)
	}
	again := p.check(arts, warm)
	if again.Hashed != 0 || again.Cached != 4 || !again.Clean() {
		t.Fatalf("warm: hashed %d cached %d findings %v", again.Hashed, again.Cached, codes(again))
	}
	full := p.check(arts, Options{Full: true, RacyWindow: -1})
	if full.Hashed != 4 || full.Cached != 0 {
		t.Fatalf("full: hashed %d cached %d", full.Hashed, full.Cached)
	}
}

func TestStatCacheSeesChanges(t *testing.T) {
	tests := []struct {
		name   string
		change func(p *project)
	}{
		{"same size, mtime restored", func(p *project) {
			rel := ".asdd/specs/auth/intent.md"
			fi, err := os.Stat(p.path(rel))
			if err != nil {
				t.Fatal(err)
			}
			p.write(rel, "# Auth\nLet users sign up.\n")
			if err := os.Chtimes(p.path(rel), fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by rename", func(p *project) {
			rel := ".asdd/specs/auth/intent.md"
			p.write(rel+".new", "# Auth\nLet users sign up.\n")
			if err := os.Rename(p.path(rel+".new"), p.path(rel)); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t)
			arts := standard(p)
			p.check(arts, warm)
			tc.change(p)
			rep := p.check(arts, warm)
			if diff := cmp.Diff([]string{"SLICE-001 intent STATE_DRIFT"}, codes(rep)); diff != "" {
				t.Fatal(diff)
			}
			if rep.Hashed != 1 || rep.Cached != 3 {
				t.Errorf("hashed %d cached %d, want 1 and 3", rep.Hashed, rep.Cached)
			}
		})
	}
}

func TestStatCacheIgnoresRacilyCleanFiles(t *testing.T) {
	p := newProject(t)
	arts := standard(p)
	p.age(arts[0].Path, time.Hour) // its ctime is still now
	p.check(arts, Options{})
	rep := p.check(arts, Options{})
	if rep.Cached != 0 {
		t.Errorf("files changed just now were cached: cached %d", rep.Cached)
	}
	// Seen from three seconds later, they have settled.
	later := func() time.Time { return time.Now().Add(3 * time.Second) }
	p.check(arts, Options{Now: later})
	rep = p.check(arts, Options{Now: later})
	if rep.Cached != 4 {
		t.Errorf("settled files were not cached: cached %d hashed %d", rep.Cached, rep.Hashed)
	}
}

func TestStatCacheIsOnlyAnOptimisation(t *testing.T) {
	p := newProject(t)
	arts := standard(p)
	p.check(arts, warm)

	// A cache that lies about a hash: a warm check believes it, a full one
	// does not.
	c := LoadCache(p.root, DefaultCachePath)
	if c.Len() != 4 {
		t.Fatalf("cache has %d entries", c.Len())
	}
	e := c.m[".asdd/specs/auth/intent.md"]
	e.Sum[0] ^= 0xff
	c.m[".asdd/specs/auth/intent.md"] = e
	if err := SaveCache(p.root, DefaultCachePath, c); err != nil {
		t.Fatal(err)
	}
	if rep := p.check(arts, warm); len(rep.Findings) != 1 {
		t.Fatalf("warm check with a doctored cache: %v", codes(rep))
	}
	if rep := p.check(arts, Options{Full: true, RacyWindow: -1}); !rep.Clean() {
		t.Fatalf("full check: %v", codes(rep))
	}
	// The full check rewrote the cache: warm is clean again.
	if rep := p.check(arts, warm); !rep.Clean() || rep.Cached != 4 {
		t.Fatalf("warm after full: %v cached %d", codes(rep), rep.Cached)
	}

	// A damaged cache file is ignored.
	raw, err := os.ReadFile(p.path(DefaultCachePath))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1
	if err := os.WriteFile(p.path(DefaultCachePath), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := p.check(arts, warm)
	if !rep.Clean() || rep.Hashed != 4 {
		t.Fatalf("damaged cache: %v hashed %d", codes(rep), rep.Hashed)
	}
}

func TestCheckNoCacheWritesNothing(t *testing.T) {
	p := newProject(t)
	arts := standard(p)
	p.check(arts, Options{NoCache: true, RacyWindow: -1})
	if _, err := os.Stat(p.path(DefaultCachePath)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cache written: %v", err)
	}
}

func TestCheckCancelled(t *testing.T) {
	p := newProject(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Check(ctx, p.root, standard(p), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestFindingsBySlice(t *testing.T) {
	rep := &Report{Findings: []Finding{{Slice: "A", Code: reason.StateDrift}, {Slice: "A", Code: reason.StateInconsistency}, {Slice: "B", Code: reason.StateDrift}}}
	ids, m := rep.BySlice()
	if diff := cmp.Diff([]string{"A", "B"}, ids); diff != "" {
		t.Fatal(diff)
	}
	if len(m["A"]) != 2 || len(m["B"]) != 1 {
		t.Fatalf("%v", m)
	}
}
