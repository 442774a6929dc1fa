package server

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
)

// What clients send is read without reflection.
func TestScanBeatReadsClientHeartbeats(t *testing.T) {
	n, zero := 7, 0
	for _, b := range []asdd.Beat{
		{Agent: "spec_agent", Status: asdd.HeartbeatActive},
		{Agent: "impl_agent", Status: asdd.HeartbeatActive, Slice: "SLICE-00001", Wave: &n, Completed: &zero, Remaining: &n},
		{},
	} {
		body, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := scanBeat(body)
		if !ok {
			t.Errorf("%s is not read by the fast path", body)
		} else if !reflect.DeepEqual(got, b) {
			t.Errorf("%s: read %#v, want %#v", body, got, b)
		}
	}
}

// The heartbeat decoder gives exactly what the generic decoder gives, or
// the same error, on any input.
func FuzzDecodeBeat(f *testing.F) {
	for _, s := range []string{
		`{"Agent":"spec_agent","Status":"ACTIVE","Slice":"","Wave":null,"Completed":12,"Remaining":null}`,
		` { "agent" : "a" , "STATUS" : "IDLE" , "wave" : -0 } `,
		`{"Agent":"a","agent":"b"}`, `{"Agent":"a","Agent":"b"}`, `{"Agent":null}`, `{"Wave":1.5}`, `{"Wave":1e2}`,
		`{"Wave":99999999999999999999}`, `{"Wave":"1"}`, `{"ſlice":"x"}`, `{"Kompleted":1}`, `{"Nope":1}`,
		`{"Agent":"\u00e9"}`, `{"Agent":"` + "\xff" + `"}`, `{}`, `{}}`, `{} x`, `[]`, `null`, ``, `{"Wave":01}`,
		"{}\v", "{}\f", "{}\u00a0", "{}\u2028", "{\"Agent\":\"a\"}\u3000", "{} \t\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, werr := decodeOp[asdd.Beat](b)
		got, gerr := decodeBeat(b)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%q: decodeOp %v, decodeBeat %v", b, werr, gerr)
		}
		if werr == nil && !json.Valid(b) {
			t.Fatalf("%q is not JSON, yet decoded", b)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%q:\ndecodeOp   %#v\ndecodeBeat %#v", b, want, got)
		}
	})
}
