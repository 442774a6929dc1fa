package file_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/reason"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/store/storetest"
)

// The conformance suite with journals sealed into segments: in direct mode
// after every commit (1 byte) and every few commits; in Hold mode, which
// seals only once the paced snapshot holds a revision of the live journal,
// in the tests whose commits outlast a snapshot interval.
func TestConformanceSegments(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 700} {
		t.Run(fmt.Sprintf("direct/%dB", n), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				return open(t, t.TempDir(), file.Options{SegmentBytes: n})
			})
		})
		t.Run(fmt.Sprintf("hold/%dB", n), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				return open(t, t.TempDir(), file.Options{Hold: true, SnapshotInterval: time.Millisecond, SegmentBytes: n})
			})
		})
	}
}

// segFiles returns the sealed segments of the ASDD manifest's journal in
// dir, in revision order (the names sort so).
func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	return glob(t, dir, "journal.*-*.ndjson")
}

// readChain reads the records of every journal file of the manifest in dir
// (segments, then the live journal), checking that each file holds the
// revisions its name says and that the hash chain runs across the files.
func readChain(t *testing.T, dir string) []store.Record {
	t.Helper()
	var all []store.Record
	files := append(segFiles(t, dir), path(dir, "journal.ndjson"))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) && i == len(files)-1 {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var recs []store.Record
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			r, err := store.DecodeRecord(bytes.TrimSuffix(line, []byte("\n")))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var prev *store.Record
			if len(all) > 0 {
				prev = &all[len(all)-1]
			}
			if err := store.Chain(prev, r); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			all = append(all, r)
			recs = append(recs, r)
		}
		if i < len(files)-1 {
			var from, to uint64
			base := filepath.Base(f)
			if _, err := fmt.Sscanf(base, "journal.%d-%d.ndjson", &from, &to); err != nil {
				t.Fatalf("segment name %s: %v", base, err)
			}
			if len(recs) == 0 || recs[0].Rev != from || recs[len(recs)-1].Rev != to {
				t.Fatalf("segment %s does not hold revisions %d to %d", base, from, to)
			}
			if want := fmt.Sprintf("journal.%012d-%012d.ndjson", from, to); base != want {
				t.Fatalf("segment name %s, want %s", base, want)
			}
		}
	}
	return all
}

