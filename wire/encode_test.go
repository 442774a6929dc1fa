package wire_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// Encode writes what encoding/json's Encoder (HTML escaping off) writes,
// byte for byte but for one escape, for the responses the server sends.
func TestEncodeAsEncodingJSON(t *testing.T) {
	var values []any
	for _, f := range []string{"seed000.json", "prev-release.json", "ops-halt.json", "unknown-members.json"} {
		b, err := os.ReadFile("../asdd/testdata/encoding/" + f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := asdd.Decode(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, s := range m.Slices {
			values = append(values, &wire.OpResponse{Revision: 7, Committed: true, Outcome: wire.Accepted, Summary: "ok <&> \u2028 \xff",
				Events: []asdd.Event{{Type: "proposal_accepted", Slice: s.SliceID}}, Slice: s, Warnings: []string{"w"},
				Effects: []wire.EffectSummary{{Kind: "notice", Path: "a&b.md"}}})
		}
		values = append(values, m)
	}
	st, err := agentstate.DecodeObject([]byte(`{"task":"x <y>","phases":{"b":1,"a":[1.5,"\u2028"]},"z":null}`))
	if err != nil {
		t.Fatal(err)
	}
	values = append(values,
		&wire.OpResponse{Outcome: wire.Halted, Verdict: reason.New(reason.BelowThreshold, "score 0.5 < 0.9"), Events: []asdd.Event{}},
		wire.ErrorBody{Error: reason.New(reason.InvalidInput, "bad <input>"), Outcome: wire.Rejected},
		&wire.CycleResponse{CycleID: "c", Cycle: cycle.State{}, Synced: []string{}},
		&wire.StateResponse{Revision: 2, State: st},
		map[string]any{"b": 1, "a": []any{"x", 2.5, nil}},
	)
	for i, v := range values {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := wire.Encode(&got, v); err != nil {
			t.Fatal(err)
		}
		// One difference: invalid UTF-8 becomes U+FFFD written as it is,
		// where encoding/json escapes it (the same JSON string).
		w := bytes.ReplaceAll(want.Bytes(), []byte(`\ufffd`), []byte("\uFFFD"))
		if !bytes.Equal(got.Bytes(), w) {
			t.Errorf("value %d (%T):\n got %s\nwant %s", i, v, got.Bytes(), want.Bytes())
		}
	}
}
