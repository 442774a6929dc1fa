package app_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/wire"
)

// A project with its application layer, Local or Remote.
type project struct {
	root string
	svc  app.Service
	// agent is the service as an agent reaches it: Local with the context
	// marked, Remote over TCP with the agents' token.
	agent app.Service
	ctx   func(agent bool) context.Context
}

var clock = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func now() time.Time { return clock }

func newLocal(t *testing.T) *project {
	root := t.TempDir()
	st, err := file.Open(root, file.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := app.NewLocal(app.Options{Store: st, Root: root, Now: now, Logger: slog.New(slog.DiscardHandler)})
	return &project{root: root, svc: svc, agent: svc, ctx: func(agent bool) context.Context {
		if agent {
			return app.WithCaller(context.Background(), app.Agent)
		}
		return context.Background()
	}}
}

func newRemote(t *testing.T) *project {
	root := t.TempDir()
	st, err := file.Open(root, file.Options{Now: now, Hold: true, SnapshotInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(st, server.Options{Root: root, Now: now, Token: "agents", AdminToken: "adm", Logger: slog.New(slog.DiscardHandler), Documents: app.DocumentKey})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		<-done
		st.Close()
	})
	owner, err := client.New("http://"+l.Addr().String(), client.Options{Token: "adm"})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := client.New("http://"+l.Addr().String(), client.Options{Token: "agents"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { owner.Close(); agent.Close(); http.DefaultClient.CloseIdleConnections() })
	return &project{root: root, svc: app.NewRemote(owner), agent: app.NewRemote(agent), ctx: func(bool) context.Context { return context.Background() }}
}

// both runs f against a Local and a Remote project and returns what each
// reported, for comparison.
func both(t *testing.T, f func(t *testing.T, p *project) []string) {
	t.Helper()
	var got [2][]string
	for i, mk := range []func(*testing.T) *project{newLocal, newRemote} {
		name := [...]string{"local", "remote"}[i]
		t.Run(name, func(t *testing.T) { got[i] = f(t, mk(t)) })
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("Local and Remote differ (-local +remote):\n%s", diff)
	}
}

func (p *project) write(t *testing.T, rel, content string) {
	t.Helper()
	path := filepath.Join(p.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// files lists the project's files outside the custodian's state, with
// their contents: the file effects. (A checkpoint is the store's, written
// in direct mode only.)
func (p *project) files(t *testing.T) []string {
	var out []string
	filepath.WalkDir(p.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(p.root, path)
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, ".asdd/state/") || strings.HasPrefix(rel, ".impl/") || strings.HasPrefix(rel, ".agents/tmp/state") || strings.HasSuffix(rel, ".ndjson") || strings.Contains(rel, ".json.") || strings.HasSuffix(rel, ".lock") || strings.HasSuffix(rel, ".checkpoint") {
			return nil
		}
		b, _ := os.ReadFile(path)
		out = append(out, rel+": "+stamps.ReplaceAllString(string(b), "<time>"))
		return nil
	})
	sort.Strings(out)
	return out
}

var stamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT[0-9:.]+Z|\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?( UTC)?`)

// outcome is what a caller learns from an operation.
func outcome(r *wire.OpResponse, err error) string {
	if err != nil {
		return "error " + string(reason.CodeOf(err))
	}
	s := r.Outcome
	if r.Verdict != nil {
		s += " " + string(r.Verdict.Code)
	}
	if r.Slice != nil {
		s += " " + r.Slice.Status
	}
	return s
}

func must(t *testing.T) func(*wire.OpResponse, error) *wire.OpResponse {
	return func(r *wire.OpResponse, err error) *wire.OpResponse {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

func setup(t *testing.T, p *project) {
	ctx := p.ctx(false)
	must(t)(p.svc.ASDD(ctx, asdd.Init{Sprint: "S1"}))
	must(t)(p.svc.ASDD(ctx, asdd.AddSlice{ID: "SLICE-001", Name: "login"}))
}

// The ASDD rules give the same outcomes, reason codes and file effects
// through either implementation.
func TestASDDSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		setup(t, p)
		ctx := p.ctx(false)
		p.write(t, "specs/S1/intent.md", "# intent\n")
		var got []string
		add := func(r *wire.OpResponse, err error) { got = append(got, outcome(r, err)) }
		add(p.svc.ASDD(ctx, asdd.Proposal{Agent: "discovery", Slice: "SLICE-001", Score: 0.9, Uncertainty: []string{"scope"},
			Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/S1/intent.md"}}}))
		add(p.svc.ASDD(ctx, asdd.Proposal{Agent: "spec", Slice: "SLICE-001", Score: 2}))
		add(p.svc.ASDD(ctx, asdd.Proposal{Agent: "spec", Slice: "SLICE-404", Score: 0.9, Uncertainty: []string{"u"}}))
		add(p.svc.ASDD(ctx, asdd.Proposal{Agent: "spec", Slice: "SLICE-001", Score: 0.9,
			Artifacts: []asdd.Artifact{{Name: "requirements", Path: "../outside.md"}}, Uncertainty: []string{"u"}}))
		add(p.svc.ASDD(ctx, asdd.Proposal{Agent: "spec", Slice: "SLICE-001", Score: 0.5, Uncertainty: []string{"vague"},
			Artifacts: []asdd.Artifact{{Name: "requirements", Path: "specs/S1/req.md"}}}))
		add(p.svc.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive, Slice: "SLICE-001"}))
		add(p.svc.ASDD(ctx, asdd.LockSlice{Slice: "SLICE-001", Holder: "tl", TTL: time.Hour}))
		add(p.svc.ASDD(ctx, asdd.UnlockSlice{Slice: "SLICE-001", Holder: "someone"}))
		m, err := p.svc.Manifest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, "revision "+itoa(m.Revision), "status "+m.Slice("SLICE-001").Status)
		return append(got, p.files(t)...)
	})
}

// The custodian hashes artifacts and observes drift itself: made-up hashes
// and an empty observation from a caller change nothing (issue 18 item 3).
func TestCallerHashesAreIgnored(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		setup(t, p)
		ctx := p.ctx(false)
		p.write(t, "specs/S1/intent.md", "# intent\n")
		must(t)(p.svc.ASDD(ctx, asdd.Proposal{Agent: "discovery", Slice: "SLICE-001", Score: 0.9, Uncertainty: []string{"scope"},
			Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/S1/intent.md"}}}))
		p.write(t, "specs/S1/intent.md", "# intent, edited behind the pipeline's back\n")
		var got []string
		r, err := p.agent.ASDD(p.ctx(true), asdd.Proposal{Agent: "spec", Slice: "SLICE-001", Score: 0.9, Uncertainty: []string{"u"},
			Observed:  map[string]string{},
			Artifacts: []asdd.Artifact{{Name: "requirements", Path: "specs/S1/nope.md", SHA256: "sha256:" + strings.Repeat("0", 64)}}})
		got = append(got, outcome(r, err))
		m, err := p.svc.Manifest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s := m.Slice("SLICE-001")
		if s.Status == "VALIDATION" {
			t.Errorf("a drifted slice with a made-up artifact hash moved on: %s", s.Status)
		}
		if h := s.ArtifactHashes["specs/S1/nope.md"]; strings.HasSuffix(h, strings.Repeat("0", 64)) {
			t.Errorf("the caller's made-up hash was recorded: %s", h)
		}
		return append(got, "status "+s.Status)
	})
}

// Human decisions are refused to an agent, whichever door (issue 18 item 4).
func TestHumanDecisionsNeedAHuman(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		setup(t, p)
		must(t)(p.svc.ASDD(p.ctx(false), asdd.LockSlice{Slice: "SLICE-001", Holder: "tl", TTL: time.Hour}))
		var got []string
		for _, op := range []asdd.Op{
			asdd.UnlockSlice{Slice: "SLICE-001", Force: true, Role: "TL"},
			asdd.Resolve{Slice: "SLICE-001", Role: "TL", Rationale: "r"},
			asdd.Approve{Slice: "SLICE-001", Role: "TL", Rationale: "r"},
			asdd.ClearReview{Role: "TL"},
			asdd.Init{Sprint: "S2"},
		} {
			r, err := p.agent.ASDD(p.ctx(true), op)
			got = append(got, outcome(r, err))
			if reason.ExitCode(err) != reason.ExitUnauthorized {
				t.Errorf("%T by an agent: exit %d, want %d", op, reason.ExitCode(err), reason.ExitUnauthorized)
			}
		}
		got = append(got, outcome(p.svc.ASDD(p.ctx(false), asdd.UnlockSlice{Slice: "SLICE-001", Force: true, Role: "TL"})))
		return got
	})
}

// The task manifest's arguments are checked by the custodian, the same way
// (issue 17: impl has daemon operations).
func TestImplSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		var got []string
		add := func(r *wire.ImplResponse, err error) {
			if err != nil {
				got = append(got, "error "+string(reason.CodeOf(err))+": "+err.Error())
				return
			}
			got = append(got, r.Message)
		}
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "add-task", TaskID: "1.1"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "init", PlanPath: "docs/plan.md", PlanNumber: "001", PlanTitle: "Auth"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "init", PlanPath: "docs/plan.md", PlanNumber: "001", PlanTitle: "Auth"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "add-task", TaskID: "1.1"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "add-task", TaskID: "1.1", Phase: "1", Description: "schema"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "add-task", TaskID: "1.2", Phase: "x", Description: "api"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "update-status", TaskID: "1.1", Status: "bogus"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "update-status", TaskID: "1.1", Status: "in_progress"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "update-status", TaskID: "1.1", Status: "merged"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "update-status", TaskID: "1.1", Status: "pending"}))
		add(p.svc.Impl(ctx, wire.ImplRequest{Op: "get-task"}))
		m, rev, err := p.svc.ImplManifest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return append(got, "revision "+itoa(rev), "tasks "+itoa(uint64(len(m.Tasks))))
	})
}

// The state-manager's rules run in the custodian.
func TestStateSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		var got []string
		add := func(r *wire.StateResponse, err error) {
			if err != nil {
				got = append(got, "error "+string(reason.CodeOf(err)))
				return
			}
			b, _ := json.Marshal(r.State)
			got = append(got, r.Summary+" "+stamps.ReplaceAllString(string(b), "<time>"))
		}
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "update", Patch: json.RawMessage(`{"currentStage":"PLAN"}`)}))
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "init", Task: "auth"}))
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "init", Task: "again"}))
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "update", Patch: json.RawMessage(`{"currentStage":"NOPE"}`)}))
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "update", Patch: json.RawMessage(`{"currentStage":"PLAN","currentPhase":"1.1"}`)}))
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "record-output", Phase: "1.1", Content: []byte("# plan\n")}))
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "record-failure", Phase: "2.1", Error: "timeout"}))
		add(p.svc.UpdateState(ctx, wire.StateRequest{Op: "explode"}))
		return append(got, p.files(t)...)
	})
}

// A cycle's operation rules run in the custodian (issue 18 item 5: a paused
// cycle refuses work; a task cannot complete before its dependency), and
// if_revision is a compare-and-swap.
func TestCycleSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		var got []string
		var id string
		var rev uint64
		add := func(r *wire.CycleResponse, err error) {
			if err != nil {
				got = append(got, "error "+string(reason.CodeOf(err)))
				return
			}
			id, rev = r.CycleID, r.Revision
			got = append(got, r.Event+": "+stamps.ReplaceAllString(r.Summary, "<time>"))
		}
		args, _ := json.Marshal(wire.CycleCreate{Task: "OAuth"})
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: "cycle-v1-20261125T120000-abcdef", Op: "create", Args: args}))
		plan, _ := json.Marshal(map[string]any{"Tasks": []map[string]any{{"id": "A", "effort": "small"}, {"id": "B", "effort": "small", "depends_on": []string{"A"}}}})
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "plan", Args: plan}))
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "task", Args: json.RawMessage(`{"ID":"B","Status":"completed"}`)}))
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "pause", Args: json.RawMessage(`{"Reason":"lunch"}`)}))
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "agent", Args: json.RawMessage(`{"Agent":"ra","Status":"completed"}`)}))
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "resume", Args: json.RawMessage(`{}`)}))
		stale := rev - 1
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "pause", Args: json.RawMessage(`{"Reason":"x"}`), IfRevision: &stale}))
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "pause", Args: json.RawMessage(`{"Reason":"x"}`), IfRevision: &rev}))
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "nope"}))
		add(p.svc.UpdateCycle(ctx, wire.CycleRequest{ID: "../etc", Op: "pause"}))
		return got
	})
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// A jq program on a document runs inside a commit under the document's
// rules, the same through either implementation.
func TestApplyJQSameEverywhere(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		ctx := p.ctx(false)
		var got []string
		add := func(r *wire.JQResponse, err error) {
			if err != nil {
				got = append(got, "error "+string(reason.CodeOf(err)))
				return
			}
			got = append(got, itoa(r.Revision)+" "+stamps.ReplaceAllString(string(r.Value), "<time>"))
		}
		if _, err := p.svc.UpdateState(ctx, wire.StateRequest{Op: "init", Task: "auth"}); err != nil {
			t.Fatal(err)
		}
		add(p.svc.ApplyJQ(ctx, wire.JQRequest{Key: ".agents/tmp/state.json", Program: `.currentPhase = $p`, Args: []wire.JQArg{app.StringArg("p", "1.1")}, Touch: "updatedAt"}))
		add(p.svc.ApplyJQ(ctx, wire.JQRequest{Key: ".agents/tmp/state.json", Program: `.currentStage = "NOPE"`}))
		add(p.svc.ApplyJQ(ctx, wire.JQRequest{Key: ".agents/tmp/state.json", Program: `.[`}))
		add(p.svc.ApplyJQ(ctx, wire.JQRequest{Key: asdd.Key, Program: `.`}))
		stale := uint64(1)
		add(p.svc.ApplyJQ(ctx, wire.JQRequest{Key: ".agents/tmp/state.json", Program: `.`, IfRevision: &stale}))
		return got
	})
}