// commitSegmented makes n commits in direct mode with the given threshold
// and returns the value after each revision (index rev-1).
func commitSegmented(t *testing.T, dir string, n int, segBytes int64) [][]byte {
	t.Helper()
	s := open(t, dir, file.Options{SegmentBytes: segBytes})
	var values [][]byte
	for i := 1; i <= n; i++ {
		res, err := s.Update(ctx, key, setN(i), store.Create())
		if err != nil {
			t.Fatal(err)
		}
		if res.Revision != uint64(i) {
			t.Fatalf("commit %d at revision %d", i, res.Revision)
		}
		values = append(values, res.Value)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return values
}

// Direct mode: the live journal is sealed once past the threshold, right
// after the snapshot holds its last record; the chain runs on across the
// files; every read works across them exactly as on one file.
func TestRotationDirect(t *testing.T) {
	dir := t.TempDir()
	const n, seg = 300, 4 << 10
	values := commitSegmented(t, dir, n, seg)
	segs := segFiles(t, dir)
	if len(segs) < 5 {
		t.Fatalf("%d segments after %d commits with a %d-byte threshold", len(segs), n, seg)
	}
	for _, f := range segs {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		// Sealed once past the threshold: by the commit that crossed it.
		if fi.Size() < seg || fi.Size() > seg+1024 {
			t.Fatalf("segment %s holds %d bytes (threshold %d)", f, fi.Size(), seg)
		}
	}
	if recs := readChain(t, dir); len(recs) != n {
		t.Fatalf("the journal files hold %d records, want %d", len(recs), n)
	}

	s := open(t, dir, file.Options{SegmentBytes: seg})
	recs, err := s.History(ctx, key, 0, 0)
	if err != nil || len(recs) != n {
		t.Fatalf("history: %d records, %v", len(recs), err)
	}
	for i, r := range recs {
		if r.Rev != uint64(i+1) {
			t.Fatalf("history: revision %d at position %d", r.Rev, i)
		}
	}
	for _, rng := range [][2]uint64{{1, 1}, {2, 40}, {17, 230}, {n - 3, 0}, {n, n}, {150, 150}} {
		part, err := s.History(ctx, key, rng[0], rng[1])
		to := rng[1]
		if to == 0 {
			to = n
		}
		if err != nil || len(part) != int(to-rng[0]+1) || part[0].Rev != rng[0] || part[len(part)-1].Rev != to {
			t.Fatalf("History(%d, %d): %d records, %v", rng[0], rng[1], len(part), err)
		}
	}
	for rev := uint64(1); rev <= n; rev += 7 {
		doc, err := s.GetAt(ctx, key, rev)
		if err != nil || doc.Revision != rev || sum(t, doc.Value) != sum(t, values[rev-1]) {
			t.Fatalf("GetAt(%d): rev %d %v", rev, doc.Revision, err)
		}
	}
	if patch, err := store.DiffRevisions(ctx, s, key, 3, 250); err != nil || len(patch) < 10 {
		t.Fatalf("diff across segments: %s %v", patch, err)
	}
	// (Rollback across segments: the conformance suite, with a segment
	// per commit; store.Rollback checks this key's schema.)
	storetest.VerifyAll(t, s)
	if keys, err := s.Keys(ctx); err != nil || len(keys) != 1 || keys[0] != key {
		t.Fatalf("keys: %v %v", keys, err)
	}
	files, err := s.JournalFiles(key)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range append(segFiles(t, dir), path(dir, "journal.ndjson"), path(dir, ".head"), path(dir, ".marks")) {
		if _, err := os.Stat(f); err == nil {
			rel, _ := filepath.Rel(dir, f)
			want = append(want, filepath.ToSlash(rel))
		}
	}
	if !slices.Equal(files, want) || len(files) < 5 {
		t.Fatalf("journal files %v, want %v", files, want)
	}
}

// Opening reads the live journal and the newest segment's last line, not
// the older segments: damage to an old segment does not stop the document
// from opening or committing, and Verify and a History that reads it name
// the file and the revision.
func TestOpenReadsOnlyWhatItNeeds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	values := commitSegmented(t, dir, 200, 2<<10)
	segs := segFiles(t, dir)
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}
	// Damage the second segment's third record.
	victim := segs[1]
	lines := bytes.SplitAfter(must(os.ReadFile(victim)), []byte("\n"))
	first, err := store.DecodeRecord(bytes.TrimSpace(lines[0]))
	if err != nil {
		t.Fatal(err)
	}
	lines[2] = bytes.Replace(lines[2], []byte(`"actor":"t"`), []byte(`"actor":"x"`), 1)
	os.WriteFile(victim, bytes.Join(lines, nil), 0o644)
	bad := first.Rev + 2

	s := open(t, dir, file.Options{SegmentBytes: 2 << 10})
	doc, err := s.Get(ctx, key)
	if err != nil || doc.Revision != 200 || sum(t, doc.Value) != sum(t, values[199]) {
		t.Fatalf("open with a damaged old segment: rev %d %v", doc.Revision, err)
	}
	if res, err := s.Update(ctx, key, setN(201)); err != nil || res.Revision != 201 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	if _, err := s.History(ctx, key, 190, 0); err != nil {
		t.Fatalf("history of the recent revisions: %v", err)
	}
	for name, err := range map[string]error{
		"verify":  s.Verify(ctx, key),
		"history": func() error { _, err := s.History(ctx, key, 0, 0); return err }(),
		"getat":   func() error { _, err := s.GetAt(ctx, key, bad+5); return err }(),
	} {
		if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), filepath.Base(victim)) || !strings.Contains(err.Error(), fmt.Sprintf("revision %d", bad)) {
			t.Fatalf("%s: got %v, want CORRUPT_STATE naming %s and revision %d", name, err, filepath.Base(victim), bad)
		}
	}

	// A missing segment is a gap, named too.
	dir2 := t.TempDir()
	commitSegmented(t, dir2, 120, 2<<10)
	segs2 := segFiles(t, dir2)
	os.Remove(segs2[1])
	s2 := open(t, dir2, file.Options{})
	if _, err := s2.Get(ctx, key); err != nil {
		t.Fatalf("open with a segment missing: %v", err)
	}
	err = s2.Verify(ctx, key)
	if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), filepath.Base(segs2[2])) {
		t.Fatalf("verify with a segment missing: %v", err)
	}
}

