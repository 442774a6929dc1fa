package reconcile

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const openNotice = `# Escalation ESC-SLICE-002-r43 — Cascading Confidence Failure

- Status: OPEN
- Slice: SLICE-002 (Settlement Reports)
- Failure mode category: Cascading Confidence Failure (CASCADING_CONFIDENCE_FAILURE)
- Agent: design
- Phase: DESIGN (last known good: VALIDATION)
- Raised: 2026-11-22T00:21:01Z

## Reason

CCS 0.591 < floor 0.65 after the design agent's 0.82

## Resolution

Open.
`

func TestParseNotice(t *testing.T) {
	n, ok := parseNotice([]byte(openNotice))
	want := notice{id: "ESC-SLICE-002-r43", status: "OPEN", slice: "SLICE-002", phase: "DESIGN", lkg: "VALIDATION",
		mode: "CASCADING_CONFIDENCE_FAILURE", reason: "CCS 0.591 < floor 0.65 after the design agent's 0.82"}
	if !ok || n != want {
		t.Fatalf("parseNotice = %+v, %v\nwant %+v", n, ok, want)
	}
	for _, bad := range []string{"", "# Escalation X\n", "- Status: OPEN\n- Slice: S-1\n- Phase: DESIGN\n", "# Escalation E\n- Status: OPEN\n- Slice: ../x\n- Phase: DESIGN\n"} {
		if _, ok := parseNotice([]byte(bad)); ok {
			t.Errorf("parseNotice(%q) accepted", bad)
		}
	}
}

func FuzzParseNotice(f *testing.F) {
	f.Add([]byte(openNotice))
	f.Add([]byte(strings.ReplaceAll(openNotice, "OPEN", "RESOLVED")))
	f.Add([]byte("# Escalation \n- Phase: (last known good: )\n- Failure mode category: ()"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := parseNotice(b)
		if !ok {
			return
		}
		if !validID().MatchString(n.slice) || n.id == "" || n.status == "" || n.phase == "" {
			t.Fatalf("accepted an incomplete notice: %+v", n)
		}
		for _, s := range []string{n.id, n.status, n.slice, n.phase, n.lkg, n.mode, n.reason} {
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\n") {
				t.Fatalf("field %q", s)
			}
		}
	})
}

func TestScanReadsEscalationNotices(t *testing.T) {
	p := newProject(t)
	for _, id := range []string{"SLICE-001", "SLICE-002", "SLICE-003"} {
		p.write(".asdd/specs/"+id+"/intent.md", "# x\n")
		p.write(".asdd/specs/"+id+"/requirements.md", "REQ\n")
	}
	// SLICE-002 halted by a timeout: no artifact is marked, only the notice says so.
	p.write(".asdd/escalations/ESC-SLICE-002-r9.md", strings.NewReplacer("SLICE-002", "SLICE-002", "DESIGN (last", "VALIDATION (last", "VALIDATION)", "SPEC)", "CASCADING_CONFIDENCE_FAILURE", "AGENT_TIMEOUT").Replace(openNotice))
	// SLICE-003 was halted in IMPLEMENTATION and resolved: it got that far.
	p.write(".asdd/escalations/ESC-SLICE-003-r7.md", strings.NewReplacer("SLICE-002", "SLICE-003", "OPEN", "RESOLVED", "DESIGN (last known good: VALIDATION)", "IMPLEMENTATION (last known good: DESIGN)").Replace(openNotice))
	p.write(".asdd/escalations/ESC-SLICE-009-r1.md", strings.ReplaceAll(openNotice, "SLICE-002", "SLICE-009"))
	p.write(".asdd/escalations/notes.md", "not a notice\n")
	res, err := Scan(context.Background(), p.root, ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Slices {
		got[s.ID] = s.Status + "@" + s.BlockedAtPhase + "/" + s.LKGPhase
	}
	want := map[string]string{"SLICE-001": "VALIDATION@/", "SLICE-002": "BLOCKED@VALIDATION/SPEC", "SLICE-003": "IMPLEMENTATION@/"}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s, want %s", id, got[id], w)
		}
	}
	s2 := res.Slices[1]
	if !strings.Contains(s2.BlockReason, "AGENT_TIMEOUT") || !slices.Contains(s2.Guessed, "blocked_at_phase") {
		t.Errorf("SLICE-002: %+v", s2)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "SLICE-009, which has no directory") {
		t.Errorf("warnings: %v", res.Warnings)
	}
}
