package file_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

const witnessKey = ".asdd/state/manifest.json"

// commitValues commits n values {"n":i} to witnessKey.
func commitValues(t *testing.T, s *file.Store, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if _, err := s.Update(context.Background(), witnessKey, func(store.Document) (store.Change, error) {
			return store.Change{Value: fmt.Appendf(nil, `{"n":%d}`, i)}, nil
		}, store.Create()); err != nil {
			t.Fatal(err)
		}
	}
}

// copyState copies the document's directory (.asdd/state) to a new
// directory, or back.
func copyState(t *testing.T, from, to string) {
	t.Helper()
	if err := os.RemoveAll(to); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func stateBytes(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s=%q\n", e.Name(), data)
	}
	return b.String()
}

// A state copied back over newer commits (a backup, git stash) is refused
// by every open, by Update without changing a byte, and by Verify, until a
// repair accepts it; restoring the files instead settles it too.
func TestRewoundStateIsRefusedUntilRepaired(t *testing.T) {
	dir, witness := t.TempDir(), t.TempDir()
	stateDir := filepath.Join(dir, ".asdd", "state")
	opts := file.Options{Witness: witness}
	s := open(t, dir, opts)
	commitValues(t, s, 1, 2)
	backup := filepath.Join(t.TempDir(), "state")
	copyState(t, stateDir, backup)
	commitValues(t, s, 3, 3) // revisions 3..5
	s.Close()
	newer := filepath.Join(t.TempDir(), "newer")
	copyState(t, stateDir, newer)

	copyState(t, backup, stateDir) // the rewind
	before := stateBytes(t, stateDir)
	s = open(t, dir, opts)
	if _, err := s.Get(context.Background(), witnessKey); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "from revision 5 to 2") {
		t.Fatalf("Get after the rewind: %v, want CORRUPT_STATE naming revisions 5 and 2", err)
	}
	_, err := s.Update(context.Background(), witnessKey, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"n":99}`)}, nil
	})
	if reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("Update after the rewind: %v, want CORRUPT_STATE", err)
	}
	if after := stateBytes(t, stateDir); after != before {
		t.Fatalf("the refused update changed the files:\n%s\n%s", before, after)
	}
	if err := s.Verify(context.Background(), witnessKey); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "rewound") {
		t.Fatalf("Verify after the rewind: %v, want CORRUPT_STATE (rewound)", err)
	}
	s.Close()

	// Putting the newer files back settles it with no repair.
	copyState(t, newer, stateDir)
	s = open(t, dir, opts)
	if err := s.Verify(context.Background(), witnessKey); err != nil {
		t.Fatalf("Verify with the files restored: %v", err)
	}
	s.Close()

	// Or a person accepts the rewound state.
	copyState(t, backup, stateDir)
	s = open(t, dir, opts)
	defer s.Close()
	if _, err := s.Repair(context.Background(), witnessKey, file.KeepJournal, "tl", "accept the backup"); err != nil {
		t.Fatalf("repair: %v", err)
	}
	commitValues(t, s, 10, 1)
	doc, err := s.Get(context.Background(), witnessKey)
	if err != nil || doc.Revision != 3 || !bytes.Contains(doc.Value, []byte(`10`)) {
		t.Fatalf("after the repair: %+v %v, want revision 3", doc, err)
	}
	if err := s.Verify(context.Background(), witnessKey); err != nil {
		t.Fatalf("Verify after the repair: %v", err)
	}
}

// Another history with as many revisions (another copy's state, another
// branch's) is refused: the record at the witness's revision differs.
func TestAnotherHistoryIsRefused(t *testing.T) {
	a, b, witness := t.TempDir(), t.TempDir(), t.TempDir()
	sa := open(t, a, file.Options{Witness: witness})
	commitValues(t, sa, 1, 3)
	sa.Close()
	sb := open(t, b, file.Options{})
	commitValues(t, sb, 7, 3)
	sb.Close()
	copyState(t, filepath.Join(b, ".asdd", "state"), filepath.Join(a, ".asdd", "state"))
	sa = open(t, a, file.Options{Witness: witness})
	defer sa.Close()
	if _, err := sa.Get(context.Background(), witnessKey); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "another history") {
		t.Fatalf("Get: %v, want CORRUPT_STATE (another history)", err)
	}
}

// A state deleted whole after commits (git clean) is reported by Verify and
// refused by a create, until a repair says to start anew.
func TestDeletedStateIsRefusedUntilRepaired(t *testing.T) {
	dir, witness := t.TempDir(), t.TempDir()
	s := open(t, dir, file.Options{Witness: witness})
	commitValues(t, s, 1, 2)
	s.Close()
	if err := os.RemoveAll(filepath.Join(dir, ".asdd")); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, file.Options{Witness: witness})
	defer s.Close()
	keys, err := s.Keys(context.Background())
	if err != nil || len(keys) != 1 || keys[0] != witnessKey {
		t.Fatalf("Keys: %v %v, want the witnessed key", keys, err)
	}
	if err := s.Verify(context.Background(), witnessKey); reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "are gone") {
		t.Fatalf("Verify: %v, want CORRUPT_STATE (gone)", err)
	}
	_, err = s.Update(context.Background(), witnessKey, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{}`)}, nil
	}, store.Create())
	if reason.CodeOf(err) != reason.CorruptState {
		t.Fatalf("create: %v, want CORRUPT_STATE", err)
	}
	if _, err := s.Repair(context.Background(), witnessKey, file.KeepJournal, "tl", "start over"); err != nil {
		t.Fatalf("repair: %v", err)
	}
	commitValues(t, s, 1, 1)
	if err := s.Verify(context.Background(), witnessKey); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// A project from before witnesses (or a fresh clone) gets one at its first
