package asdd

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// TestCheckDirectEdit: what a hand edit of the manifest may change (issue
// 21 item 4: adopted only when it passes the domain's rules).
func TestCheckDirectEdit(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S", Name: "Login"})
	w.do(AddSlice{ID: "T"})
	w.do(LockSlice{Slice: "T", Holder: "spec", TTL: time.Hour})
	prev, err := Encode(w.m)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		m, _ := decodeLoose(prev)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	slice := func(m map[string]any, i int) map[string]any { return m["slices"].([]any)[i].(map[string]any) }
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		code reason.Code // "" adopted
	}{
		{"rename a slice", func(m map[string]any) { slice(m, 0)["name"] = "Sign in" }, ""},
		{"describe a slice", func(m map[string]any) { slice(m, 0)["description"] = "OAuth too" }, ""},
		{"the sprint", func(m map[string]any) { m["project_context"].(map[string]any)["current_sprint"] = "S9" }, ""},
		{"a member the custodian does not know", func(m map[string]any) { slice(m, 1)["jira"] = "AUTH-7" }, ""},
		{"skip to DONE", func(m map[string]any) { slice(m, 0)["status"] = "DONE" }, reason.InvalidTransition},
		{"break a lease", func(m map[string]any) { delete(slice(m, 1), "lock") }, reason.InvalidTransition},
		{"forge a chain entry", func(m map[string]any) {
			slice(m, 0)["confidence_chain"] = []any{map[string]any{"agent": "discovery", "score": 0.99}}
		}, reason.InvalidTransition},
		{"add a slice", func(m map[string]any) {
			m["slices"] = append(m["slices"].([]any), map[string]any{"slice_id": "U", "status": "DISCOVERY"})
		}, reason.InvalidTransition},
		{"remove a slice", func(m map[string]any) { m["slices"] = m["slices"].([]any)[:1] }, reason.InvalidTransition},
		{"a heartbeat", func(m map[string]any) {
			m["agent_heartbeats"] = map[string]any{"spec": map[string]any{"status": "ACTIVE"}}
		}, reason.InvalidTransition},
		{"the revision", func(m map[string]any) { m["revision"] = 99 }, reason.InvalidTransition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDirectEdit(prev, edit(tc.edit))
			if reason.CodeOf(err) != tc.code || (tc.code == "") != (err == nil) {
				t.Fatalf("got %v, want %q", err, tc.code)
			}
		})
	}
}
