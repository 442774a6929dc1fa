package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// The pipeline's rules through the CLI door: `custodian propose` (and quick, halt,
// resolve, status, slice show, check, impl) enforce the domain's rules.

// advance proposes for each agent with score 0.97 and its artifact file.
func (e *asddEnv) advance(slice string, agents ...string) {
	e.t.Helper()
	for _, a := range agents {
		args := []string{"propose", "--agent", a, "--slice", slice, "--score", "0.97"}
		if name := map[string]string{"discovery": "intent", "spec": "requirements", "domain": "domain_model", "design": "design", "task_planning": "tasks"}[a]; name != "" {
			path := fmt.Sprintf(".asdd/specs/%s/%s.md", slice, name)
			e.write(path, "# "+name+" of "+slice+"\n")
			args = append(args, "--artifact", name+"="+path)
		}
		e.must(args...)
	}
}

var toImplementation = []string{"discovery", "spec", "validation", "domain", "design", "task_planning"}

// 1. A quick fix at QA 0.30 halts, is escalated and logged; a domain model
// is outside the quick-fix boundary.
func TestCLIQuickFixGatedByQA(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.write("web/login.html", "<h1>Login</h1>\n")
	e.must("quick", "Fix typo in login header", "--artifact", "fix=web/login.html")
	e.want(3, "propose", "--agent", "implementation", "--slice", "QUICK-001", "--score", "0.9", "--uncertainty", "u", "--to", "DONE")
	out := e.want(3, "propose", "--agent", "qa", "--slice", "QUICK-001", "--score", "0.30", "--uncertainty", "3 tests fail", "--to", "DONE")
	if !strings.Contains(out, "halted (committed at revision") || !strings.Contains(out, "Qa Agent confidence 0.3 < threshold 0.85") {
		t.Fatalf("output:\n%s", out)
	}
	s := e.manifest().Slice("QUICK-001")
	if s.Status != asdd.Blocked || s.BlockedAtPhase != asdd.QuickFix {
		t.Fatalf("status %s at %s", s.Status, s.BlockedAtPhase)
	}
	if log := e.read(asdd.FailureLogPath); !strings.Contains(log, "| qa | QUICK_FIX | Agent below minimum confidence | 0.300 |") {
		t.Fatalf("failure log:\n%s", log)
	}
	e.read(s.OpenEscalation().Path)

	e.write("docs/architecture/domain-model.md", "# model\n")
	out = e.want(3, "quick", "Rename an entity", "--artifact", "domain_model=docs/architecture/domain-model.md")
	if !strings.Contains(out, string(reason.OutsideQuickBoundary)) || !strings.Contains(out, "rejected, nothing changed") {
		t.Fatalf("boundary refusal:\n%s", out)
	}
	if e.manifest().Slice("QUICK-002") != nil {
		t.Fatal("a refused quick fix was recorded")
	}
}

// 2. Below the minimum without uncertainty factors: halted and committed;
// every result says whether state changed, in text and --json.
func TestCLIResultSaysWhetherCommitted(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	e.advance("S", "discovery")
	e.write("r.md", "req\n")
	type result struct {
		Committed *bool
		Outcome   string
		Verdict   *reason.Error
		Error     *reason.Error
	}
	parse := func(out string) result {
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Committed == nil {
			t.Fatalf("%v: %s", err, out)
		}
		return r
	}
	// passing score without factors: rejected, nothing changed
	rev := e.manifest().Revision
	r := parse(e.want(3, "--json", "propose", "--agent", "spec", "--slice", "S", "--score", "0.9", "--artifact", "requirements=r.md"))
	if *r.Committed || r.Outcome != "rejected" || r.Error.Code != reason.MissingUncertaintyFactors || e.manifest().Revision != rev {
		t.Fatalf("rejection %+v", r)
	}
	// below the minimum without factors: halted, committed
	r = parse(e.want(3, "--json", "propose", "--agent", "spec", "--slice", "S", "--score", "0.6", "--artifact", "requirements=r.md"))
	if !*r.Committed || r.Outcome != "halted" || r.Verdict.Code != reason.BelowThreshold {
		t.Fatalf("halt %+v", r)
	}
	s := e.manifest().Slice("S")
	if esc := s.OpenEscalation(); s.Status != asdd.Blocked || len(esc.Findings) != 1 || !strings.Contains(e.read(esc.Path), "MISSING_UNCERTAINTY_FACTORS") {
		t.Fatalf("slice %s findings %v", s.Status, esc.Findings)
	}
	if !strings.Contains(e.read(asdd.FailureLogPath), "| spec | SPEC |") {
		t.Fatal("no failure-log row")
	}
	// accepted
	r = parse(e.must("--json", "resolve", "S", "--role", "TL", "--rationale", "again"))
	if !*r.Committed || r.Outcome != "accepted" {
		t.Fatalf("accepted %+v", r)
	}
}

