package app_test

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/cycle/progress"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// rebuildOutcome is what a caller learns from a rebuild.
func rebuildOutcome(r *wire.RebuildResponse, err error) []string {
	if err != nil {
		return []string{"error " + string(reason.CodeOf(err))}
	}
	out := []string{r.Action + " revision " + itoa(r.Revision) + ": " + r.Why, "kept aside " + strings.Join(r.KeptAside, ", ")}
	for _, s := range r.Slices {
		out = append(out, s.ID+" "+s.Status+" guessed "+strings.Join(s.Guessed, ","))
	}
	return out
}

// The ASDD manifest rebuilt from the project's files (a human decision):
// the same scan, commit, reason codes and files through either
// implementation; an intact manifest is never replaced.
func TestRebuildSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		p.write(t, ".asdd/specs/SLICE-001/intent.md", "# intent\n")
		p.write(t, ".asdd/specs/SLICE-001/requirements.md", "# requirements\n")
		p.write(t, ".asdd/specs/SLICE-002/intent.md", "# intent\n")
		var got []string
		// An agent may not rebuild: nothing is committed.
		r, err := p.agent.Rebuild(p.ctx(true), wire.RebuildRequest{})
		if reason.ExitCode(err) != reason.ExitUnauthorized {
			t.Errorf("rebuild by an agent: %v, want UNAUTHORIZED", err)
		}
		got = append(got, rebuildOutcome(r, err)...)
		if _, err := p.svc.Manifest(p.ctx(false)); reason.CodeOf(err) != reason.NotFound {
			t.Fatalf("after a refused rebuild: %v, want no manifest", err)
		}
		got = append(got, rebuildOutcome(p.svc.Rebuild(p.ctx(false), wire.RebuildRequest{Actor: "tl"}))...)
		m, err := p.svc.Manifest(p.ctx(false))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range m.Slices {
			got = append(got, "manifest "+s.SliceID+" "+s.Status+" review "+strings.Join(s.NeedsHumanReview, ","))
		}
		// The manifest is intact now: a second rebuild changes nothing.
		got = append(got, rebuildOutcome(p.svc.Rebuild(p.ctx(false), wire.RebuildRequest{}))...)
		after, err := p.svc.Manifest(p.ctx(false))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, "revision "+itoa(after.Revision))
		// Propose refuses until a human reviewed what was guessed.
		got = append(got, outcome(p.svc.ASDD(p.ctx(false), asdd.Proposal{Agent: "spec", Slice: "SLICE-001", Score: 0.9, Uncertainty: []string{"u"}})))
		for i, want := range map[int]string{0: "error UNAUTHORIZED", 1: "scan revision 1: the manifest is missing", 5: "manifest SLICE-001", 7: "error INVALID_TRANSITION", 8: "revision 1"} {
			if i >= len(got) || !strings.HasPrefix(got[i], want) {
				t.Errorf("step %d: %v, want %s…", i, got, want)
			}
		}
		return append(got, p.files(t)...)
	})
}

