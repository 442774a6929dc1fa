package progress

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func seedCorpus(f *testing.F, name string) {
	files, err := Render(sample(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(files[name])
	f.Add([]byte{})
	f.Add([]byte("\n\n```json\n"))
}

// FuzzParseRequirements: no input panics, and whatever parses renders back
// to text that parses to the same requirements.
func FuzzParseRequirements(f *testing.F) {
	seedCorpus(f, RequirementsFile)
	f.Add([]byte("# Requirements\n\n- Version: 1.0.0\n- Last updated: t\n\n## Edge cases\n\n- a\n  \n  b\n\n## Specification\n\n\n## Specification\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequirements(b)
		if err != nil {
			return
		}
		again, err := ParseRequirements(RenderRequirements(*r))
		if err != nil {
			t.Fatalf("rendered requirements do not parse: %v", err)
		}
		if r.Version == oneLine(r.Version) && r.LastUpdated == oneLine(r.LastUpdated) {
			if diff := cmp.Diff(r, again); diff != "" {
				t.Fatalf("round trip (-parsed +reparsed):\n%s", diff)
			}
		}
	})
}

// FuzzParseChanges: no input panics, and whatever parses renders back to a
// log that parses to the same changes.
func FuzzParseChanges(f *testing.F) {
	seedCorpus(f, ChangesFile)
	f.Add([]byte(`{"iteration_marker":2,"timestamp":"x"}` + "\n" + `{"timestamp":"t","file":"a","action":"create","iteration":3,"agent":"cd","description":""}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseChanges(b)
		if err != nil {
			return
		}
		out, err := RenderChanges(*c)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseChanges(out)
		if err != nil {
			t.Fatalf("rendered log does not parse: %v\n%s", err, out)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("round trip (-parsed +reparsed):\n%s", diff)
		}
	})
}

// FuzzParseTimeline: no input panics.
func FuzzParseTimeline(f *testing.F) {
	seedCorpus(f, TimelineFile)
	f.Fuzz(func(t *testing.T, b []byte) {
		tl, err := ParseTimeline(b)
		if err == nil && tl == nil {
			t.Fatal("nil timeline without an error")
		}
	})
}

// FuzzParse feeds one input to every parser through Parse: no panic, and an
// error always names a file.
func FuzzParse(f *testing.F) {
	files, err := Render(sample(f))
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range Files {
		f.Add(files[name])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, name := range Files {
			if _, err := Parse(map[string][]byte{name: b}); err != nil && !strings.Contains(err.Error(), name) {
				t.Fatalf("error does not name %s: %v", name, err)
			}
		}
	})
}
