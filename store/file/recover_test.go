package file_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/store/storetest"
)

const key = ".asdd/state/manifest.json"

var ctx = context.Background()

func setN(n int) store.UpdateFunc {
	return func(cur store.Document) (store.Change, error) {
		m := map[string]any{}
		if cur.Value != nil {
			if err := json.Unmarshal(cur.Value, &m); err != nil {
				return store.Change{}, err
			}
		}
		m["n"] = n
		m[strings.Repeat("k", n%5+1)] = []int{n, n * 2}
		b, _ := json.Marshal(m)
		return store.Change{Value: b, Actor: "t", Reason: "set"}, nil
	}
}

// commitN makes a project with n commits and returns its dir and final value.
func commitN(t testing.TB, n int) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	s := open(t, dir, file.Options{})
	var res store.Result
	var err error
	for i := 1; i <= n; i++ {
		if res, err = s.Update(ctx, key, setN(i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	return dir, res.Value
}

func sum(t *testing.T, b []byte) string {
	t.Helper()
	s, err := store.SumOf(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func path(dir, name string) string { return filepath.Join(dir, ".asdd", "state", name) }

func glob(t *testing.T, dir, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(path(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// reopen opens a fresh store on dir, reads the document and verifies.
func reopen(t *testing.T, dir string) (store.Document, error) {
	t.Helper()
	s := open(t, dir, file.Options{})
	doc, err := s.Get(ctx, key)
	if err == nil {
		storetest.VerifyAll(t, s)
	}
	return doc, err
}

func TestTmpRules(t *testing.T) {
	t.Run("interrupted write is removed", func(t *testing.T) {
		dir, want := commitN(t, 3)
		os.WriteFile(path(dir, "manifest.json.tmp"), []byte(`{"half":`), 0o644)
		doc, err := reopen(t, dir)
		if err != nil || sum(t, doc.Value) != sum(t, want) {
			t.Fatalf("got %s, %v", doc.Value, err)
		}
		if _, err := os.Stat(path(dir, "manifest.json.tmp")); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("tmp file left behind")
		}
	})
	t.Run("completed write is promoted", func(t *testing.T) {
		dir, want := commitN(t, 3)
		os.Rename(path(dir, "manifest.json"), path(dir, "manifest.json.tmp"))
		doc, err := reopen(t, dir)
		if err != nil || sum(t, doc.Value) != sum(t, want) {
			t.Fatalf("got %s, %v", doc.Value, err)
		}
	})
	t.Run("seed 002 file without journal", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(path(dir, ""), 0o755)
		os.WriteFile(path(dir, "manifest.json.tmp"), []byte(`{"version":2}`), 0o644)
		doc, err := reopen(t, dir)
		if err != nil || string(doc.Value) != `{"version":2}` || doc.Revision != 0 {
			t.Fatalf("got %s rev %d, %v", doc.Value, doc.Revision, err)
		}
	})
}

func TestTornTailIsCutAndKept(t *testing.T) {
	dir, want := commitN(t, 4)
	j := path(dir, "journal.ndjson")
	data, _ := os.ReadFile(j)
	f, _ := os.OpenFile(j, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"rev":5,"time":"2026-`)
	f.Close()
	doc, err := reopen(t, dir)
	if err != nil || doc.Revision != 4 || sum(t, doc.Value) != sum(t, want) {
		t.Fatalf("got rev %d %s, %v", doc.Revision, doc.Value, err)
	}
	after, _ := os.ReadFile(j)
	if !bytes.Equal(after, data) {
		t.Fatal("torn tail not cut exactly")
	}
	if len(glob(t, dir, "journal.ndjson.broken-*")) != 1 {
		t.Fatal("no .broken copy kept")
	}
	s := open(t, dir, file.Options{})
	if res, err := s.Update(ctx, key, setN(9)); err != nil || res.Revision != 5 {
		t.Fatalf("commit after repair: %+v %v", res, err)
	}
}

func TestBadHashMidChainIsHardError(t *testing.T) {
	dir, _ := commitN(t, 4)
	j := path(dir, "journal.ndjson")
	lines := bytes.SplitAfter(must(os.ReadFile(j)), []byte("\n"))
	lines[1] = bytes.Replace(lines[1], []byte(`"actor":"t"`), []byte(`"actor":"x"`), 1)
	os.WriteFile(j, bytes.Join(lines, nil), 0o644)
	before := must(os.ReadFile(j))
	_, err := reopen(t, dir)
	if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "revision 2") {
		t.Fatalf("got %v, want CORRUPT_STATE naming revision 2", err)
	}
	if reason.ExitCode(err) != 5 {
		t.Fatalf("exit code %d, want 5", reason.ExitCode(err))
	}
	if !bytes.Equal(must(os.ReadFile(j)), before) {
		t.Fatal("a corrupt journal was modified")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestSnapshotTruncatedAtEveryOffset damages the snapshot at every length:
// open recovers the committed value from the journal and keeps the damaged
// file aside.
func TestSnapshotTruncatedAtEveryOffset(t *testing.T) {
	dir, want := commitN(t, 6)
	snap := path(dir, "manifest.json")
	orig := must(os.ReadFile(snap))
	for n := 0; n < len(orig); n++ {
		for _, m := range glob(t, dir, "manifest.json.*-*") {
			os.Remove(m)
		}
		os.WriteFile(snap, orig[:n], 0o644)
		s, err := file.Open(dir, file.Options{})
		if err != nil {
			t.Fatal(err)
		}
		doc, err := s.Get(ctx, key)
		if err != nil {
			t.Fatalf("truncated at %d: %v", n, err)
		}
		if sum(t, doc.Value) != sum(t, want) || doc.Revision != 6 {
			t.Fatalf("truncated at %d: recovered rev %d %s", n, doc.Revision, doc.Value)
		}
		if _, perr := store.SumOf(orig[:n]); perr != nil {
			kept := glob(t, dir, "manifest.json.corrupt-*")
			if len(kept) != 1 || !bytes.Equal(must(os.ReadFile(kept[0])), orig[:n]) {
				t.Fatalf("truncated at %d: damaged file not kept aside (%v)", n, kept)
			}
		}
		if err := s.Verify(ctx, key); err != nil {
			t.Fatalf("truncated at %d: verify: %v", n, err)
		}
		s.Close()
	}
}

func TestSnapshotBitFlips(t *testing.T) {
	t.Parallel()
	dir, want := commitN(t, 6)
	snap := path(dir, "manifest.json")
	orig := must(os.ReadFile(snap))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		b := bytes.Clone(orig)
		for range 1 + rng.IntN(4) {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		os.WriteFile(snap, b, 0o644)
		doc, err := reopen(t, dir)
		if err != nil {
			t.Fatalf("flip %d: %v", i, err)
		}
		if sum(t, doc.Value) != sum(t, want) {
			t.Fatalf("flip %d: recovered a different value", i)
		}
		same, _ := store.SumOf(b)
		if same != sum(t, want) && len(glob(t, dir, "manifest.json.*-*")) == 0 {
			t.Fatalf("flip %d: damaged file not kept", i)
		}
	}
}

func TestCorruptSnapshotWithoutJournalIsRefused(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(path(dir, ""), 0o755)
	os.WriteFile(path(dir, "manifest.json"), []byte(`{"slices":[`), 0o644)
	_, err := reopen(t, dir)
	if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "manifest.json") {
		t.Fatalf("got %v, want CORRUPT_STATE naming the file", err)
	}
	if string(must(os.ReadFile(path(dir, "manifest.json")))) != `{"slices":[` {
		t.Fatal("damaged file was changed")
	}
}

func TestEditBehindTheCustodiansBack(t *testing.T) {
	dir, want := commitN(t, 3)
	os.WriteFile(path(dir, "manifest.json"), []byte(`{"n": 99}`), 0o644)
	doc, err := reopen(t, dir)
	if err != nil || sum(t, doc.Value) != sum(t, want) {
		t.Fatalf("got %s, %v", doc.Value, err)
	}
	kept := glob(t, dir, "manifest.json.unjournaled-*")
	if len(kept) != 1 || string(must(os.ReadFile(kept[0]))) != `{"n": 99}` {
		t.Fatalf("edited file not kept aside: %v", kept)
	}
}

func TestStaleSnapshotIsReplayed(t *testing.T) {
	dir, _ := commitN(t, 2)
	old := must(os.ReadFile(path(dir, "manifest.json")))
	s := open(t, dir, file.Options{})
	res, err := s.Update(ctx, key, setN(3))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.WriteFile(path(dir, "manifest.json"), old, 0o644)
	doc, err := reopen(t, dir)
	if err != nil || doc.Revision != 3 || sum(t, doc.Value) != sum(t, res.Value) {
		t.Fatalf("got rev %d, %v", doc.Revision, err)
	}
}

// A document nobody journaled is adopted by its first commit: one record,
// the commit's own, which says so and keeps the value as it was found.
func TestFirstCommitAdoptsAnUnjournaledFile(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".impl"), 0o755)
	orig := "{\n  \"version\": \"1.0.0\",\n  \"tasks\": []\n}\n"
	os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), []byte(orig), 0o644)
	s := open(t, dir, file.Options{})
	doc, err := s.Get(ctx, ".impl/manifest.json")
	if err != nil || doc.Revision != 0 || string(doc.Value) != orig {
		t.Fatalf("adopted read: %q rev %d %v", doc.Value, doc.Revision, err)
	}
	res, err := s.Update(ctx, ".impl/manifest.json", func(cur store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"version":"1.0.0","tasks":[1]}`), Actor: "impl", Reason: "add"}, nil
	})
	if err != nil || res.Revision != 1 {
		t.Fatalf("first commit: %+v %v", res, err)
	}
	recs, err := s.History(ctx, ".impl/manifest.json", 0, 0)
	if err != nil || len(recs) != 1 || recs[0].Actor != "impl" || len(recs[0].Events) != 1 || recs[0].Events[0].Type != store.AdoptedEvent {
		t.Fatalf("history: %+v %v", recs, err)
	}
	var ev struct{ Found json.RawMessage }
	if err := json.Unmarshal(recs[0].Events[0].Data, &ev); err != nil || sum(t, ev.Found) != sum(t, []byte(orig)) {
		t.Fatalf("the adoption record does not keep the file as found: %s %v", recs[0].Events[0].Data, err)
	}
	storetest.VerifyAll(t, s)
}

func TestSymlinkEscapeIsRefused(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	os.Symlink(outside, filepath.Join(dir, ".asdd"))
	s := open(t, dir, file.Options{})
	_, err := s.Update(ctx, key, setN(1), store.Create())
	if reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("got %v, want INVALID_INPUT", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the root: %v", ents)
	}
}

func TestFaults(t *testing.T) {
	boom := errors.New("injected EIO")
	t.Run("failed journal write changes nothing", func(t *testing.T) {
		dir, want := commitN(t, 2)
		fail := true
		s := open(t, dir, file.Options{Fault: func(p string) error {
			if p == "journal.write" && fail {
				return boom
			}
			return nil
		}})
		if _, err := s.Update(ctx, key, setN(3)); !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
		fail = false
		doc, err := s.Get(ctx, key)
		if err != nil || doc.Revision != 2 || sum(t, doc.Value) != sum(t, want) {
			t.Fatalf("after failed write: rev %d %v", doc.Revision, err)
		}
		if res, err := s.Update(ctx, key, setN(3)); err != nil || res.Revision != 3 {
			t.Fatalf("commit after failed write: %v", err)
		}
		storetest.VerifyAll(t, s)
	})
	t.Run("failed fsync is never retried", func(t *testing.T) {
		dir, _ := commitN(t, 2)
		syncs := 0
		s := open(t, dir, file.Options{Fault: func(p string) error {
			if p == "journal.sync" {
				syncs++
				return boom
			}
			return nil
		}})
		if _, err := s.Update(ctx, key, setN(3)); !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
		if _, err := s.Update(ctx, key, setN(4)); err == nil || syncs != 1 {
			t.Fatalf("store kept writing after a failed fsync (syncs=%d, err=%v)", syncs, err)
		}
		s.Close()
		// The outcome of the failed commit is decided by what reached the
		// file: here the bytes are in the page cache, so it is present.
		doc, err := reopen(t, dir)
		if err != nil || doc.Revision != 3 {
			t.Fatalf("after reopen: rev %d, %v", doc.Revision, err)
		}
	})
	t.Run("failed snapshot replace keeps the commit", func(t *testing.T) {
		dir, _ := commitN(t, 2)
		s := open(t, dir, file.Options{Fault: func(p string) error {
			if p == "snapshot.rename" {
				return boom
			}
			return nil
		}})
		res, err := s.Update(ctx, key, setN(3))
		if err != nil || res.Revision != 3 {
			t.Fatalf("commit: %v", err)
		}
		s.Close()
		if _, err := os.Stat(path(dir, "manifest.json.tmp")); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("tmp left behind")
		}
		doc, err := reopen(t, dir)
		if err != nil || doc.Revision != 3 || sum(t, doc.Value) != sum(t, res.Value) {
			t.Fatalf("after reopen: rev %d, %v", doc.Revision, err)
		}
	})
}

func TestTwoStoresInterleave(t *testing.T) {
	dir := t.TempDir()
	a := open(t, dir, file.Options{})
	b := open(t, dir, file.Options{})
	for i := 1; i <= 10; i++ {
		s := a
		if i%2 == 0 {
			s = b
		}
		res, err := s.Update(ctx, key, setN(i), store.Create())
		if err != nil || res.Revision != uint64(i) {
			t.Fatalf("commit %d: rev %d %v", i, res.Revision, err)
		}
	}
	storetest.VerifyAll(t, a)
}

// Reading a file another tool wrote, never journaled, leaves the project
// as it was: no lock file, nothing else. Its revision 0 is the file; it
// has no records and no other revision.
func TestReadOfForeignFileCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	const key = "notes/foreign.json"
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := []byte(`{"by":"another tool"}`)
	if err := os.WriteFile(filepath.Join(dir, "notes", "foreign.json"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir, file.Options{})
	if doc, err := s.Get(ctx, key); err != nil || string(doc.Value) != string(want) || doc.Revision != 0 {
		t.Fatalf("Get: %d %s %v", doc.Revision, doc.Value, err)
	}
	if doc, err := s.GetAt(ctx, key, 0); err != nil || string(doc.Value) != string(want) || doc.Revision != 0 {
		t.Fatalf("GetAt 0: %d %s %v", doc.Revision, doc.Value, err)
	}
	if _, err := s.GetAt(ctx, key, 1); reason.CodeOf(err) != reason.NotFound {
		t.Fatalf("GetAt 1: %v, want NOT_FOUND", err)
	}
	if recs, err := s.History(ctx, key, 0, 0); err != nil || len(recs) != 0 {
		t.Fatalf("History: %v %v, want none", recs, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "notes")); len(ents) != 1 {
		t.Fatalf("a read left %v beside the file", ents)
	}
}

// A read of a document that does not exist leaves the project as it was:
// no directory, no lock file.
func TestReadOfMissingDocumentCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, file.Options{})
	for _, read := range []func() error{
		func() error { _, err := s.Get(ctx, ".workflow/.cycle/nope.json"); return err },
		func() error { _, err := s.GetAt(ctx, ".workflow/.cycle/nope.json", 1); return err },
		func() error { _, err := s.History(ctx, ".workflow/.cycle/nope.json", 0, 0); return err },
		func() error { return s.Verify(ctx, ".workflow/.cycle/nope.json") },
	} {
		if err := read(); reason.CodeOf(err) != reason.NotFound {
			t.Fatalf("got %v, want NOT_FOUND", err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a read created %v", ents)
	}
}
