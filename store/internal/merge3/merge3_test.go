package merge3_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/custodian-dev/custodian/store/internal/merge3"
)

func TestMergeCarriesOnlyTheEditsOwnChange(t *testing.T) {
	tests := []struct {
		name             string
		base, edit, head string
		want             string // the merged value ("" when a conflict)
		conflict         string // the conflicting member's pointer
	}{
		{name: "no commit after the base: the edit as it is",
			base: `{"a":1,"b":[1]}`, edit: `{"b":[1,2],"a":2,"c":3}`, head: `{"a":1,"b":[1]}`,
			want: `{"b":[1,2],"a":2,"c":3}`},
		{name: "a stale copy written back changes nothing",
			base: `{"tasks":[{"id":"1.1"}]}`, edit: `{"tasks":[{"id":"1.1"}]}`, head: `{"tasks":[{"id":"1.1"},{"id":"1.2"}]}`,
			want: `{"tasks":[{"id":"1.1"},{"id":"1.2"}]}`},
		{name: "a disjoint member change is carried onto the later commit's task",
			base: `{"note":"a","tasks":[{"id":"1.1"}]}`, edit: `{"note":"b","tasks":[{"id":"1.1"}]}`, head: `{"note":"a","tasks":[{"id":"1.1"},{"id":"1.2"}]}`,
			want: `{"note":"b","tasks":[{"id":"1.1"},{"id":"1.2"}]}`},
		{name: "a change to an element the later commit left, while it appended one",
			base: `{"tasks":[{"id":"1.1","d":"x"}]}`, edit: `{"tasks":[{"id":"1.1","d":"y"}]}`, head: `{"tasks":[{"id":"1.1","d":"x"},{"id":"1.2"}]}`,
			want: `{"tasks":[{"id":"1.1","d":"y"},{"id":"1.2"}]}`},
		{name: "the edit appends while the later commit changes an element",
			base: `{"l":[1,2]}`, edit: `{"l":[1,2,3]}`, head: `{"l":[1,5]}`,
			want: `{"l":[1,5,3]}`},
		{name: "both made the same change",
			base: `{"a":1,"b":1}`, edit: `{"a":2,"b":1}`, head: `{"a":2,"b":2}`,
			want: `{"a":2,"b":2}`},
		{name: "both added the same member with the same value",
			base: `{}`, edit: `{"x":{"y":1},"z":1}`, head: `{"x":{"y":1}}`,
			want: `{"x":{"y":1},"z":1}`},
		{name: "head's member order is kept and a removed member goes",
			base: `{"z":1,"a":1,"m":1}`, edit: `{"z":1,"a":1}`, head: `{"z":2,"a":1,"m":1,"k":0}`,
			want: `{"z":2,"a":1,"k":0}`},
		{name: "both changed one member differently",
			base: `{"a":1}`, edit: `{"a":2}`, head: `{"a":3}`, conflict: "/a"},
		{name: "the edit removes a member a later commit changed",
			base: `{"a":{"s":"pending"}}`, edit: `{}`, head: `{"a":{"s":"passed"}}`, conflict: "/a"},
		{name: "the edit removes a member a later commit added to",
			base: `{"t":{"x":1}}`, edit: `{}`, head: `{"t":{"x":1,"y":2}}`, conflict: "/t"},
		{name: "the edit changes a member a later commit removed",
			base: `{"a":1,"b":1}`, edit: `{"a":2,"b":1}`, head: `{"b":1}`, conflict: "/a"},
		{name: "both added one member with different values",
			base: `{}`, edit: `{"x":1}`, head: `{"x":2}`, conflict: "/x"},
		{name: "both appended different elements",
			base: `{"l":[1]}`, edit: `{"l":[1,2]}`, head: `{"l":[1,3]}`, conflict: "/l"},
		{name: "the edit removes an element while a later commit appended one",
			base: `{"l":[1,2]}`, edit: `{"l":[2]}`, head: `{"l":[1,2,3]}`, conflict: "/l"},
		{name: "a later commit removed an element the edit's positions depend on",
			base: `{"l":[1,2]}`, edit: `{"l":[1,9]}`, head: `{"l":[2]}`, conflict: "/l"},
		{name: "an element both changed",
			base: `{"l":[{"s":"a"}]}`, edit: `{"l":[{"s":"b"}]}`, head: `{"l":[{"s":"c"}]}`, conflict: "/l/0/s"},
		{name: "a member name that needs escaping",
			base: `{"a/b":1,"c~d":1}`, edit: `{"a/b":2,"c~d":1}`, head: `{"a/b":3,"c~d":1}`, conflict: "/a~1b"},
		{name: "a member named the empty string",
			base: `{"":{"a":1},"b":1}`, edit: `{"":{"a":2},"b":1}`, head: `{"":{"a":1},"b":2}`,
			want: `{"":{"a":2},"b":2}`},
		{name: "a value replaced by one of another type, on both sides",
			base: `{"a":[1]}`, edit: `{"a":{"x":1}}`, head: `{"a":"s"}`, conflict: "/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, patch, err := merge3.Merge([]byte(tt.base), []byte(tt.edit), []byte(tt.head))
			if tt.conflict != "" {
				var c *merge3.Conflict
				if !errors.As(err, &c) || c.Path != tt.conflict {
					t.Fatalf("got %s, %v; want a conflict at %q", got, err, tt.conflict)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, []byte(tt.want)) {
				t.Fatalf("merged %s, want %s (patch %s)", got, tt.want, patch)
			}
			if !sameOrder(got, []byte(tt.want)) {
				t.Fatalf("merged %s: member order differs from %s", got, tt.want)
			}
		})
	}
}

