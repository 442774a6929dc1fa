package asdd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
)

// The corpus under testdata/encoding holds manifests as the previous
// releases wrote them (before unknown members moved onto
// go-json-experiment/json): <name>.json as Encode writes a manifest and
// <name>.compact.json as json.Marshal does (the daemon's snapshot and the
// API). TestEncodingUnchanged decodes each and encodes it again: the bytes
// must not change. CUSTODIAN_GEN_ENCODING=1 writes the corpus again from
// encodingCases (only ever with an encoder known to write the old bytes).
const encodingDir = "testdata/encoding"

func TestEncodingUnchanged(t *testing.T) {
	if os.Getenv("CUSTODIAN_GEN_ENCODING") != "" {
		writeEncodingCorpus(t)
	}
	files, err := filepath.Glob(filepath.Join(encodingDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("encoding corpus has %d files", len(files))
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			m, err := Decode(want)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			if strings.HasSuffix(f, ".compact.json") {
				got, err = json.Marshal(m)
			} else {
				got, err = Encode(m)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("decode → encode changed the bytes\n got %s\nwant %s", got, want)
			}
		})
	}
	// The cases made again in memory encode to the same bytes too — but
	// for unknown-members: the previous releases sorted unknown members by
	// name, and they now stay in the order they were read
	// (TestUnknownMembersKeepTheirOrder).
	for name, m := range encodingCases(t) {
		if name == "unknown-members" {
			continue
		}
		want, err := os.ReadFile(filepath.Join(encodingDir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Encode(m); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: Encode changed the bytes (%v)\n got %s\nwant %s", name, err, got, want)
		}
	}
}

