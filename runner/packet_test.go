package runner

import (
	"testing"
	"testing/fstest"

	"github.com/custodian-dev/custodian/asdd"
)

// A sub-agent's packet holds its task, the requirement's text, the
// slice's spec files, the terms its task mentions and its steering rules;
// nothing else of the manifest.
func TestBuildPacketForTask(t *testing.T) {
	fsys := fstest.MapFS{
		"specs/req.md":              {Data: []byte("## REQ-7 Settlement export\nTHE SYSTEM SHALL export settlements daily.\n## REQ-8 Other\nno\n")},
		"specs/domain.md":           {Data: []byte("## Ubiquitous language\n- Settlement: closing a trade\n- Ledger: the book\n")},
		".asdd/steering/style.md":   {Data: []byte("use small functions")},
		".asdd/steering/sub/ignore": {Data: []byte("x")},
	}
	cfg := asdd.DefaultConfig()
	ag, _ := cfg.Agent("implementation")
	s := &asdd.Slice{SliceID: "S", Name: "Reports", Status: asdd.Implementation,
		PhaseData:      map[string]string{"requirements": "specs/req.md", "domain_model": "specs/domain.md", "intent": "specs/intent.md"},
		RaisedMinimums: map[string]float64{"implementation": 0.8},
		Tasks:          []asdd.Task{{ID: "T1", Title: "export job", Wave: 1, Requirement: "REQ-7"}}}
	p := BuildPacket(fsys, s, cfg, ag, &s.Tasks[0], 42, 2)
	if p.Task == nil || p.Task.ID != "T1" || p.Requirement == nil || p.Requirement.Text != "## REQ-7 Settlement export\nTHE SYSTEM SHALL export settlements daily." {
		t.Errorf("task/requirement: %+v %+v", p.Task, p.Requirement)
	}
	if len(p.Files) != 2 || p.Files[0] != "specs/domain.md" || p.Files[1] != "specs/req.md" {
		t.Errorf("files %v (the intent is withheld from a sub-agent)", p.Files)
	}
	if len(p.DomainTerms) != 1 || p.DomainTerms[0].Term != "Settlement" {
		t.Errorf("terms %+v", p.DomainTerms)
	}
	if len(p.SteeringRules) != 2 || p.SteeringRules[0] != ".asdd/steering/style.md" {
		t.Errorf("steering %v", p.SteeringRules)
	}
	if p.Agent.MinConfidence != 0.8 || p.Agent.Attempt != 2 || p.BaseRevision != 42 || !p.Agent.CompletesPhase || len(p.Tasks) != 0 {
		t.Errorf("agent %+v base %d tasks %v", p.Agent, p.BaseRevision, p.Tasks)
	}
	// The phase agent sees every artifact and the plan.
	q := BuildPacket(fsys, s, cfg, ag, nil, 42, 1)
	if len(q.Files) != 3 || len(q.Tasks) != 1 || q.Task != nil || len(q.DomainTerms) != 2 {
		t.Errorf("phase packet %+v", q)
	}
}

// A context packet keeps <, > and & as they are: agents read requirement
// text, not HTML.
func TestPacketNotHTMLEscaped(t *testing.T) {
	b, err := encodePacket(map[string]string{"requirement": "latency < 200 ms && p99 > 0"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"requirement\": \"latency < 200 ms && p99 > 0\"\n}"; string(b) != want {
		t.Errorf("packet %q, want %q", b, want)
	}
}

func TestCountOf(t *testing.T) {
	for n, want := range map[int]string{0: "0 agent processes", 1: "1 agent process", 2: "2 agent processes"} {
		if got := countOf(n, "agent process", "agent processes"); got != want {
			t.Errorf("countOf(%d) = %q, want %q", n, got, want)
		}
	}
}
