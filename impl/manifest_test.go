package impl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/custodian-dev/custodian/reason"
)

var t0 = time.Date(2026, 2, 22, 10, 0, 0, 0, time.UTC)

// original is a manifest as the script writes it with jq (two-space indent),
// with a field the script never writes (checkpoint, ADR-021) to check that
// unknown fields survive.
const original = `{
  "version": "1.0.0",
  "plan": {
    "path": "docs/plans/003-auth.md",
    "number": "003",
    "title": "Auth <&> sessions",
    "decomposed_at": "2026-02-22T10:00:00Z"
  },
  "phases": [
    {
      "number": 1,
      "depends_on": [],
      "bounded_contexts": [
        "BC-1"
      ]
    }
  ],
  "tasks": [
    {
      "id": "1.1",
      "phase": 1,
      "description": "Add \"login\" endpoint",
      "bounded_contexts": [
        "BC-1"
      ],
      "status": "pending",
      "branch": null,
      "check_results": null,
      "error": null,
      "retries": 0,
      "created_at": "2026-02-22T10:00:00Z",
      "updated_at": "2026-02-22T10:00:00Z",
      "acceptance_criteria": [{"description": "401 on missing auth", "verified": false}]
    }
  ],
  "checkpoint": {"agent_id": "impl-worker", "phase": 1}
}`

func TestDecodeEncodeRoundTrip(t *testing.T) {
	m, err := Decode([]byte(original))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, []byte(original)); err != nil {
		t.Fatal(err)
	}
	if string(got) != want.String() {
		t.Fatalf("round trip changed the manifest:\n got %s\nwant %s", got, want.String())
	}
}

