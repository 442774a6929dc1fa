package asdd

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/reason"
)

var (
	propConfig = DefaultConfig()
	propSlices = []string{"S1", "S2", "S3"}
	propAgents = []string{"discovery", "spec", "validation", "domain", "design", "task_planning", "implementation",
		"qa", "refactor", "security", "devops", "observability", "knowledge"}
	propScores = []float64{0.3, 0.6, 0.74, 0.75, 0.76, 0.8, 0.84, 0.85, 0.86, 0.87, 0.9, 0.91, 0.93, 0.95, 0.97, 1}
	propRoles  = []string{"TL", "PO", "Security"}
	propPhases = append([]string{BehaviorCapture}, Lifecycle...)
)

func genArtifacts(t *rapid.T, agent string) []Artifact {
	var names []string
	for _, a := range stdArts[agent] {
		names = append(names, a.Name)
	}
	names = append(names, "glossary", "notes")
	var out []Artifact
	picked := rapid.SliceOfNDistinct(rapid.SampledFrom(names), 0, 3, rapid.ID[string]).Draw(t, "artifacts")
	if len(stdArts[agent]) > 0 && rapid.IntRange(0, 3).Draw(t, "required") > 0 && !contains(picked, stdArts[agent][0].Name) {
		picked = append(picked, stdArts[agent][0].Name)
	}
	for _, n := range picked {
		v := rapid.IntRange(1, 2).Draw(t, "variant")
		path := fmt.Sprintf("a/%s-%d.md", n, v)
		content := rapid.IntRange(1, 2).Draw(t, "content")
		out = append(out, Artifact{Name: n, Path: path, SHA256: h(fmt.Sprint(path, content)), MarkedSHA256: h(fmt.Sprint("marked", path, content))})
	}
	return out
}

func genOp(t *rapid.T, m *Manifest) Op {
	slice := rapid.SampledFrom(propSlices).Draw(t, "slice")
	switch rapid.IntRange(0, 14).Draw(t, "kind") {
	case 0:
		return AddSlice{ID: slice, Type: rapid.SampledFrom([]string{TypeFeature, TypeFeature, TypeRetroSpec}).Draw(t, "type")}
	case 1, 2, 3, 4, 11, 12, 13:
		agent := rapid.SampledFrom(propAgents).Draw(t, "agent")
		if s := m.Slice(slice); s != nil && rapid.IntRange(0, 3).Draw(t, "fit") > 0 {
			// mostly an agent that works in the slice's phase, so that slices move
			var fit []string
			for _, a := range propConfig.Agents {
				if a.Works(s.Status) && len(a.Completes) > 0 {
					fit = append(fit, a.Name)
				}
			}
			if len(fit) > 0 {
				agent = rapid.SampledFrom(fit).Draw(t, "fitAgent")
			}
		}
		score := rapid.SampledFrom(propScores).Draw(t, "score")
		if rapid.IntRange(0, 2).Draw(t, "high") > 0 {
			score = 0.97
		}
		p := Proposal{Agent: agent, Slice: slice, Score: score, Artifacts: genArtifacts(t, agent)}
		if rapid.IntRange(0, 9).Draw(t, "uncertain") > 0 {
			p.Uncertainty = []string{"factor"}
		}
		if rapid.Bool().Draw(t, "stale") && m.Revision > 0 {
			p.BaseRevision = rapid.Uint64Range(0, m.Revision).Draw(t, "base")
		}
		if rapid.IntRange(0, 5).Draw(t, "to") == 0 {
			p.To = rapid.SampledFrom(append([]string{Partial, QuickFix}, Lifecycle...)).Draw(t, "toPhase")
		}
		return p
	case 5:
		return LockSlice{Slice: slice, Holder: rapid.SampledFrom(propAgents).Draw(t, "holder"), TTL: time.Duration(rapid.IntRange(0, 5).Draw(t, "ttl")) * time.Minute}
	case 6:
		return UnlockSlice{Slice: slice, Holder: rapid.SampledFrom(propAgents).Draw(t, "holder"), Force: rapid.Bool().Draw(t, "force"), Role: "TL"}
	case 7:
		r := Resolve{Slice: slice, Role: rapid.SampledFrom(propRoles).Draw(t, "role"), Rationale: "because",
			Action: rapid.SampledFrom([]string{ActionRerun, ActionResume, ActionReturn}).Draw(t, "action")}
		if r.Action == ActionReturn {
			r.ReturnTo = rapid.SampledFrom(propPhases).Draw(t, "returnTo")
		}
		return r
	case 8:
		return Approve{Slice: slice, Role: rapid.SampledFrom(propRoles).Draw(t, "role"), Rationale: "ok"}
	case 9:
		if rapid.IntRange(0, 2).Draw(t, "timeout") == 0 {
			return AgentTimeout{Agent: rapid.SampledFrom(propAgents).Draw(t, "agent")}
		}
		wave := rapid.IntRange(0, 3).Draw(t, "wave")
		b := Beat{Agent: rapid.SampledFrom(propAgents).Draw(t, "agent"), Status: rapid.SampledFrom([]string{HeartbeatActive, HeartbeatIdle}).Draw(t, "status"), Wave: &wave}
		if rapid.Bool().Draw(t, "onSlice") {
			b.Slice = slice
		}
		return b
	case 10:
		id := rapid.SampledFrom([]string{"T1", "T2", "T3", "T4"}).Draw(t, "task")
		if rapid.Bool().Draw(t, "add") {
			return AddTask{Slice: slice, ID: id, Wave: rapid.IntRange(1, 3).Draw(t, "wave"),
				DependsOn: rapid.SliceOfN(rapid.SampledFrom([]string{"T1", "T2", "T3"}), 0, 2).Draw(t, "deps")}
		}
		return CompleteTask{Slice: slice, ID: id, Agent: "implementation"}
	default:
		if rapid.IntRange(0, 3).Draw(t, "quick") == 0 {
			return Quick{Description: "quick fix", Agent: "implementation"}
		}
		return Proposal{Agent: "qa", Slice: "QUICK-001", Score: 0.97, To: Done}
	}
}

