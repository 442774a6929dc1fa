package file

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// A direct commit on a value opened by its checkpoint decodes only what
// its patch goes into (jsonval.DecodeLazy); it writes the journal and the
// snapshot a commit on the decoded value writes, byte for byte, and what
// the lazy tree does not take (a member named twice, a snapshot that does
// not parse) goes the way it went before.
func TestDirectPatchLazy(t *testing.T) {
	const value = `{"z":{"b":[1,{"y":"<é>","x":null}],"a":"\u0041"},"slices":[{"id":"S1","status":"A","phase":{"k":1,"j":2}},{"id":"S2","status":"B"}],"beats":{},"revision":1}`
	patches := []string{
		`[{"op":"add","path":"/beats/spec","value":{"t":"2026-01-01T00:00:00Z","n":1}},{"op":"replace","path":"/revision","value":2}]`,
		`[{"op":"replace","path":"/slices/1/status","value":"C"},{"op":"add","path":"/slices/0/phase/a","value":[0]},{"op":"remove","path":"/z/b/1/x"},{"op":"replace","path":"/revision","value":3}]`,
		`[{"op":"add","path":"/slices/-","value":{"id":"S3"}},{"op":"replace","path":"/z","value":{"c":1}}]`,
	}
	// Large enough to be decoded while the update's function runs.
	var big strings.Builder
	big.WriteString(`{"z":{"b":[1,{"y":"<é>","x":null}],"a":"\u0041"},"slices":[{"id":"S1","status":"A","phase":{"k":1,"j":2}},{"id":"S2","status":"B"}`)
	for big.Len() < 2*earlyMin {
		fmt.Fprintf(&big, `,{"id":"S%d","status":"A","phase":{"k":1,"j":[2,{"\u00e9":"é","a":null}]}}`, big.Len())
	}
	big.WriteString(`],"beats":{},"revision":1}`)
	now := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	for _, tc := range []struct {
		name  string
		value string                   // "": value
		edit  func(snap []byte) []byte // the snapshot as the checkpoint names it
		lazy  bool                     // the commits go by the lazy tree
		fails reason.Code              // of the commit by the checkpoint
	}{
		{name: "as written", lazy: true},
		{name: "large", value: big.String(), lazy: true},
		{name: "a member named twice", edit: func(b []byte) []byte {
			return []byte(`{"z":{"a":"A","a":"A","b":[1,{"x":null,"y":"<é>"}]},"slices":[{"id":"S1","status":"A","phase":{"k":1,"j":2}},{"id":"S2","status":"B"}],"beats":{},"revision":1}`)
		}},
		{name: "does not parse", edit: func(b []byte) []byte {
			return []byte(`{"z":{"a":"A","b":[1,{"x":null,"y":"<é>"}]]},"slices":[],"beats":{},"revision":1}`)
		}, fails: reason.CorruptState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := [2]string{t.TempDir(), t.TempDir()} // by the checkpoint; by the full open
			opts := Options{Now: now}
			for _, dir := range dirs {
				s, err := Open(dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				v := cmp.Or(tc.value, value)
				if _, err := s.Update(context.Background(), cpKey, func(store.Document) (store.Change, error) {
					return store.Change{Value: []byte(v), Actor: "t", Reason: "set"}, nil
				}, store.Create()); err != nil {
					t.Fatal(err)
				}
				s.Close()
			}
			if tc.edit != nil {
				for _, dir := range dirs {
					snap := tc.edit(readT(t, cpFile(dir, "manifest.json")))
					writeT(t, cpFile(dir, "manifest.json"), snap)
					// The checkpoint names the edited file (as if the
					// commit had written it).
					var c checkpoint
					if err := json.Unmarshal(readT(t, cpFile(dir, ".checkpoint")), &c); err != nil {
						t.Fatal(err)
					}
					c.File = store.HashBytes(snap)
					b, _ := json.Marshal(c)
					writeT(t, cpFile(dir, ".checkpoint"), b)
				}
			}
			if err := os.Remove(cpFile(dirs[1], ".checkpoint")); err != nil {
				t.Fatal(err)
			}
			var errs [2]error
			for i, dir := range dirs {
				s, err := Open(dir, opts)
				if err != nil {
					t.Fatal(err)
				}
				d, err := s.doc(cpKey)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range patches {
					_, err := s.Update(context.Background(), cpKey, func(store.Document) (store.Change, error) {
						if early := d.early != nil; early != (tc.lazy && i == 0 && tc.value != "") {
							t.Errorf("store %d: lazy tree decoded while the function runs: %v", i, early)
						}
						return store.Change{Patch: json.RawMessage(p), Actor: "t", Reason: "patch"}, nil
					})
					if err != nil {
						errs[i] = err
						break
					}
					if got := i == 0 && d.tree == nil; got != (tc.lazy && i == 0) {
						t.Fatalf("store %d: commit by the lazy tree: %v, want %v", i, got, tc.lazy)
					}
					if d.early != nil {
						t.Fatalf("store %d: the early tree was not taken by the commit", i)
					}
				}
				s.Close()
			}
			if reason.CodeOf(errs[0]) != tc.fails || errs[1] != nil {
				t.Fatalf("commits: %v by the checkpoint (want %q), %v by the full open", errs[0], tc.fails, errs[1])
			}
			if tc.fails != "" {
				return // the full open moved the file aside instead, as it does
			}
			if !cpFast(t, dirs[0], opts) {
				t.Fatal("the next open does not go by the checkpoint the commits wrote")
			}
			for _, name := range []string{"manifest.json", "journal.ndjson"} {
				if a, b := readT(t, cpFile(dirs[0], name)), readT(t, cpFile(dirs[1], name)); string(a) != string(b) {
					out, _ := exec.Command("diff", cpFile(dirs[0], name), cpFile(dirs[1], name)).CombinedOutput()
					t.Fatalf("%s differs from the full open's:\n%s", name, out)
				}
			}
		})
	}
}

func readT(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeT(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
