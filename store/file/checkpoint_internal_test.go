package file

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/store"
)

const cpKey = ".asdd/state/manifest.json"

// cpCommit commits {"n":n} to dir's manifest with opts.
func cpCommit(t *testing.T, dir string, opts Options, n int) {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Update(context.Background(), cpKey, func(store.Document) (store.Change, error) {
		b, _ := json.Marshal(map[string]any{"n": n, "pad": "some text to make records of some size"})
		return store.Change{Value: b, Actor: "t", Reason: "set"}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
}

// cpFast reports whether a fresh direct-mode open of dir goes by the
// checkpoint.
func cpFast(t *testing.T, dir string, opts Options) bool {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, err := s.doc(cpKey)
	if err != nil {
		t.Fatal(err)
	}
	var fast bool
	if err := d.locked(context.Background(), func() error { fast = d.loadFast(); return nil }); err != nil {
		t.Fatal(err)
	}
	if fast {
		// What it took matches what the full open takes.
		v, rev, last := string(d.cur.raw), d.rev, *d.last
		if err := d.locked(context.Background(), func() error {
			d.loaded = false
			d.s.opts.Hold = true
			defer func() { d.s.opts.Hold = false }()
			return d.load()
		}); err != nil {
			t.Fatal(err)
		}
		if string(d.cur.raw) != v || d.rev != rev || d.last.Hash != last.Hash {
			t.Fatalf("the checkpoint's open took revision %d, the full open %d", rev, d.rev)
		}
	}
	return fast
}

func cpFile(dir, name string) string {
	return filepath.Join(dir, ".asdd", "state", name)
}

// The checkpoint is gone by only when the files are exactly as its writer
// left them; anything else takes the full open.
func TestCheckpointTakenOnlyWhenNothingChanged(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, tc := range []struct {
		name   string
		opts   Options
		change func(t *testing.T, dir string)
		fast   bool
	}{
		{"after a commit", Options{}, func(*testing.T, string) {}, true},
		{"after a commit, with a journal key", Options{JournalKey: key}, func(*testing.T, string) {}, true},
		{"journal touched", Options{}, func(t *testing.T, dir string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(cpFile(dir, "journal.ndjson"), later, later); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"journal rewritten in place with its times put back", Options{}, func(t *testing.T, dir string) {
			j := cpFile(dir, "journal.ndjson")
			fi, _ := os.Stat(j)
			b, _ := os.ReadFile(j)
			if err := os.WriteFile(j, b, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(j, fi.ModTime(), fi.ModTime())
		}, false},
		{"journal appended by a daemon", Options{}, func(t *testing.T, dir string) {
			cpCommitHeld(t, dir, 99)
		}, false},
		{"snapshot changed by one byte", Options{}, func(t *testing.T, dir string) {
			p := cpFile(dir, "manifest.json")
			b, _ := os.ReadFile(p)
			b[len(b)-3] ^= 1
			os.WriteFile(p, b, 0o644)
		}, false},
		{"checkpoint unreadable", Options{}, func(t *testing.T, dir string) {
			os.WriteFile(cpFile(dir, ".checkpoint"), []byte(`{"rev":`), 0o644)
		}, false},
		{"checkpoint names another record", Options{}, func(t *testing.T, dir string) {
			editCheckpoint(t, dir, func(c *checkpoint) { c.Off, c.Len = 0, c.Off+c.Len })
		}, false},
		{"checkpoint names another snapshot", Options{}, func(t *testing.T, dir string) {
			editCheckpoint(t, dir, func(c *checkpoint) { c.File = store.HashBytes([]byte("{}")) })
		}, false},
		{"checkpoint not authenticated by the journal key", Options{JournalKey: key}, func(t *testing.T, dir string) {
			editCheckpoint(t, dir, func(c *checkpoint) { c.MAC = "" })
		}, false},
		{"leftover temporary snapshot", Options{}, func(t *testing.T, dir string) {
			os.WriteFile(cpFile(dir, "manifest.json.tmp"), []byte(`{"n":`), 0o644)
		}, false},
		{"anchor behind the checkpoint", Options{}, func(t *testing.T, dir string) {
			s, _ := Open(dir, Options{})
			defer s.Close()
			d, _ := s.doc(cpKey)
			d.locked(context.Background(), func() error {
				if err := d.load(); err != nil {
					return err
				}
				recs, _ := d.readRecords(1, 1)
				d.writeAnchor(1, recs[0].Hash)
				return nil
			})
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i := 1; i <= 3; i++ {
				cpCommit(t, dir, tc.opts, i)
			}
			tc.change(t, dir)
			if got := cpFast(t, dir, tc.opts); got != tc.fast {
				t.Fatalf("open by the checkpoint: %v, want %v", got, tc.fast)
			}
		})
	}
}

// An open that read the journal whole leaves a checkpoint for the next.
func TestCheckpointAfterFullOpen(t *testing.T) {
	dir := t.TempDir()
	cpCommit(t, dir, Options{}, 1)
	cpCommitHeld(t, dir, 2)
	cpCommit(t, dir, Options{}, 3) // after the daemon's sumless record: full open, then commit
	if !cpFast(t, dir, Options{}) {
		t.Fatal("a commit after a full open left no usable checkpoint")
	}
	os.Remove(cpFile(dir, ".checkpoint"))
	if cpFast(t, dir, Options{}) {
		t.Fatal("no checkpoint, yet fast")
	}
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), cpKey); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !cpFast(t, dir, Options{}) {
		t.Fatal("a full open left no usable checkpoint")
	}
}

// cpCommitHeld commits through a patch in Hold mode, as the daemon does
// (a record without a sum).
func cpCommitHeld(t *testing.T, dir string, n int) {
	t.Helper()
	s, err := Open(dir, Options{Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Update(context.Background(), cpKey, func(store.Document) (store.Change, error) {
		return store.Change{Patch: json.RawMessage(`[{"op":"replace","path":"/n","value":` + itoa(n) + `}]`), Actor: "d", Reason: "patch"}, nil
	}); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func editCheckpoint(t *testing.T, dir string, edit func(*checkpoint)) {
	t.Helper()
	p := cpFile(dir, ".checkpoint")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	edit(&c)
	b, _ = json.Marshal(c)
	os.WriteFile(p, b, 0o644)
}
