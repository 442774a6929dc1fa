package asdd

import (
	"errors"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// world is a manifest under test with a clock that moves a minute per op.
type world struct {
	t   *testing.T
	m   *Manifest
	cfg *Config
	now time.Time
	// applied, when set, hears every committed operation with the
	// manifest before and after it.
	applied func(op Op, before, after *Manifest)
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, cfg: DefaultConfig(), now: fixedNow}
	w.do(Init{Sprint: "2026-Q2-S3"})
	return w
}

func (w *world) try(op Op) (*Outcome, error) {
	w.t.Helper()
	w.now = w.now.Add(time.Minute)
	out, err := Apply(w.m, op, w.cfg, w.now)
	if err != nil {
		var re *reason.Error
		if !errors.As(err, &re) {
			w.t.Fatalf("%T: error without reason code: %v", op, err)
		}
		return nil, err
	}
	if _, err := Encode(out.Manifest); err != nil {
		w.t.Fatalf("%T: result fails the schema: %v", op, err)
	}
	if bad := Invariants(out.Manifest, w.cfg); len(bad) > 0 {
		w.t.Fatalf("%T: invariants broken: %v", op, bad)
	}
	if w.m != nil && out.Manifest.Revision != w.m.Revision+1 {
		w.t.Fatalf("revision %d after %d", out.Manifest.Revision, w.m.Revision)
	}
	if w.applied != nil {
		w.applied(op, w.m, out.Manifest)
	}
	w.m = out.Manifest
	return out, nil
}

// do applies op and fails the test on a rejection or a halt.
func (w *world) do(op Op) *Outcome {
	w.t.Helper()
	out, err := w.try(op)
	if err != nil {
		w.t.Fatalf("%T: %v", op, err)
	}
	if out.Verdict != nil {
		w.t.Fatalf("%T: unexpected halt: %v", op, out.Verdict)
	}
	return out
}

// reject applies op and wants a rejection with code, state unchanged.
func (w *world) reject(op Op, code reason.Code) *reason.Error {
	w.t.Helper()
	before := w.m
	_, err := w.try(op)
	if reason.CodeOf(err) != code {
		w.t.Fatalf("%T: got %v, want rejection %s", op, err, code)
	}
	if w.m != before {
		w.t.Fatalf("a rejection changed the manifest")
	}
	re, _ := reason.As(err)
	return re
}

// halt applies op and wants a committed halt with the verdict code.
func (w *world) halt(op Op, code reason.Code, mode string) *Outcome {
	w.t.Helper()
	out, err := w.try(op)
	if err != nil {
		w.t.Fatalf("%T: rejected (%v), want a halt", op, err)
	}
	if out.Verdict == nil || out.Verdict.Code != code {
		w.t.Fatalf("%T: verdict %v, want %s", op, out.Verdict, code)
	}
	s := w.slice(out.Events[len(out.Events)-1].Slice)
	if s.Status != Blocked || s.FailureMode != mode {
		w.t.Fatalf("slice %s: status %s mode %s, want BLOCKED %s", s.SliceID, s.Status, s.FailureMode, mode)
	}
	return out
}

func (w *world) slice(id string) *Slice {
	w.t.Helper()
	s := w.m.Slice(id)
	if s == nil {
		w.t.Fatalf("no slice %s", id)
	}
	return s
}

func prop(agent, slice string, score float64, arts ...Artifact) Proposal {
	p := Proposal{Agent: agent, Slice: slice, Score: score, Artifacts: arts}
	if score < 0.95 {
		p.Uncertainty = []string{agent + " is unsure"}
	}
	return p
}

// standard artifacts per agent.
var stdArts = map[string][]Artifact{
	"discovery":     {art("intent", "specs/x/intent.md")},
	"spec":          {art("requirements", "specs/x/requirements.md")},
	"domain":        {art("domain_model", "docs/domain-model.md")},
	"design":        {art("design", "specs/x/design.md")},
	"task_planning": {art("tasks", "specs/x/tasks.md")},
}

func artsFor(agent, slice string) []Artifact {
	var out []Artifact
	for _, a := range stdArts[agent] {
		a.Path = slice + "/" + a.Path
		a.SHA256, a.MarkedSHA256 = h(a.Path), h("marked "+a.Path)
		out = append(out, a)
	}
	return out
}

// drive adds slice id and moves it with high scores until it reaches phase.
func (w *world) drive(id, phase string) {
	w.t.Helper()
	if w.m.Slice(id) == nil {
		w.do(AddSlice{ID: id, Name: "slice " + id})
	}
	order := []string{"discovery", "spec", "validation", "domain", "design", "task_planning", "refactor", "implementation", "qa", "security", "devops", "observability"}
	for _, a := range order {
		s := w.slice(id)
		if s.Status == phase {
			return
		}
		ag, _ := w.cfg.Agent(a)
		if !ag.Works(s.Status) {
			continue
		}
		w.do(prop(a, id, 0.97, artsFor(a, id)...))
	}
	if w.slice(id).Status != phase {
		w.t.Fatalf("drive %s: ended in %s, want %s", id, w.slice(id).Status, phase)
	}
}
