package file_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// Tests of the marks that name the daemon's snapshots of revisions whose
// records carry no sum: whoever writes such a snapshot (the daemon, or a
// recovery that replayed the journal) marks it, and a good snapshot is
// never moved aside.

// heldPatched opens dir in Hold mode and makes revision 1 (with a sum) and
// n revisions through patches (no sum), then forces the snapshot to the
// latest revision (marked).
func heldPatched(t *testing.T, dir string, n int, opts file.Options) *file.Store {
	t.Helper()
	opts.Hold = true
	if opts.SnapshotInterval == 0 {
		opts.SnapshotInterval = time.Hour
	}
	s, err := file.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Update(ctx, key, bump(0), store.Create()); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := s.Update(ctx, key, bumpPatch(i%3)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Verify(ctx, key); err != nil { // the snapshot at the latest revision
		t.Fatal(err)
	}
	return s
}

func noneAside(t *testing.T, dir string) {
	t.Helper()
	for _, pat := range []string{"*.unjournaled-*", "*.corrupt-*"} {
		if aside := glob(t, dir, pat); len(aside) > 0 {
			t.Fatalf("moved aside: %v", aside)
		}
	}
}

// reopenOK opens dir in direct mode, checks it is at revision rev and
// verifies, and closes it.
func reopenOK(t *testing.T, dir string, rev uint64) {
	t.Helper()
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Revision != rev {
		t.Fatalf("revision %d, want %d", doc.Revision, rev)
	}
	if err := s.Verify(ctx, key); err != nil {
		t.Fatal(err)
	}
	noneAside(t, dir)
}

// A recovery that replays a daemon's journal onto a snapshot that is behind
// rewrites the snapshot at a revision whose record has no sum: it marks it
// too, so the next open recognises it instead of moving it aside.
func TestRecoveredSnapshotIsMarked(t *testing.T) {
	dir := t.TempDir()
	s := heldPatched(t, dir, 5, file.Options{})
	for i := range 5 { // the snapshot stays at revision 6
		if _, err := s.Update(ctx, key, bumpPatch(i)); err != nil {
			t.Fatal(err)
		}
	}
	crash := t.TempDir()
	copyTree(t, dir, crash)
	reopenOK(t, crash, 11) // replays 7..11 and rewrites the snapshot
	reopenOK(t, crash, 11) // must know the rewritten snapshot
	h := open(t, crash, file.Options{Hold: true})
	if doc, err := h.Get(ctx, key); err != nil || doc.Revision != 11 {
		t.Fatalf("daemon after recovery: %d %v", doc.Revision, err)
	}
	noneAside(t, crash)
}

// The marks are local to the machine (the project ignores them): a clone
// has the daemon's snapshot and journal but no mark. The snapshot holds the
// journal's latest value, so it is kept, not moved aside.
func TestDaemonSnapshotWithoutItsMarkIsKept(t *testing.T) {
	dir := t.TempDir()
	s := heldPatched(t, dir, 8, file.Options{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path(dir, ".marks")); err != nil {
		t.Fatal(err)
	}
	reopenOK(t, dir, 9)
	if _, err := os.Stat(path(dir, ".marks")); err != nil {
		t.Fatalf("the kept snapshot was not marked: %v", err)
	}
	reopenOK(t, dir, 9)
}

// Snapshot rewrites that fail after writing their mark (here: the rename
// fails, again and again) never push out the mark of the snapshot that is
// still on disk.
func TestFailedRewritesKeepTheMarkOfTheSnapshotOnDisk(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	s := heldPatched(t, dir, 4, file.Options{Fault: func(p string) error {
		if p == "snapshot.rename" && fail.Load() {
			return errors.New("EIO (injected)")
		}
		return nil
	}})
	fail.Store(true)
	for i := range 8 {
		if _, err := s.Update(ctx, key, bumpPatch(i)); err != nil {
			t.Fatal(err)
		}
		if err := s.Verify(ctx, key); err == nil {
			t.Fatal("snapshot rewritten through a failing rename")
		}
	}
	crash := t.TempDir()
	copyTree(t, dir, crash)
	reopenOK(t, crash, 13)
}

// Crash images taken at each named point of the persistence path while
// many writers commit (patch, memo and lazy value; patch and value; value
// alone) and the snapshot is rewritten every millisecond: each image holds
// every commit acknowledged before it was taken, verifies, and recovers
// without moving anything aside.
func TestHoldCrashImages(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedCrashDoc(t, dir, 200)

	type ack struct {
		rev   uint64
		actor string
	}
	type image struct {
		dir, point string
		acked      int // acks[:acked] were acknowledged before it was taken
	}
	var (
		mu     sync.Mutex
		acks   []ack
		images []image
		taken  = map[string]int{}
		rng    = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
		live   atomic.Bool
	)
	perPoint := testenv.Rounds(3, 5)
	if testing.Short() {
		perPoint = 2
	}
	fault := func(point string) error {
		if !live.Load() {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if taken[point] >= perPoint || point[:len("journal")] == "journal" && rng.IntN(8) != 0 {
			return nil
		}
		taken[point]++
		img := image{dir: t.TempDir(), point: point, acked: len(acks)}
		if err := crashImage(dir, img.dir); err != nil {
			t.Error(err)
			return nil
		}
		images = append(images, img)
		return nil
	}
	// Journal files are sealed into segments all along (a few hundred
	// records each).
	s, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: time.Millisecond, Fault: fault, SegmentBytes: 16 << 10})
	if err != nil {
		t.Fatal(err)
	}
	live.Store(true)
	// Until every point has its images (a few seconds at most).
	enough := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range []string{"journal.write", "journal.sync", "snapshot.write", "snapshot.sync", "snapshot.rename", "segment.rename", "segment.sync", "dir.sync"} {
			if taken[p] < perPoint {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	cache := &crashProposer{}
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wrng := rand.New(rand.NewPCG(uint64(w), 5))
			for i := 0; i < 40 || !enough() && time.Now().Before(deadline); i++ {
				actor := fmt.Sprintf("w%d-%d", w, i)
				res, err := cache.update(ctx, s, key, w, i, actor, wrng)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Changed {
					mu.Lock()
					acks = append(acks, ack{res.Revision, actor})
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	live.Store(false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, img := range images {
		var logs bytes.Buffer
		s, err := file.Open(img.dir, file.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := s.Get(ctx, key)
		if err == nil {
			err = s.Verify(ctx, key)
		}
		if err != nil {
			t.Fatalf("image at %s: %v\n%s", img.point, err, logs.Bytes())
		}
		recs, err := s.History(ctx, key, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if uint64(len(recs)) != doc.Revision {
			t.Fatalf("image at %s: %d records, document at revision %d", img.point, len(recs), doc.Revision)
		}
		for _, a := range acks[:img.acked] {
			if a.rev > doc.Revision || recs[a.rev-1].Actor != a.actor {
				t.Fatalf("image at %s: acknowledged revision %d (%s) lost (image at %d)", img.point, a.rev, a.actor, doc.Revision)
			}
		}
		s.Close()
		for _, pat := range []string{"*.unjournaled-*", "*.corrupt-*"} {
			if aside := glob(t, img.dir, pat); len(aside) > 0 {
				t.Fatalf("image at %s: moved aside: %v\n%s", img.point, aside, logs.Bytes())
			}
		}
	}
	t.Logf("%d commits, %d crash images: %v; %d segments", len(acks), len(images), taken, len(segFiles(t, dir)))
}

// crashImage copies the ASDD manifest's files from dir to img in the order
// that keeps the copy one a crash can leave while a daemon writes: what is
// written first is copied first (the snapshot, then the marks), and the
// journal files last. Segments never change once sealed; the live journal
// only grows, until it is sealed — a listing of the segments that changed
// while the live journal was read means it was, and the journal is copied
// again.
func crashImage(dir, img string) error {
	for _, name := range []string{"manifest.json.tmp", "manifest.json", ".marks"} {
		if err := copyIfThere(path(dir, name), path(img, name)); err != nil {
			return err
		}
	}
	list := func() ([]string, error) { return filepath.Glob(path(dir, "journal.*-*.ndjson")) }
	for {
		before, err := list()
		if err != nil {
			return err
		}
		live, err := os.ReadFile(path(dir, "journal.ndjson"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		after, err := list()
		if err != nil {
			return err
		}
		if !slices.Equal(before, after) {
			continue
		}
		for _, seg := range before {
			if err := copyIfThere(seg, filepath.Join(path(img, ""), filepath.Base(seg))); err != nil {
				return err
			}
		}
		if live != nil {
			return os.WriteFile(path(img, "journal.ndjson"), live, 0o644)
		}
		return nil
	}
}

func copyIfThere(from, to string) error {
	b, err := os.ReadFile(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
