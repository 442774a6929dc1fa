package cmdutil

import "testing"

// The short names a user types become the documents' keys; anything else
// is the key as typed.
func TestResolveKeyTakesTheShortNames(t *testing.T) {
	for typed, want := range map[string]string{
		"asdd":                      ".asdd/state/manifest.json",
		"impl":                      ".impl/manifest.json",
		"state":                     ".agents/tmp/state.json",
		"cycle/c-1":                 ".workflow/.cycle/c-1.json",
		"cycle/c-1.json":            ".workflow/.cycle/c-1.json",
		".asdd/state/manifest.json": ".asdd/state/manifest.json",
		"./.impl/manifest.json":     ".impl/manifest.json",
		"manifest.json":             "manifest.json",
		"notes/doc.json":            "notes/doc.json",
		"cycle/":                    "cycle/",
		"cycle/a/b":                 "cycle/a/b",
	} {
		if got := ResolveKey(typed); got != want {
			t.Errorf("ResolveKey(%q) = %q, want %q", typed, got, want)
		}
	}
}
