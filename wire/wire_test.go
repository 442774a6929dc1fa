package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
)

// Every ASDD operation the clients send round-trips through its name.
func TestASDDOpsRoundTrip(t *testing.T) {
	n := 3
	ops := []asdd.Op{
		asdd.Init{Sprint: "S1"}, asdd.AddSlice{ID: "SLICE-001", Name: "n"}, asdd.Quick{Description: "fix"},
		asdd.LockSlice{Slice: "S", Holder: "h"}, asdd.UnlockSlice{Slice: "S", Force: true, Role: "TL"},
		asdd.Beat{Agent: "spec_agent", Status: asdd.HeartbeatActive, Wave: &n},
		asdd.Proposal{Agent: "spec", Slice: "S", Score: 0.9, Uncertainty: []string{"u"}},
		asdd.Resolve{Slice: "S", Role: "TL"}, asdd.Approve{Slice: "S", Role: "TL"}, asdd.AddTask{Slice: "S", ID: "T1"},
		asdd.CompleteTask{Slice: "S", ID: "T1"}, asdd.ClaimTask{Slice: "S", ID: "T1", Agent: "impl-1"}, asdd.ClearReview{Role: "TL"}, asdd.CorrectAssumption{Slice: "S", Role: "PO"},
		asdd.ReportFailure{Slice: "S", Agent: "validation"}, asdd.FlagDrift{Slice: "S", Paths: map[string]string{"a": "b"}},
		asdd.AgentTimeout{Agent: "spec"}, asdd.ClearMarkers{Heartbeat: "spec_agent"}, asdd.AttachBranch{Slice: "S", Agent: "implementation", Branch: "asdd/S/x"},
	}
	if len(ops) != len(asddOps) {
		t.Fatalf("test covers %d operations, the table has %d", len(ops), len(asddOps))
	}
	for _, op := range ops {
		name, ok := ASDDOpName(op)
		if !ok {
			t.Fatalf("%T has no name", op)
		}
		body, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeASDDOp(name, body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, op) {
			t.Errorf("%s: decoded %#v, want %#v", name, got, op)
		}
	}
	if _, err := DecodeASDDOp("nope", []byte(`{}`)); reason.CodeOf(err) != reason.NotFound {
		t.Errorf("unknown operation: %v", err)
	}
}

func TestCycleOpsRoundTrip(t *testing.T) {
	ops := []cycle.Op{cycle.Iterate{Extension: "x"}, cycle.Complete{}, cycle.SetAgent{Agent: "ra", Status: "running"},
		cycle.SetTask{ID: "T1", Status: "completed"}, cycle.Pause{Reason: "r"}, cycle.Resume{}}
	for _, op := range ops {
		req, err := CycleRequestOf("cycle-1", op, nil, "a")
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeCycleOp(req.Op, req.Args)
		if err != nil {
			t.Fatalf("%s: %v", req.Op, err)
		}
		if !reflect.DeepEqual(got, op) {
			t.Errorf("%s: decoded %#v, want %#v", req.Op, got, op)
		}
	}
}

// Requests are strict: unknown fields, trailing data, invalid UTF-8 and
// malformed JSON are INVALID_INPUT, and nothing else decodes.
func TestDecodeStrictRefuses(t *testing.T) {
	for _, body := range []string{`{"Agent":"a","Nope":1}`, `{"Agent":"a","Agent":"b"}`, `{"Agent":"a","agent":"b"}`, `{} x`, `{}}`, "{\"Agent\":\"\xff\"}", `{`, ``, `[]`} {
		var b asdd.Beat
		if err := DecodeStrict([]byte(body), &b); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("%q: %v, want INVALID_INPUT", body, err)
		}
	}
}

// Any body either decodes into an operation (and is then valid UTF-8 JSON)
// or is refused with a reason code; nothing panics.
func FuzzDecodeASDDOp(f *testing.F) {
	for _, s := range []string{
		`{"Agent":"spec_agent","Status":"ACTIVE","Slice":"","Wave":null,"Completed":12,"Remaining":null}`,
		` { "agent" : "a" , "STATUS" : "IDLE" , "wave" : -0 } `, `{"Agent":"a","Agent":"b"}`, `{"Wave":1.5}`,
		`{"Agent":"` + "\xff" + `"}`, `{}`, `{}}`, `{} x`, `[]`, `null`, ``, "{}\u2028", `{"Score":2}`,
		`{"BaseRevision":1,"FeatureBranch":"f"}`, `{"BaseRevision":1} x`, `{"base_revision":1,"BaseRevision":2}`,
	} {
		f.Add("heartbeat", []byte(s))
		f.Add("propose", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		op, err := DecodeASDDOp(name, b)
		if err != nil {
			if reason.CodeOf(err) == "" {
				t.Fatalf("%q: error without a reason code: %v", b, err)
			}
			return
		}
		if !utf8.Valid(b) || !json.Valid(b) {
			t.Fatalf("%q decoded to %#v", b, op)
		}
	})
}