// A snapshot that is missing or damaged is rebuilt from every segment and
// the live journal, the damaged file kept aside.
func TestSnapshotRebuiltFromAllSegments(t *testing.T) {
	t.Parallel()
	for _, damage := range []string{"missing", "truncated", "edited"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			values := commitSegmented(t, dir, 150, 2<<10)
			snap := path(dir, "manifest.json")
			switch damage {
			case "missing":
				os.Remove(snap)
			case "truncated":
				b := must(os.ReadFile(snap))
				os.WriteFile(snap, b[:len(b)/2], 0o644)
			case "edited":
				os.WriteFile(snap, []byte(`{"n":-1}`), 0o644)
			}
			doc, err := reopen(t, dir)
			if err != nil || doc.Revision != 150 || sum(t, doc.Value) != sum(t, values[149]) {
				t.Fatalf("rev %d, %v", doc.Revision, err)
			}
			if damage != "missing" && len(glob(t, dir, "manifest.json.*-*")) != 1 {
				t.Fatal("damaged snapshot not kept aside")
			}
		})
	}
}

// Commits go on across many processes' rotations: a store that read the
// journal before another store sealed it reloads it.
func TestTwoStoresRotateInterleaved(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, file.Options{SegmentBytes: 1 << 10})
	b := open(t, dir, file.Options{SegmentBytes: -1}) // never rotates itself
	for i := 1; i <= 120; i++ {
		s := a
		if i%3 == 0 {
			s = b
		}
		res, err := s.Update(ctx, key, setN(i), store.Create())
		if err != nil || res.Revision != uint64(i) {
			t.Fatalf("commit %d: rev %d %v", i, res.Revision, err)
		}
	}
	if len(segFiles(t, dir)) < 5 {
		t.Fatal("too few segments")
	}
	if recs := readChain(t, dir); len(recs) != 120 {
		t.Fatalf("%d records", len(recs))
	}
	storetest.VerifyAll(t, b)
}

// Watch from any revision, through segments, and following a journal that
// is sealed while it is followed — by another store in direct mode.
func TestWatchAcrossSegments(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	commitSegmented(t, dir, 100, 1<<10)
	w := open(t, dir, file.Options{PollInterval: time.Millisecond})
	wr := open(t, dir, file.Options{SegmentBytes: 1 << 10})
	latest := uint64(100)
	for _, from := range []uint64{0, 1, 37, 99, 100, 150, 400} {
		wctx, cancel := context.WithCancel(ctx)
		got := make(chan store.Commit, 1024)
		errc := make(chan error, 1)
		go func() {
			for c, err := range w.Watch(wctx, key, from) {
				if err != nil {
					errc <- err
					return
				}
				got <- c
			}
			errc <- nil
		}()
		for i := 0; i < 60; i++ { // sealed several times while followed
			if _, err := wr.Update(ctx, key, setN(1000+i)); err != nil {
				t.Fatal(err)
			}
		}
		latest += 60
		for want := from + 1; want <= latest; want++ {
			select {
			case c := <-got:
				if c.Rev != want {
					t.Fatalf("watch from %d: got revision %d, want %d", from, c.Rev, want)
				}
			case err := <-errc:
				t.Fatalf("watch from %d ended: %v", from, err)
			case <-time.After(10 * time.Second):
				t.Fatalf("watch from %d: stuck before revision %d", from, want)
			}
		}
		cancel()
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(segFiles(t, dir)); n < 20 {
		t.Fatalf("only %d segments", n)
	}
}

// Hold mode: the syncer seals the live journal between group writes while
// many writers commit (patches, memos, whole values) and the snapshot is
// rewritten every millisecond; nothing is lost or duplicated, and the
// files verify and reopen in direct mode.
func TestRotationHold(t *testing.T) {
	dir := t.TempDir()
	seedCrashDoc(t, dir, 100)
	s, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: time.Millisecond, SegmentBytes: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acked := map[uint64]string{}
	var wg sync.WaitGroup
	cache := &crashProposer{}
	// A rotation waits for the snapshot being written: on a busy machine
	// 150 commits per writer may seal fewer than 5 segments; then the
	// writers go on for another 150 each.
	for round := 0; round == 0 || len(segFiles(t, dir)) < 5 && round < 20; round++ {
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), uint64(7+round)))
				for i := round * 150; i < (round+1)*150; i++ {
					actor := fmt.Sprintf("w%d-%d", w, i)
					res, err := cache.update(ctx, s, key, w, i, actor, rng)
					if err != nil {
						t.Error(err)
						return
					}
					if res.Changed {
						mu.Lock()
						if a, dup := acked[res.Revision]; dup {
							t.Errorf("revision %d acknowledged twice (%s, %s)", res.Revision, a, actor)
						}
						acked[res.Revision] = actor
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
	}
	hist, err := s.History(ctx, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(segFiles(t, dir)); n < 5 {
		t.Fatalf("%d segments", n)
	}
	recs := readChain(t, dir)
	if len(recs) != len(acked)+1 || len(hist) != len(recs) {
		t.Fatalf("%d records in the files, %d in history, %d acknowledged commits + the seed", len(recs), len(hist), len(acked))
	}
	for rev, actor := range acked {
		if recs[rev-1].Actor != actor || hist[rev-1].Actor != actor {
			t.Fatalf("revision %d: %s in the files, %s in history, %s acknowledged", rev, recs[rev-1].Actor, hist[rev-1].Actor, actor)
		}
	}
	reopenOK(t, dir, uint64(len(recs)))
}

// Hold mode with a snapshot that lags: a journal file is sealed only once
// the snapshot holds one of its revisions, so after a crash recovery reads
// the newest segment at most — never an older one.
func TestHoldRotationWaitsForTheSnapshot(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, file.Options{Hold: true, SnapshotInterval: time.Hour, SegmentBytes: 2 << 10})
	if _, err := s.Update(ctx, key, bump(0), store.Create()); err != nil {
		t.Fatal(err)
	}
	commit := func(n int) {
		for i := range n {
			if _, err := s.Update(ctx, key, bumpPatch(i%4)); err != nil {
				t.Fatal(err)
			}
		}
	}
	commit(100)
	if n := len(segFiles(t, dir)); n != 0 {
		t.Fatalf("%d segments sealed while the snapshot held none of their revisions", n)
	}
	for round := range 4 {
		if err := s.Verify(ctx, key); err != nil { // the snapshot at the latest revision
			t.Fatal(err)
		}
		commit(100)
		segs := segFiles(t, dir)
		if len(segs) != round+1 {
			t.Fatalf("round %d: %d segments, want %d", round, len(segs), round+1)
		}
	}
	want, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	// A crash now: the snapshot is inside the newest segment. Damage every
	// older segment in the image: recovery does not read them.
	crash := t.TempDir()
	copyTree(t, dir, crash)
	segs := segFiles(t, crash)
	for _, f := range segs[:len(segs)-1] {
		os.WriteFile(f, []byte("damaged\n"), 0o644)
	}
	c := open(t, crash, file.Options{})
	got, err := c.Get(ctx, key)
	if wantRaw, _ := want.Bytes(); err != nil || got.Revision != want.Revision || !jsonEqual(got.Value, wantRaw) {
		t.Fatalf("recovered rev %d (want %d), %v", got.Revision, want.Revision, err)
	}
	noneAside(t, crash)
	if err := c.Verify(ctx, key); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), filepath.Base(segs[0])) {
		t.Fatalf("verify of the damaged image: %v", err)
	}
	// The undamaged image recovers and verifies.
	crash2 := t.TempDir()
	copyTree(t, dir, crash2)
	reopenOK(t, crash2, want.Revision)
}

