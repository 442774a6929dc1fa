package asdd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/custodian-dev/custodian/reason"
)

func readSeed(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("testdata/seed000.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func asTree(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v\n%s", err, raw)
	}
	return v
}

// The seed's example manifest (seed 000, all three snippets) decodes,
// passes the schema, and re-encodes with every member it had, adding only
// "revision".
func TestSeedManifestRoundTrip(t *testing.T) {
	raw := readSeed(t)
	m, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Slice("SLICE-001").ConfidenceChain[3].Score; got != 0.83 {
		t.Fatalf("design score = %v", got)
	}
	if got := *m.AgentHeartbeats["implementation_agent"].TasksRemaining; got != 4 {
		t.Fatalf("tasks_remaining = %v", got)
	}
	if got := *m.Slice("RETRO-AUTH-001").RequirementsMissing; got != 2 {
		t.Fatalf("requirements_missing = %v", got)
	}
	out, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	want, got := asTree(t, raw), asTree(t, out)
	if got["revision"] != float64(0) {
		t.Fatalf("revision = %v", got["revision"])
	}
	delete(got, "revision")
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("round trip changed the manifest (-seed +rewritten):\n%s", d)
	}
}

// Members the types do not know survive a rewrite at every level.
func TestUnknownFieldsPreserved(t *testing.T) {
	var tree map[string]any
	if err := json.Unmarshal(readSeed(t), &tree); err != nil {
		t.Fatal(err)
	}
	tree["x_top"] = map[string]any{"a": []any{1.0, "b"}}
	tree["project_context"].(map[string]any)["x_ctx"] = "ctx"
	sl := tree["slices"].([]any)[0].(map[string]any)
	sl["x_slice"] = true
	sl["confidence_chain"].([]any)[0].(map[string]any)["x_entry"] = 7.0
	tree["agent_heartbeats"].(map[string]any)["discovery_agent"].(map[string]any)["x_hb"] = nil
	raw, _ := json.Marshal(tree)
	m, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	// A rule rewrites the manifest; the unknown members stay.
	out, err := Apply(m, Beat{Agent: "discovery", Status: HeartbeatIdle}, DefaultConfig(), fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := Encode(out.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	got := asTree(t, enc)
	for _, c := range []struct {
		name string
		v    any
	}{
		{"top", got["x_top"]},
		{"context", got["project_context"].(map[string]any)["x_ctx"]},
		{"slice", got["slices"].([]any)[0].(map[string]any)["x_slice"]},
		{"entry", got["slices"].([]any)[0].(map[string]any)["confidence_chain"].([]any)[0].(map[string]any)["x_entry"]},
	} {
		if c.v == nil {
			t.Errorf("%s: unknown member lost", c.name)
		}
	}
	hb := got["agent_heartbeats"].(map[string]any)["discovery_agent"].(map[string]any)
	if v, ok := hb["x_hb"]; !ok || v != nil {
		t.Errorf("heartbeat: unknown null member lost: %v", hb)
	}
}

func TestSchemaRejects(t *testing.T) {
	base := string(readSeed(t))
	for _, c := range []struct{ name, from, to, want string }{
		{"score above 1", `"score": 0.91`, `"score": 1.91`, "/slices/0/confidence_chain/0/score"},
		{"unknown status", `"status": "IMPLEMENTATION"`, `"status": "CODING"`, "/slices/0/status"},
		{"blocked without record", `"blocked_at_phase": "IMPLEMENTATION",`, ``, "blocked_at_phase"},
		{"slice without id", `"slice_id": "SLICE-001",`, ``, "slice_id"},
		{"bad slice id", `"SLICE-001"`, `"../etc"`, "/slices/0/slice_id"},
		{"duplicate id", `"slice_id": "SLICE-005"`, `"slice_id": "SLICE-001"`, "duplicate slice_id"},
		{"negative count", `"requirements_missing": 2`, `"requirements_missing": -2`, "requirements_missing"},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := strings.Replace(base, c.from, c.to, 1)
			if raw == base {
				t.Fatalf("replacement %q not applied", c.from)
			}
			_, err := Decode([]byte(raw))
			if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Decode error = %v, want INVALID_INPUT naming %q", err, c.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(readSeedF(f))
	f.Add([]byte(`{"project_context":{},"slices":[],"agent_heartbeats":{}}`))
	f.Add([]byte(`{"slices":[{"slice_id":"A","status":"BLOCKED"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Decode(raw)
		if err != nil {
			if reason.CodeOf(err) == "" {
				t.Fatalf("error without reason code: %v", err)
			}
			return
		}
		out, err := Encode(m)
		if err != nil {
			t.Fatalf("decoded manifest does not re-encode: %v", err)
		}
		m2, err := Decode(out)
		if err != nil {
			t.Fatalf("re-encoded manifest does not decode: %v", err)
		}
		out2, err := Encode(m2)
		if err != nil || string(out) != string(out2) {
			t.Fatalf("encoding not stable:\n%s\n%s", out, out2)
		}
	})
}

func readSeedF(f *testing.F) []byte {
	raw, err := os.ReadFile("testdata/seed000.json")
	if err != nil {
		f.Fatal(err)
	}
	return raw
}

// Clone copies every field (go-cmp sees no difference) and shares nothing
// (changing the copy leaves the original's encoding as it was).
func TestCloneIsDeep(t *testing.T) {
	w := newWorld(t)
	w.drive("S", Implementation)
	w.halt(prop("implementation", "S", 0.5, art("code", "S/c.md")), reason.BelowThreshold, ModeBelowMinimum)
	w.do(AddTask{Slice: "S", ID: "T", Wave: 1, DependsOn: nil})
	m, err := Decode(readSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, orig := range []*Manifest{w.m, m} {
		before, _ := Encode(orig)
		c := orig.Clone()
		// The aggregate Apply keeps is not copied (Clone's copy may change).
		if d := cmp.Diff(orig, c, cmpopts.IgnoreUnexported(Manifest{})); d != "" {
			t.Fatalf("clone differs:\n%s", d)
		}
		for _, s := range c.Slices {
			s.Name = "changed"
			if s.PhaseData != nil {
				s.PhaseData["x"] = "y"
			}
			if len(s.ConfidenceChain) > 0 {
				s.ConfidenceChain[0].Score = 0.01
				s.ConfidenceChain[0].UncertaintyFactors = append(s.ConfidenceChain[0].UncertaintyFactors, "z")
			}
			if len(s.Escalations) > 0 {
				*s.Escalations[0].Score = 0.02
			}
			if len(s.Tasks) > 0 {
				s.Tasks[0].Wave = 9
			}
		}
		for _, h := range c.AgentHeartbeats {
			h.Status = "X"
		}
		if len(c.Extra) > 1 {
			c.Extra[1] = ' ' // the clone's bytes are its own
		}
		after, _ := Encode(orig)
		if string(before) != string(after) {
			t.Fatalf("changing the clone changed the original:\n%s", cmp.Diff(string(before), string(after)))
		}
	}
}
