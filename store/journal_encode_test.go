package store_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/store"
)

// A sealed line is exactly json.Marshal's encoding of the record: the hash
// of every journal line ever written depends on it.
func FuzzSealMatchesMarshal(f *testing.F) {
	f.Add(uint64(1), int64(0), "spec", "spec agent finished <SLICE-001> & more", `[{"op":"replace","path":"/a","value":1}]`, "slice.advanced", `{"slice":"S"}`, "sha256:x", "sha256:y")
	f.Add(uint64(7), int64(1763769600123456789), "", "", `[ {"op" : "add", "path":"/é\u2028", "value":"<&>"} ]`, "", "", "", "")
	f.Add(uint64(9), int64(42), "a\"b\\c\x01", "\xff\xfe", `[]`, "t\u2029", `null`, "", "p")
	f.Add(uint64(3), int64(5), "spec", "r", `[{"op":"replace","path":"/slices/0","value":{"name":"bench slice","q":"a \" b \\","t":"\t x"}}]`, "e", `{"to":"a b","x":" "}`, "", "")
	f.Add(uint64(4), int64(6), "", "", `[{"path":"/a b","value":"x\u2028y\u2029 z"}, "a\u00e2"]`, "", `"\\"`, "", "")
	f.Fuzz(func(t *testing.T, rev uint64, ns int64, actor, reason, patch, typ, data, sum, prev string) {
		if rev == 0 || !json.Valid([]byte(patch)) || (data != "" && !json.Valid([]byte(data))) {
			t.Skip()
		}
		r := store.Record{Rev: rev, Time: time.Unix(0, ns), Actor: actor, Reason: reason, Patch: json.RawMessage(patch), Sum: sum}
		if typ != "" || data != "" {
			var d json.RawMessage
			if data != "" {
				d = json.RawMessage(data)
			}
			r.Events = []store.Event{{Type: typ, Data: d}, {Type: "x"}}
		}
		line, err := r.Seal(prev)
		if err != nil {
			if _, merr := json.Marshal(r); merr == nil {
				t.Fatalf("Seal failed where json.Marshal did not: %v", err)
			}
			return
		}
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if string(line) != string(want)+"\n" {
			t.Fatalf("sealed line differs from json.Marshal:\n got %s\nwant %s", line, want)
		}
		back, err := store.DecodeRecord(line[:len(line)-1])
		if err != nil {
			t.Fatalf("sealed line does not decode: %v", err)
		}
		if back.Hash != r.Hash || back.Prev != r.Prev {
			t.Fatalf("decoded hash %s prev %s, want %s %s", back.Hash, back.Prev, r.Hash, prev)
		}
		// Sealed with a key: the line is json.Marshal's encoding of the
		// record with its MAC, and the MAC checks.
		key := []byte("journal key")
		line, err = r.SealMAC(nil, prev, key)
		if err != nil {
			t.Fatalf("SealMAC failed where Seal did not: %v", err)
		}
		if want, err = json.Marshal(r); err != nil {
			t.Fatal(err)
		}
		if r.MAC == "" || string(line) != string(want)+"\n" {
			t.Fatalf("line sealed with a key differs from json.Marshal:\n got %s\nwant %s", line, want)
		}
		if back, err = store.DecodeRecord(line[:len(line)-1]); err != nil {
			t.Fatalf("line sealed with a key does not decode: %v", err)
		}
		if back.Hash != r.Hash || back.MAC != r.MAC {
			t.Fatalf("decoded hash %s mac %s, want %s %s", back.Hash, back.MAC, r.Hash, r.MAC)
		}
		if err := back.CheckMAC(key); err != nil {
			t.Fatal(err)
		}
		if err := back.CheckMAC([]byte("another key")); err == nil {
			t.Fatal("MAC checks under another key")
		}
	})
}

// BenchmarkSealMAC is a keyed commit's record sealed as the daemon seals
// it under the commit lock: a patch replacing one slice (about 1 KB) and
// one event.
func BenchmarkSealMAC(b *testing.B) {
	patch := json.RawMessage(`[{"op":"replace","path":"/slices/4711","value":{"slice_id":"SLICE-04711","name":"bench slice","type":"FEATURE","status":"SPEC","governance_mode":"MANUAL","created_at":"2026-11-01T00:00:00Z","updated_at":"2026-11-26T01:00:00Z","phase_data":{"intent":"specs/bench/intent.md"},"artifact_hashes":{"specs/bench/intent.md":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},"confidence_chain":[{"agent":"discovery","score":0.97,"at":"2026-11-26T01:00:00Z","artifact":"intent"}],"ccs":0.97}},{"op":"replace","path":"/project_context","value":{"current_sprint":"BENCH","global_confidence_score":0.97}},{"op":"replace","path":"/revision","value":4712}]`)
	event := json.RawMessage(`{"type":"proposal_accepted","slice":"SLICE-04711","agent":"discovery","data":{"from":"DISCOVERY","score":0.97,"to":"SPEC"}}`)
	key := []byte("journal key")
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := store.Record{Rev: uint64(i + 1), Time: time.Unix(1764118800, 0), Actor: "agent:discovery", Reason: "discovery agent's proposal for SLICE-04711 accepted",
			Patch: patch, Events: []store.Event{{Type: "proposal_accepted", Data: event}}}
		var err error
		if buf, err = r.SealMAC(buf[:0], "sha256:0123456789abcdef", key); err != nil {
			b.Fatal(err)
		}
	}
}