// open, and a witness behind the journal (a crash before its write) is
// moved forward, not refused.
func TestWitnessFollowsTheJournal(t *testing.T) {
	dir, witness := t.TempDir(), t.TempDir()
	s := open(t, dir, file.Options{})
	commitValues(t, s, 1, 3)
	s.Close()
	s = open(t, dir, file.Options{Witness: witness})
	if _, err := s.Get(context.Background(), witnessKey); err != nil {
		t.Fatal(err)
	}
	s.Close()
	w := filepath.Join(witness, ".asdd%2Fstate%2Fmanifest.json.head")
	if b, err := os.ReadFile(w); err != nil || !bytes.Contains(b, []byte(`"rev":3,`)) {
		t.Fatalf("witness after the first open: %q %v, want revision 3", b, err)
	}
	s = open(t, dir, file.Options{})
	commitValues(t, s, 4, 2) // revisions 4, 5 with no witness kept
	s.Close()
	s = open(t, dir, file.Options{Witness: witness})
	defer s.Close()
	if err := s.Verify(context.Background(), witnessKey); err != nil {
		t.Fatalf("Verify with the witness behind: %v", err)
	}
	commitValues(t, s, 6, 1)
	if b, _ := os.ReadFile(w); !bytes.Contains(b, []byte(`"rev":6,`)) {
		t.Fatalf("witness after a commit: %q, want revision 6", b)
	}
}

// The daemon (Hold mode) never acknowledges a commit appended to a journal
// that git or a restored backup replaced under it: the commit fails with
// CORRUPT_STATE and the file at the journal's path is left as it was.
func TestDaemonRefusesAJournalReplacedUnderIt(t *testing.T) {
	dir, witness := t.TempDir(), t.TempDir()
	stateDir := filepath.Join(dir, ".asdd", "state")
	s := open(t, dir, file.Options{Witness: witness, Hold: true})
	defer s.Close()
	commitValues(t, s, 1, 2)
	journal := filepath.Join(stateDir, "journal.ndjson")
	old, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	// As git does: write a new file and rename it over the old one.
	replaced := append([]byte(nil), old[:bytes.IndexByte(old, '\n')+1]...)
	if err := os.WriteFile(journal+".git-tmp", replaced, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(journal+".git-tmp", journal); err != nil {
		t.Fatal(err)
	}
	_, err = s.Update(context.Background(), witnessKey, func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"n":3}`)}, nil
	})
	if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "replaced or removed while the daemon held it") {
		t.Fatalf("commit onto a replaced journal: %v, want CORRUPT_STATE", err)
	}
	if now, _ := os.ReadFile(journal); !bytes.Equal(now, replaced) {
		t.Fatalf("the journal at its path changed:\n%s", now)
	}
}

// BenchmarkWitness measures what keeping a witness costs a direct-mode
// commit (an open, a write and a close of one more small file) against the
// same commits with none, in the same run.
func BenchmarkWitness(b *testing.B) {
	for _, keep := range []bool{false, true} {
		b.Run(fmt.Sprintf("witness=%v", keep), func(b *testing.B) {
			opts := file.Options{}
			if keep {
				opts.Witness = b.TempDir()
			}
			s, err := file.Open(b.TempDir(), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			note := strings.Repeat("n", 4<<10)
			for i := 0; b.Loop(); i++ {
				if _, err := s.Update(context.Background(), witnessKey, func(store.Document) (store.Change, error) {
					return store.Change{Value: fmt.Appendf(nil, `{"i":%d,"note":%q}`, i, note)}, nil
				}, store.Create()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