func writeEncodingCorpus(t *testing.T) {
	if err := os.MkdirAll(encodingDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, m := range encodingCases(t) {
		ind, err := Encode(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		comp, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(encodingDir, name+".json"), ind, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(encodingDir, name+".compact.json"), comp, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// encodingCases are the corpus's manifests: the seed's example and the
// previous release's fixture as decoded, one with unknown members at
// every level, and manifests the rules made from sequences of operations.
func encodingCases(t *testing.T) map[string]*Manifest {
	out := map[string]*Manifest{}
	for name, path := range map[string]string{"seed000": "testdata/seed000.json", "prev-release": "../app/testdata/prev-release/.asdd/state/manifest.json"} {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(raw)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[name] = m
	}
	out["unknown-members"] = unknownMembersManifest(t)
	for name, m := range opsManifests(t) {
		out[name] = m
	}
	return out
}

// unknownMembersManifest is a manifest that other tools wrote members into
// at every level the custodian keeps them: odd spacing, HTML and line
// separator characters, numbers as written, names before and after the
// known ones in key order.
func unknownMembersManifest(t *testing.T) *Manifest {
	raw := `{
 "aa_first": {"z": 1, "a": [1, 2.50, -0, 1e21, 1E-7, "x"]},
 "project_context": {"current_sprint": "S<1>&", "zz_ctx": "a\u2028b", "Current_Sprint": "folded?", "product_goals": ["g1", "<g2>"]},
 "slices": [
  {"slice_id": "S-1", "status": "SPEC", "zeta": null, "alpha": {"nested": {"deep": [true, false]}},
   "confidence_chain": [{"agent": "discovery", "score": 0.9, "timestamp": "2026-01-02T03:04:05Z", "x_note": "n\u00e9e \"q\""}],
   "lock": {"holder": "spec", "acquired": "2026-01-02T03:04:05Z", "expires": "2026-01-02T04:04:05Z", "x_lease": 3},
   "tasks": [{"id": "T1", "wave": 1, "status": "pending", "est_hours": 2.5, "labels": ["a", "b"]}],
   "phase_data": {"intent": "specs/a.md"}, "ccs": 0.9, "blockers": [{"id": "B1", "why": "<because>"}], "dissent_notices": [],
   "reasoning_traces": []},
  {"slice_id": "S-2", "status": "DISCOVERY", "created_at": "2026-01-02T03:04:05Z", "": "empty name", "ünï": "code"}
 ],
 "agent_heartbeats": {
  "spec_agent": {"last_execution": "2026-01-02T03:04:05Z", "status": "ACTIVE", "pid": 4242, "host": "h<1>"},
  "qa_agent": {"last_execution": "2026-01-02T03:04:05Z", "status": "IDLE", "current_wave": 0, "tasks_completed": 0}
 },
 "revision": 7,
 "zz_last": {"k": "v"},
 "meta": "x"
}`
	m, err := Decode([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// opsManifests are manifests made by the rules from fixed sequences of
// operations: every kind of slice state the rules write (chains, halts,
// escalations, locks, tasks, sign-offs, retro-spec counters).
func opsManifests(t *testing.T) map[string]*Manifest {
	cfg := DefaultConfig()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	arts := func(agent string, v int) []Artifact {
		var out []Artifact
		for _, a := range stdArts[agent] {
			p := fmt.Sprintf("specs/%s-%d.md", a.Name, v)
			out = append(out, Artifact{Name: a.Name, Path: p, SHA256: h(p), MarkedSHA256: h("marked " + p)})
		}
		return out
	}
	seqs := map[string][]Op{
		"ops-lifecycle": {
			Init{Sprint: "S1", Goals: []string{"ship <auth> & more"}},
			AddSlice{ID: "SLICE-001", Name: "Auth"},
			Proposal{Agent: "discovery", Slice: "SLICE-001", Score: 0.97, Artifacts: arts("discovery", 1)},
			Proposal{Agent: "spec", Slice: "SLICE-001", Score: 0.93, Uncertainty: []string{"NFR latency"}, Artifacts: arts("spec", 1)},
			LockSlice{Slice: "SLICE-001", Holder: "validation", TTL: time.Hour, Reason: "validating"},
			Beat{Agent: "validation", Slice: "SLICE-001", Wave: intp(1), Completed: intp(0), Remaining: intp(3)},
			AddTask{Slice: "SLICE-001", ID: "T1", Title: "model", Wave: 1, By: "validation"},
			AddTask{Slice: "SLICE-001", ID: "T2", Title: "api", Wave: 2, DependsOn: []string{"T1"}, By: "validation"},
		},
		"ops-halt": {
			Init{Sprint: "S2"},
			AddSlice{ID: "SLICE-002", Name: "Payments"},
			Proposal{Agent: "discovery", Slice: "SLICE-002", Score: 0.6, Uncertainty: []string{"who pays?"}, Artifacts: arts("discovery", 1)},
			Resolve{Slice: "SLICE-002", Role: "TL", Rationale: "clarified with finance", Action: "rerun", RootCause: "unclear payer"},
			Proposal{Agent: "discovery", Slice: "SLICE-002", Score: 0.97, Artifacts: arts("discovery", 2)},
			AddSlice{ID: "RETRO-1", Type: TypeRetroSpec},
			Quick{Description: "Fix typo in login header", Agent: "implementation"},
		},
	}
	out := map[string]*Manifest{}
	for name, ops := range seqs {
		var m *Manifest
		for i, op := range ops {
			o, err := Apply(m, op, cfg, now.Add(time.Duration(i)*time.Minute))
			if err != nil {
				t.Fatalf("%s: op %d (%T): %v", name, i, op, err)
			}
			m = o.Manifest
		}
		out[name] = m
	}
	return out
}

func intp(v int) *int { return &v }

// Unknown members are written back in the order they were read, after the
// known members; a member whose name differs from a known one only in case
// is unknown, not folded into the field.
func TestUnknownMembersKeepTheirOrder(t *testing.T) {
	raw := `{"zz":1,"project_context":{"Current_Sprint":"x","current_sprint":"S1","b":[1, 2],"a":{"y":1,"x":2}},` +
		`"slices":[{"status":"SPEC","z_last":true,"slice_id":"S-1","a_first":"<&>"}],"agent_heartbeats":{},"revision":3,"aa":null}`
	m, err := Decode([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"project_context":{"current_sprint":"S1","Current_Sprint":"x","b":[1,2],"a":{"y":1,"x":2}},` +
		`"slices":[{"slice_id":"S-1","status":"SPEC","z_last":true,"a_first":"\u003c\u0026\u003e"}],"agent_heartbeats":{},"revision":3,"zz":1,"aa":null}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if m.ProjectContext.CurrentSprint != "S1" {
		t.Errorf("current_sprint = %q", m.ProjectContext.CurrentSprint)
	}
}

// Marshal writes strings and map keys as encoding/json does — invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped, HTML characters escaped —
// whether or not the value also holds a plain U+FFFD; and a manifest part
// as encodeOptions (the string marshalers on every string) write it.
func FuzzMarshalMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "a\u2028b\u2029", "bad\xffutf8", "\ufffd", "\ufffd\xfe", "tab\t\x00\x7f", "é 日本"} {
		f.Add(s, "key")
		f.Add("x", s)
	}
	f.Fuzz(func(t *testing.T, s, key string) {
		v := map[string]any{key: []any{s, map[string]int{s: 1}}, "s": s}
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Marshal(v)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Marshal = %s, %v; encoding/json writes %s", got, err, want)
		}
		sl := &Slice{SliceID: key, Name: s, PhaseData: map[string]string{s: key}, Extra: Extra(`{"zz":"\u2028"}`)}
		want, err = jsonv2.Marshal(sl, encodeOptions)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Marshal(sl); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Marshal(slice) = %s, %v; encodeOptions write %s", got, err, want)
		}
	})
}