// 3. Proposals alone cannot complete CI_CD without QA and Security, nor
// IMPLEMENTATION without Refactor.
func TestCLIPhaseGates(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	e.advance("S", toImplementation...)
	out := e.want(3, "propose", "--agent", "implementation", "--slice", "S", "--score", "0.97")
	if !strings.Contains(out, "GATE_PENDING") || !strings.Contains(out, "refactor") {
		t.Fatalf("output %s", out)
	}
	e.advance("S", "refactor", "implementation", "qa")
	out = e.want(3, "propose", "--agent", "devops", "--slice", "S", "--score", "0.97")
	if !strings.Contains(out, "before the security agent's accepted result in CI_CD") {
		t.Fatalf("output %s", out)
	}
	e.advance("S", "security", "devops", "observability")
	if got := e.manifest().Slice("S").Status; got != asdd.Done {
		t.Fatalf("status %s", got)
	}
}

// 4. A conflict locks the slice; resolve --favour applies the chosen
// agent's whole proposal and moves the slice on.
func TestCLIConflictArbitration(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	e.advance("S", "discovery", "spec", "validation", "domain")
	base := fmt.Sprint(e.manifest().Revision)
	e.write("g-k.md", "glossary by knowledge\n")
	e.must("propose", "--agent", "knowledge", "--slice", "S", "--score", "0.97", "--artifact", "glossary=g-k.md")
	e.write("g-d.md", "glossary by design\n")
	e.write("design.md", "design\n")
	out := e.want(4, "propose", "--agent", "design", "--slice", "S", "--score", "0.97", "--artifact", "glossary=g-d.md", "--artifact", "design=design.md", "--base-revision", base)
	if !strings.Contains(out, "halted (committed") {
		t.Fatalf("conflict:\n%s", out)
	}
	show := e.must("slice", "show", "S")
	if !strings.Contains(show, "LOCK by knowledge since") || !strings.Contains(show, "requested by design") {
		t.Fatalf("slice show:\n%s", show)
	}
	e.want(4, "propose", "--agent", "domain", "--slice", "S", "--score", "0.97")
	e.must("resolve", "S", "--role", "TL", "--rationale", "design's glossary matches the contract", "--favour", "design")
	s := e.manifest().Slice("S")
	if s.Status != asdd.Implementation || s.PhaseData["glossary"] != "g-d.md" || s.PhaseData["design"] != "design.md" || s.Lock != nil {
		t.Fatalf("after arbitration: %s %v %+v", s.Status, s.PhaseData, s.Lock)
	}
	notice := e.read(s.Escalations[len(s.Escalations)-1].Path)
	if !strings.Contains(notice, "Arbitration: in favour of design over knowledge on phase_data.glossary") || !strings.Contains(notice, "g-k.md") || !strings.Contains(notice, "g-d.md") {
		t.Fatalf("notice:\n%s", notice)
	}
}

