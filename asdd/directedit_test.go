package asdd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// TestCheckDirectEdit: what a hand edit of the manifest may change (issue
// 21 item 4: adopted only when it passes the domain's rules).
func TestCheckDirectEdit(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S", Name: "Login"})
	w.do(AddSlice{ID: "T"})
	w.do(LockSlice{Slice: "T", Holder: "spec", TTL: time.Hour})
	prev, err := Encode(w.m)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		m, _ := decodeLoose(prev)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	slice := func(m map[string]any, i int) map[string]any { return m["slices"].([]any)[i].(map[string]any) }
	for _, tc := range []struct {
		name string
		edit func(m map[string]any)
		code reason.Code // "" adopted
	}{
		{"rename a slice", func(m map[string]any) { slice(m, 0)["name"] = "Sign in" }, ""},
		{"describe a slice", func(m map[string]any) { slice(m, 0)["description"] = "OAuth too" }, ""},
		{"the sprint", func(m map[string]any) { m["project_context"].(map[string]any)["current_sprint"] = "S9" }, ""},
		{"a member the custodian does not know", func(m map[string]any) { slice(m, 1)["jira"] = "AUTH-7" }, ""},
		{"skip to DONE", func(m map[string]any) { slice(m, 0)["status"] = "DONE" }, reason.InvalidTransition},
		{"break a lease", func(m map[string]any) { delete(slice(m, 1), "lock") }, reason.InvalidTransition},
		{"forge a chain entry", func(m map[string]any) {
			slice(m, 0)["confidence_chain"] = []any{map[string]any{"agent": "discovery", "score": 0.99}}
		}, reason.InvalidTransition},
		{"add a slice", func(m map[string]any) {
			m["slices"] = append(m["slices"].([]any), map[string]any{"slice_id": "U", "status": "DISCOVERY"})
		}, reason.InvalidTransition},
		{"remove a slice", func(m map[string]any) { m["slices"] = m["slices"].([]any)[:1] }, reason.InvalidTransition},
		{"a heartbeat", func(m map[string]any) {
			m["agent_heartbeats"] = map[string]any{"spec": map[string]any{"status": "ACTIVE"}}
		}, reason.InvalidTransition},
		{"the revision", func(m map[string]any) { m["revision"] = 99 }, reason.InvalidTransition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckDirectEdit(prev, edit(tc.edit))
			if reason.CodeOf(err) != tc.code || (tc.code == "") != (err == nil) {
				t.Fatalf("got %v, want %q", err, tc.code)
			}
		})
	}
}