func TestEncodeFieldOrder(t *testing.T) {
	m, err := New("p.md", "001", "T", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddTask(NewTask{ID: "1.1", Phase: 1, Description: "d", DependsOn: []int{}, BoundedContexts: []string{"A", "B"}}, t0); err != nil {
		t.Fatal(err)
	}
	got, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":"1.0.0","plan":{"path":"p.md","number":"001","title":"T","decomposed_at":"2026-02-22T10:00:00Z"},` +
		`"phases":[{"number":1,"depends_on":[],"bounded_contexts":["A","B"]}],` +
		`"tasks":[{"id":"1.1","phase":1,"description":"d","bounded_contexts":["A","B"],"status":"pending","branch":null,"check_results":null,"error":null,"retries":0,"created_at":"2026-02-22T10:00:00Z","updated_at":"2026-02-22T10:00:00Z"}]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"not json", `{"version": `, "unexpected end"},
		{"array", `[]`, "want a JSON object, found an array"},
		{"trailing", `{} {}`, "after top-level value"},
		{"plan not object", `{"plan": 3}`, "plan: want a JSON object"},
		{"number not string", `{"plan": {"number": 3}}`, `plan: field "number": want a string, found number`},
		{"tasks not array", `{"tasks": {}}`, `field "tasks": want`},
		{"retries string", `{"tasks": [{"id": "1.1", "retries": "x"}]}`, `tasks[0] (id "1.1"): field "retries": want a whole number, found string`},
		{"phase fraction", `{"tasks": [{"id": "1.1", "phase": 1.5}]}`, `field "phase": want a whole number`},
		{"depends_on strings", `{"phases": [{"number": 1, "depends_on": ["x"]}]}`, `phases[0]: field "depends_on[0]": want a whole number, found string`},
		{"branch number", `{"tasks": [{"id": "a", "branch": 3}]}`, `field "branch": want a string or null, found number`},
		{"null manifest", `null`, "want a JSON object, found null"},
		{"null plan", `{"plan": null}`, "plan: want a JSON object, found null"},
		{"null task", `{"tasks": [null]}`, "tasks[0]: want a JSON object, found null"},
		{"null retries", `{"tasks": [{"retries": null, "id": "a"}]}`, `tasks[0] (id "a"): field "retries": want a whole number, found null`},
		{"null status", `{"tasks": [{"status": null}]}`, `tasks[0]: field "status": want a string, found null`},
		{"null in list", `{"phases": [{"bounded_contexts": ["a", null]}]}`, `phases[0]: field "bounded_contexts[1]": want a string, found null`},
		{"later value bad", `{"version": "1", "version": 2}`, `manifest: field "version": want a string, found number`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.in))
			if err == nil {
				t.Fatal("decoded without error")
			}
			if reason.CodeOf(err) != reason.CorruptState {
				t.Errorf("code %q, want CORRUPT_STATE", reason.CodeOf(err))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// TestDecodeDuplicateNames: a name given twice keeps its first position
// and its last value, as jq reads it, in the manifest, its plan, phases and
// tasks, small objects and large; inside an unknown member it is kept as
// written.
func TestDecodeDuplicateNames(t *testing.T) {
	var large, largeWant strings.Builder
	large.WriteString(`{"version":"1.0.0"`)
	for i := range 20 {
		fmt.Fprintf(&large, `,"k%d":%d`, i, i)
	}
	large.WriteString(`,"k3":"again","k19":"last"}`)
	largeWant.WriteString(`{"version":"1.0.0","plan":{"path":"","number":"","title":"","decomposed_at":""},"phases":[],"tasks":[]`)
	for i := range 20 {
		v := strconv.Itoa(i)
		switch i {
		case 3:
			v = `"again"`
		case 19:
			v = `"last"`
		}
		fmt.Fprintf(&largeWant, `,"k%d":%s`, i, v)
	}
	largeWant.WriteString(`}`)
	for _, c := range []struct{ in, want string }{
		{`{"version":"0.9","version":"1.0.0","x":1,"x":2}`,
			`{"version":"1.0.0","plan":{"path":"","number":"","title":"","decomposed_at":""},"phases":[],"tasks":[],"x":2}`},
		{`{"plan":{"path":"a","x":1},"plan":{"number":"2"},"y":{"a":1,"a":2}}`,
			`{"version":"","plan":{"path":"","number":"2","title":"","decomposed_at":""},"phases":[],"tasks":[],"y":{"a":1,"a":2}}`},
		{`{"phases":[{"number":1,"n":1,"number":2,"n":2,"m":0}],"tasks":[{"id":"a","z":1,"id":"b","z":[2]}]}`,
			`{"version":"","plan":{"path":"","number":"","title":"","decomposed_at":""},"phases":[{"number":2,"depends_on":[],"bounded_contexts":[],"n":2,"m":0}],` +
				`"tasks":[{"id":"b","phase":0,"description":"","bounded_contexts":[],"status":"","branch":null,"check_results":null,"error":null,"retries":0,"created_at":"","updated_at":"","z":[2]}]}`},
		{large.String(), largeWant.String()},
	} {
		m, err := Decode([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		got, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(original))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"tasks":[{"id":"1","branch":null}],"phases":[{"number":1}]}`))
	f.Add([]byte(`{"plan":{"number":"1"},"z":[1,{"a":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data)
		if err != nil {
			if reason.CodeOf(err) != reason.CorruptState {
				t.Fatalf("error without CORRUPT_STATE: %v", err)
			}
			return
		}
		// What decodes encodes, and encoding is a fixed point.
		b1, err := Encode(m)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if !json.Valid(b1) {
			t.Fatalf("encoded invalid JSON: %s", b1)
		}
		m2, err := Decode(b1)
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, b1)
		}
		b2, err := Encode(m2)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", b1, b2)
		}
		// Unknown members survive, in order.
		if a, b := names(t, m.Extra), names(t, m2.Extra); !slices.Equal(a, b) {
			t.Fatalf("unknown members %q became %q", a, b)
		}
		for i := range m.Tasks {
			if a, b := names(t, m.Tasks[i].Extra), names(t, m2.Tasks[i].Extra); !slices.Equal(a, b) {
				t.Fatalf("task %d: unknown members %q became %q", i, a, b)
			}
		}
	})
}

func names(t *testing.T, x []byte) []string {
	var out []string
	if err := eachMember(x, func(name string, _ jsontext.Value) error {
		out = append(out, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMarshalByValueAndPointer: encoding/json gives the same bytes for a
// manifest, a plan, a phase and a task, by value or by pointer.
func TestMarshalByValueAndPointer(t *testing.T) {
	m, err := Decode([]byte(original))
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]any{{*m, m}, {m.Plan, &m.Plan}, {m.Phases[0], &m.Phases[0]}, {m.Tasks[0], &m.Tasks[0]}} {
		a, err1 := json.Marshal(pair[0])
		b, err2 := json.Marshal(pair[1])
		if err1 != nil || err2 != nil || string(a) != string(b) || !strings.HasPrefix(string(a), `{"`) || strings.Contains(string(a), `"Extra"`) {
			t.Errorf("%T: %s / %s (%v, %v)", pair[0], a, b, err1, err2)
		}
	}
}
