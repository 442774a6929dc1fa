package reconcile

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestCheckMatchesModel drives a project through random file changes and
// checks after each: the findings equal what a model of the files predicts,
// and a warm check (stat cache, files treated as settled) finds exactly
// what a full one does. Every write changes the file's size, so that a
// change within one timestamp tick is still visible to the cache (the racy
// window, which protects real use, is what the settled clock bypasses).
func TestCheckMatchesModel(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "outside.md")
	if err := os.WriteFile(outside, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(rt *rapid.T) {
		p := newProject(t)
		files := []string{"a/intent.md", "a/design.md", "b/intent.md", "c/d/tasks.md"}
		type state int
		const (
			missing state = iota
			regular
			escaping
		)
		model := map[string]state{}
		content := map[string]string{}
		recorded := map[string]string{}
		n := 0
		write := func(f string) {
			n++
			c := strings.Repeat("x", n)
			full := p.path(f)
			_ = os.Remove(full)
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				rt.Fatal(err)
			}
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				rt.Fatal(err)
			}
			model[f], content[f] = regular, c
		}
		for _, f := range files {
			write(f)
			recorded[f] = FormatHash(sha256.Sum256([]byte(content[f])))
		}
		settled := func() time.Time { return time.Now().Add(time.Hour) }
		cached := 0
		for range rapid.IntRange(1, 25).Draw(rt, "steps") {
			f := rapid.SampledFrom(files).Draw(rt, "file")
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0:
				write(f)
			case 1:
				_ = os.Remove(p.path(f))
				model[f] = missing
			case 2:
				_ = os.Remove(p.path(f))
				if err := os.Symlink(outside, p.path(f)); err != nil {
					rt.Fatal(err)
				}
				model[f] = escaping
			case 3: // the manifest records the file as it is now
				if model[f] == regular {
					recorded[f] = FormatHash(sha256.Sum256([]byte(content[f])))
				}
			case 4:
				// only check
			}
			var arts []Artifact
			want := map[string]string{}
			for _, f := range files {
				arts = append(arts, Artifact{Slice: "S-1", Name: f, Path: f, Hash: recorded[f]})
				switch {
				case model[f] == missing:
					want[f] = "STATE_INCONSISTENCY"
				case model[f] == escaping:
					want[f] = "INVALID_INPUT"
				case FormatHash(sha256.Sum256([]byte(content[f]))) != recorded[f]:
					want[f] = "STATE_DRIFT"
				}
			}
			full, err := Check(context.Background(), p.root, arts, Options{Full: true, Now: settled})
			if err != nil {
				rt.Fatal(err)
			}
			warm, err := Check(context.Background(), p.root, arts, Options{Now: settled})
			if err != nil {
				rt.Fatal(err)
			}
			got := func(r *Report) map[string]string {
				m := map[string]string{}
				for _, f := range r.Findings {
					m[f.Path] = string(f.Code)
				}
				return m
			}
			if diff := cmp.Diff(want, got(full)); diff != "" {
				rt.Fatalf("full check (-model +got):\n%s", diff)
			}
			if diff := cmp.Diff(got(full), got(warm)); diff != "" {
				rt.Fatalf("warm check differs from full (-full +warm):\n%s\ncached %d", diff, warm.Cached)
			}
			cached += warm.Cached
		}
		if cached == 0 {
			rt.Fatal("the warm checks never used the stat cache")
		}
	})
}