// Every member an operation writes is either one a direct edit may change
// or one the direct-edit rule refuses (derived from the types, not kept by
// hand): each operation is run in a table of scenarios, and every member
// it changed, put into the manifest before it by hand, must be refused —
// so no hand edit forges a steering approval, a feature branch, a chain
// entry or anything else an operation decides.
func TestEveryMemberAnOperationWritesIsRuleOwned(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(w *world)
	}{
		{"lifecycle to DONE", func(w *world) { w.drive("S", Done) }},
		{"retro-spec slice", func(w *world) {
			w.do(AddSlice{ID: "R", Type: TypeRetroSpec})
			w.do(prop("spec", "R", 0.97, artsFor("spec", "R")...))
			v, c, m := 14, 3, 2
			p := prop("validation", "R", 0.96)
			p.To, p.Retro = Partial, &Retro{Validated: &v, Corrected: &c, Missing: &m}
			w.do(p)
		}},
		{"quick fix", func(w *world) { w.do(Quick{Description: "typo"}) }},
		{"locks", func(w *world) {
			w.do(AddSlice{ID: "S"})
			w.do(LockSlice{Slice: "S", Holder: "spec", TTL: time.Hour})
			w.do(UnlockSlice{Slice: "S", Holder: "spec"})
		}},
		{"tasks", func(w *world) {
			w.drive("S", Implementation)
			w.do(AddTask{Slice: "S", ID: "a", Wave: 1, Requirement: "REQ-001"})
			w.do(ClaimTask{Slice: "S", ID: "a", Agent: "impl-1"})
			w.do(CompleteTask{Slice: "S", ID: "a", Agent: "impl-1"})
		}},
		{"heartbeats and timeouts", func(w *world) {
			w.drive("S", Implementation)
			w.do(Beat{Agent: "implementation", Status: HeartbeatActive, Slice: "S"})
			w.now = w.now.Add(20 * time.Minute)
			w.do(AgentTimeout{Agent: "implementation"})
			w.now = w.now.Add(20 * time.Minute)
			w.halt(AgentTimeout{Agent: "implementation"}, reason.Halted, ModeAgentTimeout)
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "agent restarted"})
		}},
		{"markers cleared", func(w *world) {
			m := w.m.Clone()
			m.AgentHeartbeats["spec_agent"] = &Heartbeat{Status: HeartbeatIdle, LastExecution: Timestamp(w.now), RetryRequestedAt: Timestamp(w.now)}
			w.m = m
			w.do(ClearMarkers{Heartbeat: "spec_agent"})
		}},
		{"feature branch", func(w *world) {
			w.drive("S", Implementation)
			w.do(prop("refactor", "S", 0.97))
			w.halt(prop("implementation", "S", 0.71), reason.BelowThreshold, ModeBelowMinimum)
			w.do(AttachBranch{Slice: "S", Agent: "implementation", Branch: "asdd/S/implementation-attempt-1", Commit: "0123abcd"})
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "reviewed", Action: ActionRerun})
		}},
		{"steering update approved", func(w *world) {
			w.drive("S", Design)
			w.halt(prop("knowledge", "S", 0.70, art("steering", "S/steering/naming.md")), reason.BelowThreshold, ModeBelowMinimum)
			w.do(Approve{Slice: "S", Role: "TL", Rationale: "the rule is right"})
		}},
		{"steering update rejected", func(w *world) {
			w.drive("S", Design)
			w.halt(prop("knowledge", "S", 0.70, art("steering", "S/steering/naming.md")), reason.BelowThreshold, ModeBelowMinimum)
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "not now", Action: ActionRerun})
		}},
		{"refinement loop and chain history", func(w *world) {
			w.drive("S", Spec)
			w.halt(prop("spec", "S", 0.80, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "clarified", Action: ActionRerun})
			w.halt(prop("spec", "S", 0.82, artsFor("spec", "S")...), reason.BelowThreshold, ModeBelowMinimum)
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "once more", Action: ActionRerun})
			w.halt(prop("spec", "S", 0.97, artsFor("spec", "S")...), reason.Halted, ModeRefinementLoop)
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "rewritten", Action: ActionRerun, RootCause: "ambiguous intent"})
			w.do(prop("spec", "S", 0.97, artsFor("spec", "S")...))
		}},
		{"drift", func(w *world) {
			w.drive("S", Validation)
			req := "S/specs/x/requirements.md"
			p := prop("validation", "S", 0.97)
			p.Observed = map[string]string{"S/specs/x/intent.md": h("S/specs/x/intent.md"), req: h("edited by hand")}
			w.halt(p, reason.StateDrift, ModeDrift)
			w.do(Approve{Slice: "S", Role: "TL", Rationale: "reviewed", Hashes: map[string]string{req: h("edited by hand")}})
			w.do(p)
			w.halt(FlagDrift{Slice: "S", Paths: map[string]string{"S/specs/x/intent.md": h("x")}}, reason.StateDrift, ModeDrift)
		}},
		{"reported failure", func(w *world) {
			w.drive("S", Design)
			modes := slices.Sorted(maps.Keys(Reportable))
			r := Reportable[modes[0]]
			w.do(ReportFailure{Agent: r.Detector, Slice: "S", Mode: modes[0], Reason: r.Detection, Flagged: []string{"REQ-004"},
				Artifacts: []Artifact{art("design", "S/design.md")}})
			w.do(Resolve{Slice: "S", Role: "TL", Rationale: "section removed", Action: ActionReturn, ReturnTo: Spec})
		}},
		{"assumptions", func(w *world) {
			w.do(AddSlice{ID: "S"})
			p := prop("discovery", "S", 0.97, artsFor("discovery", "S")...)
			p.Assumptions = []string{"We use PostgreSQL", "Sessions are JWT"}
			w.do(p)
			w.do(CorrectAssumption{Slice: "S", Index: 2, Role: "PO", Correction: "Sessions are server-side"})
		}},
		{"configuration accepted", func(w *world) {
			w.do(AddSlice{ID: "S"})
			cfg, err := ParseConfig(bytes.Replace(DefaultConfigYAML, []byte("min_confidence: 0.85"), []byte("min_confidence: 0.60"), 1))
			if err != nil {
				w.t.Fatal(err)
			}
			w.cfg = cfg
			w.do(ClearReview{Role: "TL", Rationale: "reviewed", Config: true})
		}},
		{"review marks", func(w *world) {
			w.do(AddSlice{ID: "S"})
			m := w.m.Clone()
			m.Slice("S").NeedsHumanReview = []string{"status"}
			m.ProjectContext.NeedsHumanReview = []string{"current_sprint"}
			w.m = m
			w.do(Approve{Slice: "S", Role: "TL", Rationale: "checked"})
			w.do(ClearReview{Role: "TL", Rationale: "sprint confirmed"})
		}},
	}
	ran := map[string]bool{}       // operation types run
	written := map[string]string{} // member -> an operation that wrote it
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			w := &world{t: t, cfg: DefaultConfig(), now: fixedNow}
			w.applied = func(op Op, before, after *Manifest) {
				name := fmt.Sprintf("%T", op)
				ran[name] = true
				if before == nil {
					return
				}
				for _, member := range changedMembers(t, before, after) {
					written[member.path] = name
					if member.editable {
						continue
					}
					prev, _ := Encode(before)
					if err := CheckDirectEdit(prev, member.forged); reason.CodeOf(err) != reason.InvalidTransition {
						t.Errorf("%s writes %s, and a hand edit making the same change is not refused: %v", name, member.path, err)
					}
				}
			}
			w.do(Init{Sprint: "2026-Q2-S3"})
			sc.run(w)
		})
	}
	t.Logf("members written: %v", slices.Sorted(maps.Keys(written)))
	for _, m := range []string{"slice.steering_updates", "slice.review_required", "slice.feature_branch", "slice.confidence_chain_history"} {
		if written[m] == "" {
			t.Errorf("no scenario writes %s", m)
		}
	}
	for _, op := range operationTypes(t) {
		if !ran["asdd."+op] {
			t.Errorf("operation %s is in no scenario", op)
		}
	}
}