// 5. CCS below the floor: the notice lists every artifact with its hash.
func TestCLICCSNoticeListsEveryArtifact(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	for _, st := range [][2]string{{"discovery", "0.90"}, {"spec", "0.88"}, {"validation", "0.93"}} {
		args := []string{"propose", "--agent", st[0], "--slice", "S", "--score", st[1], "--uncertainty", "u"}
		if name := map[string]string{"discovery": "intent", "spec": "requirements"}[st[0]]; name != "" {
			e.write(name+".md", name+"\n")
			args = append(args, "--artifact", name+"="+name+".md")
		}
		e.must(args...)
	}
	e.write("design.md", "design\n")
	e.want(3, "propose", "--agent", "design", "--slice", "S", "--score", "0.81", "--uncertainty", "u", "--artifact", "design=design.md")
	s := e.manifest().Slice("S")
	notice := e.read(s.OpenEscalation().Path)
	for _, p := range []string{"intent.md", "requirements.md", "design.md"} {
		if !strings.Contains(notice, "- "+p+" `"+s.ArtifactHashes[p]+"`") {
			t.Fatalf("%s missing from the notice:\n%s", p, notice)
		}
	}
}

// 6. `custodian halt` marks the phase's artifact, as a threshold halt does,
// and `check` finds no drift in it.
func TestCLIHaltMarksPhaseArtifact(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	e.advance("S", "discovery", "spec")
	e.must("halt", "S", "--agent", "validation", "--mode", "HALLUCINATED_SPEC_SECTION", "--reason", "'Settlement' is not in the glossary", "--flag", "REQ-004")
	if got := e.read(".asdd/specs/S/requirements.md"); !strings.HasPrefix(got, asdd.DefaultMarker+"\n\n") {
		t.Fatalf("requirements not marked: %q", got)
	}
	out := e.want(0, "check")
	if !strings.HasPrefix(out, "clean") {
		t.Fatalf("check after the halt:\n%s", out)
	}
}

// 8. Knowledge below 0.80: a steering-update proposal under .asdd/,
// linked from the escalation, in effect only once approved.
func TestCLIKnowledgeSteeringProposal(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	e.advance("S", "discovery")
	e.write(".asdd/steering/naming.md", "Entities are singular.\n")
	e.want(3, "propose", "--agent", "knowledge", "--slice", "S", "--score", "0.7", "--uncertainty", "two teams disagree", "--artifact", "steering=.asdd/steering/naming.md")
	s := e.manifest().Slice("S")
	path := s.OpenEscalation().SteeringProposal
	if !strings.HasPrefix(path, asdd.SteeringProposalDir+"/") || !strings.Contains(e.read(path), "Status: PENDING_APPROVAL") || s.PhaseData["steering"] != "" {
		t.Fatalf("proposal %q, phase data %v", path, s.PhaseData)
	}
	if !strings.Contains(e.read(s.OpenEscalation().Path), path) {
		t.Fatal("the escalation does not link the proposal")
	}
	e.must("approve", "S", "--role", "TL", "--rationale", "agreed in the design review")
	if got := e.read(path); !strings.Contains(got, "Status: APPROVED") || e.manifest().Slice("S").PhaseData["steering"] != ".asdd/steering/naming.md" {
		t.Fatalf("after approval:\n%s", got)
	}
}

// 9. A retro slice's validation status and counts in status, status
// --json and slice show.
func TestCLIRetroSpecProgress(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "RETRO-AUTH-001", "--type", "RETRO_SPEC")
	e.write("req.md", "req\n")
	e.must("propose", "--agent", "spec", "--slice", "RETRO-AUTH-001", "--score", "0.96", "--artifact", "requirements=req.md", "--validated", "14", "--corrected", "3", "--missing", "2")
	if out := e.must("status"); !strings.Contains(out, "RETRO-AUTH-001  PARTIAL: 14 validated, 3 corrected, 2 missing") {
		t.Fatalf("status:\n%s", out)
	}
	if out := e.must("slice", "show", "RETRO-AUTH-001"); !strings.Contains(out, "retro-spec validation PARTIAL: 14 validated, 3 corrected, 2 missing") {
		t.Fatalf("slice show:\n%s", out)
	}
	var b asdd.Board
	if err := json.Unmarshal([]byte(e.must("--json", "status")), &b); err != nil {
		t.Fatal(err)
	}
	r := b.Slices[0].Retro
	if r == nil || r.ValidationStatus != "PARTIAL" || r.Validated != 14 || r.Corrected != 3 || r.Missing != 2 {
		t.Fatalf("status --json retro %+v", r)
	}
}