// --force keeps an intact manifest aside and rebuilds it from the files:
// without a daemon; a running daemon holds the files, and refuses.
func TestRebuildForce(t *testing.T) {
	for _, mk := range []func(*testing.T) *project{newLocal, newRemote} {
		p := mk(t)
		setup(t, p)
		p.write(t, ".asdd/specs/SLICE-009/intent.md", "# intent\n")
		r, err := p.svc.Rebuild(p.ctx(false), wire.RebuildRequest{Force: true})
		m, merr := p.svc.Manifest(p.ctx(false))
		if merr != nil {
			t.Fatal(merr)
		}
		if _, remote := p.svc.(*app.Remote); remote {
			if reason.CodeOf(err) != reason.Conflict || !strings.Contains(err.Error(), "daemon") {
				t.Errorf("remote --force: %v, want CONFLICT naming the daemon", err)
			}
			if m.Revision != 2 || m.Slice("SLICE-001") == nil {
				t.Errorf("remote --force changed the manifest: revision %d", m.Revision)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.Action != "scan" || r.Revision != 1 || len(r.KeptAside) == 0 || m.Slice("SLICE-009") == nil || m.Slice("SLICE-001") != nil {
			t.Errorf("local --force: %+v; manifest revision %d", r, m.Revision)
		}
		for _, f := range r.KeptAside {
			if _, err := os.Stat(filepath.Join(p.root, filepath.FromSlash(f))); err != nil {
				t.Errorf("kept aside %s: %v", f, err)
			}
		}
		// The rebuilt manifest starts its revisions again: what the
		// service held of the old one must not pass for it.
		must(t)(p.svc.ASDD(p.ctx(false), asdd.AddSlice{ID: "SLICE-010", Name: "ten"}))
		must(t)(p.svc.ASDD(p.ctx(false), asdd.AddSlice{ID: "SLICE-011", Name: "eleven"}))
		m, err = p.svc.Manifest(p.ctx(false))
		if err != nil {
			t.Fatal(err)
		}
		if m.Revision != 3 || m.Slice("SLICE-001") != nil || m.Slice("SLICE-009") == nil || m.Slice("SLICE-011") == nil {
			t.Errorf("after the rebuild: revision %d, slices %v", m.Revision, sliceIDs(m))
		}
	}
}

// writeProgress writes the progress files of a new cycle id (what a
// rebuild reads).
func (p *project) writeProgress(t *testing.T, id, description string) {
	t.Helper()
	st, err := cycle.New(id, "OAuth", description, 3, clock)
	if err != nil {
		t.Fatal(err)
	}
	files, err := progress.Render(st)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		p.write(t, path.Join(cycle.ProgressDir(id), name), string(b))
	}
}

// A cycle rebuilt from its progress files (which the custodian reads
// itself): a human decision, the same outcome, reason codes and files
// either way; a valid cycle is never replaced.
func TestCycleRebuildSameEverywhere(t *testing.T) {
	const id = "cycle-v1-20261125T120000-abcdef"
	both(t, func(t *testing.T, p *project) []string {
		p.writeProgress(t, id, "Add OAuth")
		var got []string
		add := func(r *wire.CycleResponse, err error) {
			if err != nil {
				got = append(got, "error "+string(reason.CodeOf(err)))
				return
			}
			got = append(got, r.Event+" revision "+itoa(r.Revision)+": "+r.Summary+"; status "+r.Cycle.Status)
		}
		add(p.agent.UpdateCycle(p.ctx(true), wire.CycleRequest{ID: id, Op: "rebuild"}))
		if _, _, err := p.svc.Cycle(p.ctx(false), id); reason.CodeOf(err) != reason.NotFound {
			t.Errorf("after a refused rebuild: %v, want no cycle", err)
		}
		add(p.svc.UpdateCycle(p.ctx(false), wire.CycleRequest{ID: id, Op: "rebuild", Args: json.RawMessage(`{"x":1}`)}))
		add(p.svc.UpdateCycle(p.ctx(false), wire.CycleRequest{ID: "cycle-v1-20261125T120000-zzzzzz", Op: "rebuild"}))
		add(p.svc.UpdateCycle(p.ctx(false), wire.CycleRequest{ID: id, Op: "rebuild", Actor: "tl"}))
		add(p.svc.UpdateCycle(p.ctx(false), wire.CycleRequest{ID: id, Op: "rebuild"}))
		for i, want := range []string{"error UNAUTHORIZED", "error INVALID_INPUT", "error NOT_FOUND", "cycle.rebuild revision 1: rebuilt from", "error INVALID_TRANSITION"} {
			if !strings.HasPrefix(got[i], want) {
				t.Errorf("step %d: %s, want %s…", i, got[i], want)
			}
		}
		_, rev, err := p.svc.Cycle(p.ctx(false), id)
		got = append(got, "revision "+itoa(rev))
		if err != nil {
			t.Fatal(err)
		}
		// The file effects: the progress files (the document itself is
		// the store's, its snapshot behind the journal in a daemon).
		for _, f := range p.files(t) {
			if strings.HasPrefix(f, cycle.ProgressDir(id)+"/") {
				got = append(got, f)
			}
		}
		return got
	})
}

// A review accepts the artifacts as the custodian reads them: hashes a
// caller sends are ignored (issue 18 item 3).
func TestReviewHashesAreTheCustodians(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		const intent = ".asdd/specs/SLICE-001/intent.md"
		p.write(t, intent, "# intent\n")
		ctx := p.ctx(false)
		if _, err := p.svc.Rebuild(ctx, wire.RebuildRequest{}); err != nil {
			t.Fatal(err)
		}
		p.write(t, intent, "# intent, reviewed\n")
		forged := "sha256:" + strings.Repeat("0", 64)
		got := []string{outcome(p.svc.ASDD(ctx, asdd.ClearReview{Slice: "SLICE-001", Role: "TL", Rationale: "checked",
			Hashes: map[string]string{intent: forged}}))}
		m, err := p.svc.Manifest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		h := m.Slice("SLICE-001").ArtifactHashes[intent]
		if h == forged || !strings.HasPrefix(h, "sha256:") {
			t.Errorf("recorded hash %q: want the file's, not the caller's", h)
		}
		return append(got, "hash "+h, "review "+strings.Join(m.Slice("SLICE-001").NeedsHumanReview, ","))
	})
}

// A damaged cycle document without a journal is moved aside, never
// overwritten, then rebuilt: in a daemon too.
func TestCycleRebuildMovesADamagedDocumentAside(t *testing.T) {
	const id = "cycle-v1-20261125T120000-bcdefg"
	both(t, func(t *testing.T, p *project) []string {
		p.writeProgress(t, id, "")
		p.write(t, cycle.Key(id), "{not json")
		if _, _, err := p.svc.Cycle(p.ctx(false), id); reason.CodeOf(err) != reason.CorruptState {
			t.Fatalf("damaged cycle: %v, want CORRUPT_STATE", err)
		}
		r, err := p.svc.UpdateCycle(p.ctx(false), wire.CycleRequest{ID: id, Op: "rebuild"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(p.root, filepath.FromSlash(r.MovedAside)))
		if err != nil || string(b) != "{not json" {
			t.Errorf("moved aside to %q: %q, %v", r.MovedAside, b, err)
		}
		got, _, err := p.svc.Cycle(p.ctx(false), id)
		if err != nil {
			t.Fatal(err)
		}
		return []string{r.Event + " revision " + itoa(r.Revision), "aside " + stamps.ReplaceAllString(strings.TrimPrefix(r.MovedAside, cycle.Key(id)), "<time>"), "status " + got.Status}
	})
}

func sliceIDs(m *asdd.Manifest) []string {
	var out []string
	for _, s := range m.Slices {
		out = append(out, s.SliceID)
	}
	return out
}
