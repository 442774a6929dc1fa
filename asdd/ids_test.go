package asdd

import (
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// Issue 18 item 6: new identifiers match IDPattern (slices, tasks) and
// NamePattern (lock holders); a newline, a pipe or an escape sequence in
// one is INVALID_INPUT.
func TestIdentifiersValidated(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "SLICE-1", Name: "Login"})
	for _, op := range []Op{
		AddSlice{ID: "SLICE-2\n- Status: RESOLVED", Name: "x"},
		AddSlice{ID: "S|2", Name: "x"},
		AddSlice{ID: "\x1b[2JS", Name: "x"},
		AddTask{Slice: "SLICE-1", ID: "T1\nT9|ready", Title: "x", Wave: 1},
		LockSlice{Slice: "SLICE-1", Holder: "alice\x1b[2J"},
		LockSlice{Slice: "SLICE-1", Holder: "bob\n- Status: RESOLVED"},
		LockSlice{Slice: "SLICE-1", Holder: "eve|x"},
	} {
		w.reject(op, reason.InvalidInput)
	}
	w.do(LockSlice{Slice: "SLICE-1", Holder: "Zoë Dupont", TTL: 0})
}