// 10. Earlier attempts are history; check reports two current entries for
// one agent; a manifest of the previous release loads.
func TestCLIChainDuplicates(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S")
	e.advance("S", "discovery")
	e.write("r.md", "req\n")
	e.want(3, "propose", "--agent", "spec", "--slice", "S", "--score", "0.5", "--uncertainty", "u", "--artifact", "requirements=r.md")
	e.must("resolve", "S", "--role", "TL", "--rationale", "again")
	e.must("propose", "--agent", "spec", "--slice", "S", "--score", "0.97", "--artifact", "requirements=r.md")
	if out := e.must("slice", "show", "S"); !strings.Contains(out, "earlier attempts:") {
		t.Fatalf("slice show:\n%s", out)
	}
	if out := e.must("check"); !strings.HasPrefix(out, "clean") {
		t.Fatalf("check:\n%s", out)
	}

	// A manifest with two current entries written by hand: inconsistent.
	// (No witness: the file stands for one another tool made.)
	t.Setenv("CUSTODIAN_WITNESS_DIR", "off")
	e2 := newASDDEnv(t)
	e2.must("init")
	raw := `{"project_context":{},"slices":[{"slice_id":"S","status":"VALIDATION","confidence_chain":[` +
		`{"agent":"spec","score":0.8,"timestamp":"2026-04-20T14:00:00Z"},{"agent":"spec","score":0.9,"timestamp":"2026-04-20T14:05:00Z"}]}],"agent_heartbeats":{}}`
	p := filepath.Join(e2.dir, filepath.FromSlash(asdd.Key))
	// A file made by another tool: no journal, and no anchor of one (a
	// journal deleted beside its anchor is CORRUPT_STATE, issue 18 item 7).
	for _, f := range []string{".asdd/state/journal.ndjson", ".asdd/state/.head"} {
		if err := os.Remove(filepath.Join(e2.dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(p, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	out := e2.want(5, "check")
	if !strings.Contains(out, "STATE_INCONSISTENCY") || !strings.Contains(out, "two current entries for the spec agent") {
		t.Fatalf("check:\n%s", out)
	}
}

// 11. impl: the plan's hash at --init; a changed plan is reported.
func TestCLIImplPlanStale(t *testing.T) {
	e := newASDDEnv(t)
	e.write("docs/plans/003-auth.md", "# Plan 003\n")
	e.must("impl", "--init", "--plan-path", "docs/plans/003-auth.md", "--plan-number", "003", "--plan-title", "Auth")
	e.must("impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "login")
	for _, op := range []string{"--stale", "--summary", "--continue"} {
		if out := e.must("impl", op); strings.Contains(out, "plan_stale") {
			t.Fatalf("%s before the change: %s", op, out)
		}
	}
	e.write("docs/plans/003-auth.md", "# Plan 003\n\nPhase 2 added.\n")
	for _, op := range []string{"--stale", "--summary", "--continue"} {
		if out := e.must("impl", op); !strings.Contains(out, "plan_stale=docs/plans/003-auth.md|changed|") {
			t.Fatalf("%s after the change: %s", op, out)
		}
	}
	var r struct {
		PlanStale *struct{ State string } `json:"plan_stale"`
	}
	if err := json.Unmarshal([]byte(e.must("--json", "impl", "--continue")), &r); err != nil || r.PlanStale == nil || r.PlanStale.State != "changed" {
		t.Fatalf("--continue --json: %v %+v", err, r)
	}
	os.Remove(filepath.Join(e.dir, "docs/plans/003-auth.md"))
	if out := e.must("impl", "--stale"); !strings.Contains(out, "plan_stale=docs/plans/003-auth.md|missing|") {
		t.Fatalf("--stale with the plan gone: %s", out)
	}
}