// Crash images taken at every named point of the persistence path in direct
// mode, rotations included (the journal is sealed every few commits): each
// image holds every commit acknowledged before it was taken, recovers to
// the value of the last commit it holds, and verifies.
func TestRotationCrashImagesDirect(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	type image struct {
		dir, point string
		acked      int
	}
	var images []image
	perPoint := testenv.Rounds(3, 8)
	if testing.Short() {
		perPoint = 2
	}
	acked := 0
	taken, seen := map[string]int{}, map[string]int{}
	fault := func(point string) error {
		// Every third time a point is reached, eight times at most: the
		// images spread over the run.
		if seen[point]++; seen[point]%3 != 1 || taken[point] >= perPoint {
			return nil
		}
		taken[point]++
		img := image{dir: t.TempDir(), point: point, acked: acked}
		copyTree(t, dir, img.dir) // the committer holds the lock: the files are still
		images = append(images, img)
		return nil
	}
	s := open(t, dir, file.Options{SegmentBytes: 1 << 10, Fault: fault})
	var values [][]byte
	for i := 1; i <= 120; i++ {
		res, err := s.Update(ctx, key, setN(i), store.Create())
		if err != nil {
			t.Fatal(err)
		}
		values = append(values, res.Value)
		acked = i
	}
	for _, p := range []string{"journal.write", "journal.sync", "snapshot.write", "snapshot.sync", "snapshot.rename", "segment.rename", "segment.sync", "dir.sync"} {
		if taken[p] == 0 {
			t.Fatalf("no image at %s (%v)", p, taken)
		}
	}
	for _, img := range images {
		c, err := file.Open(img.dir, file.Options{SegmentBytes: 1 << 10})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := c.Get(ctx, key)
		if reason.CodeOf(err) == reason.NotFound && img.acked == 0 {
			c.Close()
			continue // before the first commit
		}
		if err != nil {
			t.Fatalf("image at %s: %v", img.point, err)
		}
		if doc.Revision < uint64(img.acked) || doc.Revision > uint64(img.acked)+1 || sum(t, doc.Value) != sum(t, values[doc.Revision-1]) {
			t.Fatalf("image at %s after %d acknowledged commits: revision %d", img.point, img.acked, doc.Revision)
		}
		if err := c.Verify(ctx, key); err != nil {
			t.Fatalf("image at %s: %v", img.point, err)
		}
		recs, err := c.History(ctx, key, 0, 0)
		if err != nil || uint64(len(recs)) != doc.Revision {
			t.Fatalf("image at %s: %d records at revision %d, %v", img.point, len(recs), doc.Revision, err)
		}
		// The image goes on committing (and sealing) where it stopped.
		for i := range 30 {
			if _, err := c.Update(ctx, key, setN(500+i)); err != nil {
				t.Fatalf("image at %s: commit: %v", img.point, err)
			}
		}
		if err := c.Verify(ctx, key); err != nil {
			t.Fatalf("image at %s: after more commits: %v", img.point, err)
		}
		c.Close()
		noneAside(t, img.dir)
	}
	t.Logf("%d images: %v; %d segments", len(images), taken, len(segFiles(t, dir)))
}

