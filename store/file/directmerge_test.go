package file_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// change returns an update that applies f to the document (keeping a
// "revision" member equal to the commit's revision when keepRev).
func change(keepRev bool, f func(m map[string]any)) store.UpdateFunc {
	return func(cur store.Document) (store.Change, error) {
		m := map[string]any{}
		if cur.Value != nil {
			if err := json.Unmarshal(cur.Value, &m); err != nil {
				return store.Change{}, err
			}
		}
		f(m)
		if keepRev {
			m["revision"] = cur.Revision + 1
		}
		b, _ := json.Marshal(m)
		return store.Change{Value: b, Actor: "t", Reason: "change"}, nil
	}
}

// A direct edit made on an older revision than the latest (a script read
// the file, a commit came, the script wrote back its changed copy) is
// adopted only as a three-way merge: its own change carried onto the
// latest value; one that would undo or overwrite what the later commit
// changed is kept aside as a CONFLICT. Direct mode and Hold mode, with
// the base named by the document's "revision" member or found as the
// revision closest to the edit.
func TestDirectEditIsMergedFromTheRevisionItWasMadeOn(t *testing.T) {
	tasks := func(ids ...string) []any {
		var l []any
		for _, id := range ids {
			l = append(l, map[string]any{"id": id})
		}
		return l
	}
	cases := []struct {
		name   string
		later  func(m map[string]any) // the commit after the edit's base (nil: none)
		edit   func(m map[string]any)
		want   string // "adopted", "unchanged" or "conflict"
		member string // the conflicting member
		check  func(t *testing.T, m map[string]any)
	}{
		{name: "a disjoint change is adopted beside the later commit's",
			later: func(m map[string]any) { m["tasks"] = append(m["tasks"].([]any), map[string]any{"id": "1.2"}) },
			edit:  func(m map[string]any) { m["note"] = "by hand" },
			want:  "adopted",
			check: func(t *testing.T, m map[string]any) {
				if len(m["tasks"].([]any)) != 2 || m["note"] != "by hand" {
					t.Fatalf("merged %v: want task 1.2 and the note", m)
				}
			}},
		{name: "a change to a task the later commit left, while it added one",
			later: func(m map[string]any) { m["tasks"] = append(m["tasks"].([]any), map[string]any{"id": "1.2"}) },
			edit:  func(m map[string]any) { m["tasks"].([]any)[0].(map[string]any)["status"] = "passed" },
			want:  "adopted",
			check: func(t *testing.T, m map[string]any) {
				l := m["tasks"].([]any)
				if len(l) != 2 || l[0].(map[string]any)["status"] != "passed" {
					t.Fatalf("merged %v", m)
				}
			}},
		{name: "a member the later commit changed too is kept aside",
			later: func(m map[string]any) { m["n"] = 10 },
			edit:  func(m map[string]any) { m["n"] = 20 },
			want:  "conflict", member: "/n"},
		{name: "a member removed that the later commit changed is kept aside",
			later: func(m map[string]any) { m["obj"].(map[string]any)["x"] = 2 },
			edit:  func(m map[string]any) { delete(m, "obj") },
			want:  "conflict", member: "/obj"},
		{name: "a member removed that the later commit added to is kept aside",
			later: func(m map[string]any) { m["obj"].(map[string]any)["y"] = 1 },
			edit:  func(m map[string]any) { delete(m, "obj") },
			want:  "conflict", member: "/obj"},
		{name: "a task removed while the later commit added one is kept aside",
			later: func(m map[string]any) { m["tasks"] = append(m["tasks"].([]any), map[string]any{"id": "1.2"}) },
			edit:  func(m map[string]any) { m["tasks"] = tasks() },
			want:  "conflict", member: "/tasks"},
		{name: "a stale copy written back unchanged adopts nothing",
			later: func(m map[string]any) { m["tasks"] = append(m["tasks"].([]any), map[string]any{"id": "1.2"}) },
			edit:  func(m map[string]any) {},
			want:  "unchanged"},
		{name: "with no commit after its base the edit is adopted as it is",
			edit: func(m map[string]any) { m["obj"], m["tasks"] = "replaced", nil },
			want: "adopted",
			check: func(t *testing.T, m map[string]any) {
				if m["n"].(float64) != 2 || m["obj"] != "replaced" || m["tasks"] != nil {
					t.Fatalf("adopted %v", m)
				}
			}},
	}
	for _, hold := range []bool{false, true} {
		for _, keepRev := range []bool{false, true} {
			for _, tc := range cases {
				name := "direct/"
				if hold {
					name = "serve/"
				}
				if keepRev {
					name += "revision member/"
				}
				t.Run(name+tc.name, func(t *testing.T) {
					dir := t.TempDir()
					var log editLog
					opts := file.Options{Hold: hold, DirectEdits: file.DirectEditAdopt, Validate: anyValue, OnDirectEdit: log.add}
					s := open(t, dir, opts)
					mustUpdate(t, s, change(keepRev, func(m map[string]any) {
						m["n"], m["tasks"], m["obj"] = 1, tasks("1.1"), map[string]any{"x": 1}
					}))
					mustUpdate(t, s, change(keepRev, func(m map[string]any) { m["n"] = 2 }))
					awaitFile(t, dir, 2)
					var m map[string]any // the script reads revision 2
					json.Unmarshal(must(os.ReadFile(path(dir, "manifest.json"))), &m)
					head := uint64(2)
					headDoc, _ := s.Get(ctx, key)
					if tc.later != nil {
						mustUpdate(t, s, change(keepRev, tc.later))
						head = 3
						headDoc, _ = s.Get(ctx, key)
					}
					tc.edit(m)
					edit, _ := json.Marshal(m)
					if !hold {
						s.Close()
					}
					// Written whole (a temporary file renamed over it): a
					// write in place can be seen half done by the daemon's
					// watcher, which then keeps it aside as not parsing.
					tmp := path(dir, "manifest.json.edit")
					if err := os.WriteFile(tmp, edit, 0o644); err != nil {
						t.Fatal(err)
					}
					if err := os.Rename(tmp, path(dir, "manifest.json")); err != nil {
						t.Fatal(err)
					}
					if !hold {
						s = open(t, dir, opts)
						if _, err := s.Get(ctx, key); err != nil {
							t.Fatal(err)
						}
					}
					if tc.want == "unchanged" && !hold {
						// A copy of revision 2 in direct mode is a snapshot
						// behind its journal: replayed, nothing to settle.
						doc, err := s.Get(ctx, key)
						if err != nil || doc.Revision != head || sum(t, doc.Value) != sum(t, headDoc.Value) || len(log.evs) > 1 {
							t.Fatalf("stale copy: revision %d, %v, events %+v", doc.Revision, err, log.evs)
						}
						if len(log.evs) == 1 && (!log.evs[0].Unchanged || log.evs[0].Adopted) {
							t.Fatalf("stale copy: %+v", log.evs[0])
						}
						return
					}
					ev := log.wait(t, 1)[0]
					doc, err := s.Get(ctx, key)
					if err != nil {
						t.Fatal(err)
					}
					t.Logf("%+v", ev)
					// Never a newer base than the true one (that would undo
					// what came between); with a revision member, exactly it.
					if ev.Base > 2 || keepRev && ev.Base != 2 {
						t.Errorf("base %d, want 2", ev.Base)
					}
					var got map[string]any
					json.Unmarshal(doc.Value, &got)
					aside := glob(t, dir, "manifest.json.unjournaled-*")
					switch tc.want {
					case "adopted":
						if !ev.Adopted || doc.Revision != head+1 || len(aside) != 0 {
							t.Fatalf("not adopted: %+v; revision %d; aside %v", ev, doc.Revision, aside)
						}
						tc.check(t, got)
					case "unchanged":
						if ev.Adopted || !ev.Unchanged || doc.Revision != head || len(aside) != 0 || ev.Code != "" {
							t.Fatalf("stale copy: %+v; revision %d; aside %v", ev, doc.Revision, aside)
						}
					case "conflict":
						if ev.Adopted || ev.Code != string(reason.Conflict) || doc.Revision != head || len(aside) != 1 {
							t.Fatalf("not kept aside: %+v; revision %d; aside %v", ev, doc.Revision, aside)
						}
						if b := must(os.ReadFile(aside[0])); string(b) != string(edit) {
							t.Fatalf("kept aside %s, want the edit %s", b, edit)
						}
						if ev.Reason == "" || !strings.Contains(ev.Reason, tc.member) {
							t.Fatalf("the reason does not name %s: %s", tc.member, ev.Reason)
						}
						// The escalation shows the edit's own change, not
						// the later commits it would undo.
						var ops []map[string]any
						if json.Unmarshal(ev.Patch, &ops) != nil || len(ops) != 1 || !strings.HasPrefix(ops[0]["path"].(string)+"/", tc.member+"/") && !strings.HasPrefix(tc.member, ops[0]["path"].(string)) {
							t.Fatalf("patch %s: want only the edit's change of %s", ev.Patch, tc.member)
						}
					}
					if tc.want != "adopted" && sum(t, doc.Value) != sum(t, headDoc.Value) {
						t.Fatalf("the document changed: %s, want %s", doc.Value, headDoc.Value)
					}
					s.Close()
					s = open(t, dir, file.Options{})
					if again, err := s.Get(ctx, key); err != nil || again.Revision != doc.Revision {
						t.Fatalf("reopened at %d, %v; want %d", again.Revision, err, doc.Revision)
					}
					if err := s.Verify(ctx, key); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

func mustUpdate(t *testing.T, s *file.Store, f store.UpdateFunc) {
	t.Helper()
	if _, err := s.Update(ctx, key, f, store.Create()); err != nil {
		t.Fatal(err)
	}
}

// awaitFile waits until the snapshot file holds n (the daemon writes it
// shortly after the commit).
func awaitFile(t *testing.T, dir string, n float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var m map[string]any
		b, _ := os.ReadFile(path(dir, "manifest.json"))
		if json.Unmarshal(b, &m) == nil && m["n"] == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot does not hold n=%v within 5 s", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
