package file_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
)

// Lines someone else appended to a journal (through a symlink or a hard
// link, by hand) make every commit CORRUPT_STATE; `repair --keep journal`
// settles it: the journal as found is kept aside whole, the lines that are
// no records of it are taken out, and the document's history goes on.
func TestRepairKeepJournalSettlesForeignLines(t *testing.T) {
	for _, foreign := range []string{
		`{"rev":99,"evil":true}` + "\n",
		"not json at all\n",
		"\n",
	} {
		dir, want := commitN(t, 3)
		j := path(dir, "journal.ndjson")
		clean := must(os.ReadFile(j))
		lines := bytes.SplitAfter(clean, []byte("\n"))
		// A foreign line in the middle and one at the end.
		dirty := append(append(append(bytes.Join(lines[:2], nil), foreign...), bytes.Join(lines[2:], nil)...), foreign...)
		if err := os.WriteFile(j, dirty, 0o644); err != nil {
			t.Fatal(err)
		}
		s := open(t, dir, file.Options{})
		if _, err := s.Update(ctx, key, setN(9)); reason.CodeOf(err) != reason.CorruptState {
			t.Fatalf("%q: Update with foreign lines: %v, want CORRUPT_STATE", foreign, err)
		}
		s.Close()

		s = open(t, dir, file.Options{})
		res, err := s.Repair(ctx, key, file.KeepJournal, "tl", "an agent's lines in the journal")
		if err != nil || res.Revision != 3 {
			t.Fatalf("%q: repair: %+v, %v", foreign, res, err)
		}
		kept := glob(t, dir, "journal.ndjson.foreign-*")
		if len(kept) != 1 || !bytes.Equal(must(os.ReadFile(kept[0])), dirty) {
			t.Fatalf("%q: the journal as found is not kept aside: %v", foreign, kept)
		}
		if got := must(os.ReadFile(j)); !bytes.Equal(got, clean) {
			t.Errorf("%q: journal after repair:\n%s\nwant:\n%s", foreign, got, clean)
		}
		doc, err := s.Get(ctx, key)
		if err != nil || doc.Revision != 3 || sum(t, doc.Value) != sum(t, want) {
			t.Fatalf("%q: after repair: rev %d, %v", foreign, doc.Revision, err)
		}
		if _, err := s.Update(ctx, key, setN(9)); err != nil {
			t.Fatalf("%q: a commit after repair: %v", foreign, err)
		}
		if err := s.Verify(ctx, key); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}