type changedMember struct {
	path     string // slice.<member>, project_context.<member> or <member>
	editable bool   // a direct edit may change it
	forged   []byte // the manifest before, with only this member changed as the operation did
}

// changedMembers lists the members op changed between before and after,
// each with a hand edit of before making the same change.
func changedMembers(t *testing.T, before, after *Manifest) []changedMember {
	t.Helper()
	pb, err := Encode(before)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := Encode(after)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := decodeLoose(pb)
	a, _ := decodeLoose(pa)
	var out []changedMember
	forge := func(set func(m map[string]any)) []byte {
		m, _ := decodeLoose(pb)
		set(m)
		out, _ := json.Marshal(m)
		return out
	}
	put := func(m map[string]any, k string, v any, ok bool) {
		if ok {
			m[k] = v
		} else {
			delete(m, k)
		}
	}
	for _, k := range unionKeys(b, a) {
		switch k {
		case "slices":
			bs, as := slicesByID(b), slicesByID(a)
			for id, sb := range bs {
				sa, ok := as[id]
				if !ok {
					continue
				}
				for _, sk := range unionKeys(sb, sa) {
					if reflect.DeepEqual(sb[sk], sa[sk]) {
						continue
					}
					v, ok := sa[sk]
					out = append(out, changedMember{path: "slice." + sk, editable: slices.Contains(sliceEditable, sk),
						forged: forge(func(m map[string]any) { put(slicesByID(m)[id], sk, v, ok) })})
				}
			}
		case "project_context":
			cb, _ := b[k].(map[string]any)
			ca, _ := a[k].(map[string]any)
			for _, ck := range unionKeys(cb, ca) {
				if reflect.DeepEqual(cb[ck], ca[ck]) {
					continue
				}
				v, ok := ca[ck]
				out = append(out, changedMember{path: "project_context." + ck, editable: slices.Contains(projectEditable, ck),
					forged: forge(func(m map[string]any) { put(m["project_context"].(map[string]any), ck, v, ok) })})
			}
		default:
			if reflect.DeepEqual(b[k], a[k]) {
				continue
			}
			v, ok := a[k]
			out = append(out, changedMember{path: k, forged: forge(func(m map[string]any) { put(m, k, v, ok) })})
		}
	}
	return out
}

func unionKeys(a, b map[string]any) []string {
	return slices.Compact(slices.Sorted(func(yield func(string) bool) {
		for k := range a {
			if !yield(k) {
				return
			}
		}
		for k := range b {
			if !yield(k) {
				return
			}
		}
	}))
}

// operationTypes lists the package's operations: the types with an apply
// method, read from its source.
func operationTypes(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "apply" || fn.Recv == nil || len(fn.Recv.List) != 1 {
				continue
			}
			typ := fn.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() {
				ops = append(ops, id.Name)
			}
		}
	}
	if len(ops) < 10 {
		t.Fatalf("found only %v", ops)
	}
	return ops
}
