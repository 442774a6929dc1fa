package file_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
)

// With the checkpoint a direct commit leaves, what the full open found
// is still found: a journal record rewritten in place (its size and times
// put back) and a snapshot edited by one byte.
func TestCheckpointHidesNoEdit(t *testing.T) {
	t.Run("journal record rewritten in place", func(t *testing.T) {
		dir, _ := commitN(t, 4)
		if len(glob(t, dir, ".checkpoint")) != 1 {
			t.Fatal("a direct commit left no checkpoint")
		}
		j := path(dir, "journal.ndjson")
		fi, err := os.Stat(j)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(must(os.ReadFile(j)), []byte("\n"))
		lines[1] = bytes.Replace(lines[1], []byte(`"actor":"t"`), []byte(`"actor":"x"`), 1)
		f, err := os.OpenFile(j, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(bytes.Join(lines, nil), 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
		os.Chtimes(j, fi.ModTime(), fi.ModTime())
		_, err = reopen(t, dir)
		if reason.CodeOf(err) != reason.CorruptState || !strings.Contains(err.Error(), "revision 2") {
			t.Fatalf("got %v, want CORRUPT_STATE naming revision 2", err)
		}
	})
	t.Run("snapshot edited by one byte", func(t *testing.T) {
		dir, want := commitN(t, 4)
		p := path(dir, "manifest.json")
		b := must(os.ReadFile(p))
		i := bytes.Index(b, []byte(`"n": 4`))
		if i < 0 {
			t.Fatalf("no n in %s", b)
		}
		b[i+len(`"n": `)] = '7'
		os.WriteFile(p, b, 0o644)
		doc, err := reopen(t, dir)
		if err != nil || sum(t, doc.Value) != sum(t, want) {
			t.Fatalf("got %s, %v; want the committed value", doc.Value, err)
		}
		if aside := glob(t, dir, "manifest.json.unjournaled-*"); len(aside) != 1 || !bytes.Equal(must(os.ReadFile(aside[0])), b) {
			t.Fatalf("the edit was not kept aside: %v", aside)
		}
	})
	t.Run("commits go on from the checkpoint", func(t *testing.T) {
		dir, _ := commitN(t, 4)
		for n := 5; n <= 8; n++ {
			s := open(t, dir, file.Options{})
			res, err := s.Update(ctx, key, setN(n))
			if err != nil || res.Revision != uint64(n) {
				t.Fatalf("commit %d: %+v %v", n, res, err)
			}
			s.Close()
		}
		if _, err := reopen(t, dir); err != nil { // reopen verifies every record
			t.Fatal(err)
		}
	})
}