func TestMergeRefusesWhatIsNotJSON(t *testing.T) {
	for _, in := range [][3]string{{`{`, `{}`, `{}`}, {`{}`, `[] 1`, `{}`}, {`{}`, `{}`, ``}} {
		if _, _, err := merge3.Merge([]byte(in[0]), []byte(in[1]), []byte(in[2])); !errors.Is(err, merge3.ErrNotJSON) {
			t.Errorf("%q: %v, want ErrNotJSON", in, err)
		}
	}
}

// FuzzMerge checks the merge's laws on any three JSON values: with nothing
// committed after the base the edit is taken whole; a stale copy changes
// nothing; the result is the same whichever side is called the edit; and
// it holds both sides' changes (merging either side into it again changes
// nothing).
func FuzzMerge(f *testing.F) {
	f.Add(`{"a":1,"l":[1,2]}`, `{"a":2,"l":[1,2]}`, `{"a":1,"l":[1,2,3]}`)
	f.Add(`{"t":[{"id":"1"}]}`, `{"t":[{"id":"1","s":"x"}]}`, `{"t":[{"id":"1"},{"id":"2"}],"r":2}`)
	f.Add(`[1,{"":2}]`, `[1,{"":3},4]`, `[0,{"":2}]`)
	f.Add(`{"a":{"b":null}}`, `{"a":{}}`, `{"a":{"b":null,"c":true}}`)
	f.Fuzz(func(t *testing.T, base, edit, head string) {
		b, e, h := []byte(base), []byte(edit), []byte(head)
		if !json.Valid(b) || !json.Valid(e) || !json.Valid(h) {
			return
		}
		if got, _, err := merge3.Merge(b, e, b); err != nil || !sameJSON(t, got, e) {
			t.Fatalf("nothing after the base: %s, %v; want the edit", got, err)
		}
		if got, _, err := merge3.Merge(b, b, h); err != nil || !sameJSON(t, got, h) {
			t.Fatalf("stale copy: %s, %v; want head", got, err)
		}
		got, _, err := merge3.Merge(b, e, h)
		other, _, err2 := merge3.Merge(b, h, e)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("not symmetric: %v / %v", err, err2)
		}
		if err != nil {
			var c *merge3.Conflict
			if !errors.As(err, &c) {
				t.Fatalf("not a conflict: %v", err)
			}
			return
		}
		if !sameJSON(t, got, other) {
			t.Fatalf("not symmetric: %s / %s", got, other)
		}
		for _, side := range [][]byte{e, h} {
			again, _, err := merge3.Merge(b, side, got)
			if err != nil || !sameJSON(t, again, got) {
				t.Fatalf("merged %s loses a side's change %s: %s, %v", got, side, again, err)
			}
		}
	})
}

// sameJSON: a and b are the same value, numbers compared as written (a
// number may be out of float64's range: 1E700).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(raw []byte) any {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// sameOrder: the two values' members come in the same order.
func sameOrder(a, b []byte) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && x.String() == y.String()
}
