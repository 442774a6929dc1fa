package file

import (
	"path"
	"strings"
	"testing"
)

func TestSegmentNames(t *testing.T) {
	for _, key := range []string{".asdd/state/manifest.json", ".impl/manifest.json", ".agents/tmp/state.json", ".workflow/.cycle/c-1.json", "a.journal.b.json", "x.json"} {
		p := pathsFor(key)
		name := p.segmentName(1, 52341)
		want := strings.TrimSuffix(p.journal, "ndjson") + "000000000001-000000052341.ndjson"
		if name != want {
			t.Fatalf("%s: segment %s, want %s", key, name, want)
		}
		from, to, ok := parseSegmentName(path.Base(name), p.segPrefix)
		if !ok || from != 1 || to != 52341 {
			t.Fatalf("%s: %s parses as %d-%d %v", key, name, from, to, ok)
		}
		for _, f := range []string{name, p.journal, p.segmentName(1<<40, 1<<63)} {
			if k, ok := keyForJournal(f); !ok || k != key {
				t.Fatalf("%s names key %q (%v), want %q", f, k, ok, key)
			}
		}
	}
	for _, bad := range []string{
		"journal.ndjson", "journal.1-2.ndjson", "journal.000000000002-000000000001.ndjson",
		"journal.000000000000-000000000001.ndjson", "journal.000000000001-000000000002.ndjson.tmp",
		"journal.000000000001-00000000000x.ndjson", "journal.000000000001-000000000002-000000000003.ndjson",
		"journal.000000000001-999999999999999999999.ndjson",
	} {
		if _, _, ok := parseSegmentName(bad, "journal."); ok {
			t.Fatalf("%s taken for a segment", bad)
		}
	}
	// Another document's journal or segment is never taken for one of
	// this document's segments.
	p := pathsFor("d/state.json")
	for _, other := range []string{"state.journal.ndjson", "state.journal.000000000001-000000000002.journal.ndjson", pathsFor("d/state.journal.000000000001-000000000002.json").segmentName(1, 2)} {
		if _, _, ok := parseSegmentName(path.Base(other), p.segPrefix); ok {
			t.Fatalf("%s taken for a segment of %s", other, p.key)
		}
	}
}

// FuzzSegmentName: names that parse as segments name a revision range
// that round-trips, and keyForJournal never panics.
func FuzzSegmentName(f *testing.F) {
	f.Add("journal.000000000001-000000052341.ndjson")
	f.Add("state.journal.000000000003-000000000009.ndjson")
	f.Add("journal.ndjson")
	f.Fuzz(func(t *testing.T, base string) {
		keyForJournal("d/" + base)
		from, to, ok := parseSegmentName(base, "journal.")
		if !ok {
			return
		}
		if from == 0 || from > to {
			t.Fatalf("%q: range %d-%d", base, from, to)
		}
		p := pathsFor("d/manifest.json")
		f2, t2, ok := parseSegmentName(path.Base(p.segmentName(from, to)), p.segPrefix)
		if !ok || f2 != from || t2 != to {
			t.Fatalf("%q: range %d-%d does not round-trip", base, from, to)
		}
		if k, ok := keyForJournal("d/" + base); !ok || k != "d/manifest.json" {
			t.Fatalf("%q: key %q", base, k)
		}
	})
}