// Random sequences of proposals, locks, resolutions and heartbeats from
// several agents always leave a manifest that passes the schema and the
// invariants, with a revision that grows by one per commit; a rejection
// changes nothing.
func TestPropertyRandomOperations(t *testing.T) {
	cfg := DefaultConfig()
	reached := map[string]int{}
	defer func() { t.Logf("states reached: %v", reached) }()
	rapid.Check(t, func(t *rapid.T) {
		m := New()
		raw, _ := Encode(m)
		now := fixedNow
		steps := rapid.IntRange(1, maxSteps).Draw(t, "steps")
		for range steps {
			op := genOp(t, m)
			now = now.Add(time.Duration(rapid.IntRange(0, 1200).Draw(t, "seconds")) * time.Second)
			out, err := Apply(m, op, cfg, now)
			if after, _ := json.MarshalIndent(m, "", "  "); string(after)+"\n" != string(raw) {
				t.Fatalf("%T changed its input manifest", op)
			}
			if err != nil {
				var re *reason.Error
				if !errors.As(err, &re) || re.Code == "" || re.Message == "" {
					t.Fatalf("%T: rejection without code or message: %v", op, err)
				}
				continue
			}
			next := out.Manifest
			if next.Revision != m.Revision+1 {
				t.Fatalf("revision %d after %d", next.Revision, m.Revision)
			}
			if raw, err = Encode(next); err != nil {
				t.Fatalf("%T (%+v): %v", op, op, err)
			}
			if bad := Invariants(next, cfg); len(bad) > 0 {
				t.Fatalf("%T (%+v): invariants broken: %v", op, op, bad)
			}
			if out.Verdict != nil {
				s := next.Slice(out.Events[len(out.Events)-1].Slice)
				if s == nil || s.Status != Blocked || s.OpenEscalation() == nil {
					t.Fatalf("verdict %v without a halted slice", out.Verdict)
				}
			}
			m = next
			for _, s := range m.Slices {
				reached[s.Status]++
			}
			if out.Verdict != nil {
				reached["verdict:"+string(out.Verdict.Code)]++
			}
		}
		back, err := Decode(raw)
		if err != nil {
			t.Fatalf("committed manifest does not decode: %v", err)
		}
		if again, _ := Encode(back); string(again) != string(raw) {
			t.Fatalf("round trip differs:\n%s", cmp.Diff(string(raw), string(again)))
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