// A rotation that fails is not a failed commit: the commit is acknowledged,
// the journal stays live, and it is sealed later; a directory sync that
// fails after the rename leaves the segment sealed.
func TestRotationFaults(t *testing.T) {
	boom := errors.New("EIO (injected)")
	for _, point := range []string{"segment.rename", "segment.sync"} {
		t.Run(point, func(t *testing.T) {
			for _, hold := range []bool{false, true} {
				dir := t.TempDir()
				var fail atomic.Int32
				fail.Store(3)
				s := open(t, dir, file.Options{Hold: hold, SnapshotInterval: time.Millisecond, SegmentBytes: 1 << 10, Fault: func(p string) error {
					if p == point && fail.Add(-1) >= 0 {
						return boom
					}
					return nil
				}})
				for i := 1; i <= 150; i++ {
					if res, err := s.Update(ctx, key, setN(i), store.Create()); err != nil || res.Revision != uint64(i) {
						t.Fatalf("hold %v: commit %d: %+v %v", hold, i, res, err)
					}
					if hold && i%10 == 0 {
						if err := s.Verify(ctx, key); err != nil {
							t.Fatal(err)
						}
					}
				}
				if fail.Load() >= 0 {
					t.Fatalf("hold %v: %s never reached", hold, point)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if len(segFiles(t, dir)) < 2 {
					t.Fatalf("hold %v: not sealed after the faults", hold)
				}
				if recs := readChain(t, dir); len(recs) != 150 {
					t.Fatalf("hold %v: %d records", hold, len(recs))
				}
				reopenOK(t, dir, 150)
			}
		})
	}
}

// A file named as a segment whose revisions overlap another's was not made
// by a rotation: opening, Verify and History name both files
// (CORRUPT_STATE) instead of reading one and skipping the other.
func TestOverlappingSegmentsRefused(t *testing.T) {
	dir := t.TempDir()
	commitSegmented(t, dir, 60, 1<<10)
	segs := segFiles(t, dir)
	if len(segs) < 2 {
		t.Fatalf("segments %v", segs)
	}
	var from, to uint64
	if _, err := fmt.Sscanf(filepath.Base(segs[1]), "journal.%d-%d.ndjson", &from, &to); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(filepath.Dir(segs[1]), fmt.Sprintf("journal.%012d-%012d.ndjson", from+1, to))
	if err := os.WriteFile(stray, []byte("tampered\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, file.Options{})
	_, gerr := s.Get(ctx, key)
	verr := s.Verify(ctx, key)
	_, herr := s.History(ctx, key, 0, 0)
	for _, err := range []error{gerr, verr, herr} {
		if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), filepath.Base(stray)) || !strings.Contains(err.Error(), filepath.Base(segs[1])) {
			t.Fatalf("with %s beside %s: %v, want CORRUPT_STATE naming both", filepath.Base(stray), filepath.Base(segs[1]), err)
		}
	}
	files, err := file.JournalFilesIn(dir, key)
	if reason.CodeOf(err) != reason.CorruptState || files != nil {
		t.Fatalf("JournalFilesIn: %v, %v", files, err)
	}
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	if files, err = file.JournalFilesIn(dir, key); err != nil || len(files) < len(segs) {
		t.Fatalf("JournalFilesIn after the stray file went: %v, %v (segments %d)", files, err, len(segs))
	}
	storetest.VerifyAll(t, open(t, dir, file.Options{}))
}
