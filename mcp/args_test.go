package mcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// checkStrict: when the strict decode accepts args, the schema accepts
// them too and encoding/json decodes the same value, so skipping the
// schema walk changes nothing; it reports whether it accepted.
func checkStrict[In any](t *testing.T, args string) bool {
	t.Helper()
	sch := schemaFor[In]()
	resolved, err := sch.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	sa := newStrictArgs[In](sch)
	if !sa.ok {
		t.Fatalf("%T: no strict decode", *new(In))
	}
	var got In
	if !sa.decode([]byte(args), &got) {
		return false
	}
	var generic any
	if err := json.Unmarshal([]byte(args), &generic); err != nil {
		t.Fatalf("%s: accepted, but it is not JSON: %v", args, err)
	}
	if err := resolved.Validate(generic); err != nil {
		t.Fatalf("%s: accepted, but the schema refuses it: %v", args, err)
	}
	var want In
	if err := json.Unmarshal([]byte(args), &want); err != nil {
		t.Fatalf("%s: accepted, but encoding/json refuses it: %v", args, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decoded %+v, encoding/json %+v", args, got, want)
	}
	return true
}

func TestStrictArgs(t *testing.T) {
	for _, tc := range []struct {
		args string
		ok   bool
	}{
		{`{"agent":"discovery","slice":"SLICE-001","score":0.9,"artifacts":{"intent":"a.md"},"uncertainty":["scope"]}`, true},
		{`{"agent":"discovery","slice":"SLICE-001","score":0.9,"artifacts":{},"uncertainty":[],"trace":"t.md","to":"DONE","base_revision":7}`, true},
		{` { "agent" : "d\u00e9" , "slice":"S","score":1,"artifacts":{"a":"b"},"uncertainty":["x"] } `, true},
		{`{"agent":"discovery","slice":"SLICE-001","score":0.9,"artifacts":{"intent":"a.md"}}`, false},                       // required missing
		{`{"agent":"discovery","slice":"SLICE-001","score":0,"artifacts":{},"uncertainty":[]}`, false},                       // zero required: the schema decides
		{`{"agent":"discovery","slice":"SLICE-001","score":"high","artifacts":{},"uncertainty":[]}`, false},                  // wrong type
		{`{"agent":"discovery","slice":"SLICE-001","score":0.5,"artifacts":{"a":1},"uncertainty":[]}`, false},                // nested wrong type
		{`{"agent":"discovery","slice":"SLICE-001","score":0.5,"artifacts":{},"uncertainty":[],"extra":1}`, false},           // unknown member
		{`{"Agent":"discovery","slice":"SLICE-001","score":0.5,"artifacts":{},"uncertainty":[]}`, false},                     // names are exact
		{`{"agent":"discovery","agent":"x","slice":"SLICE-001","score":0.5,"artifacts":{},"uncertainty":[]}`, false},         // duplicate member
		{`{"agent":"discovery","slice":"SLICE-001","score":0.5,"artifacts":{},"uncertainty":[],"trace":null}`, false},        // null
		{`{"agent":"discovery","slice":"SLICE-001","score":0.5,"artifacts":{},"uncertainty":[],"base_revision":-1}`, false},  // out of range
		{`{"agent":"discovery","slice":"SLICE-001","score":0.5,"artifacts":{},"uncertainty":[],"base_revision":1.5}`, false}, // not an integer
		{`{"agent":"discovery","slice":"SLICE-001","score":0.5,"artifacts":{},"uncertainty":[]} {}`, false},                  // trailing value
		{`["agent"]`, false},
		{`{"agent":"null","slice":"SLICE-001","score":0.5,"artifacts":{"null":"null"},"uncertainty":["null"]}`, true}, // "null" in strings
	} {
		if got := checkStrict[ProposeIn](t, tc.args); got != tc.ok {
			t.Errorf("%s: strict %v, want %v", tc.args, got, tc.ok)
		}
	}
	if !checkStrict[HeartbeatIn](t, `{"agent":"discovery","status":"ACTIVE","done":3,"wave":1,"remaining":0}`) {
		t.Error("a heartbeat's arguments take the general path")
	}
	if checkStrict[HeartbeatIn](t, `{"agent":"discovery","done":3.0}`) {
		t.Error("3.0 decoded into an int")
	}
}

// FuzzStrictArgs: whatever the strict decode accepts, the schema accepts
// and encoding/json decodes the same.
func FuzzStrictArgs(f *testing.F) {
	for _, s := range []string{
		`{"agent":"discovery","slice":"SLICE-001","score":0.9,"artifacts":{"intent":"a.md"},"uncertainty":["scope"]}`,
		`{"agent":"d","slice":"s","score":1e-3,"artifacts":{"a":"\u0000"},"uncertainty":["\ud800"],"base_revision":18446744073709551615}`,
		`{"agent":"d","slice":"s","score":1,"artifacts":{},"uncertainty":[],"to":"\"null\""}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) { checkStrict[ProposeIn](t, args) })
}
