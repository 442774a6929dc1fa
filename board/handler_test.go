package board_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/board"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

type fixture struct {
	t   *testing.T
	dir string
	st  store.Store
	srv *httptest.Server
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	st, err := file.Open(dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{t: t, dir: dir, st: st, now: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	f.srv = httptest.NewServer(board.Handler(board.Options{App: app.NewLocal(app.Options{Store: st, Root: dir}), Root: dir, Now: func() time.Time { return f.now }, DriftEvery: time.Nanosecond}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fixture) apply(op asdd.Op) {
	f.t.Helper()
	cfg := asdd.DefaultConfig()
	var opts []store.UpdateOption
	if _, ok := op.(asdd.Init); ok {
		opts = append(opts, store.Create())
	}
	_, err := f.st.Update(context.Background(), asdd.Key, func(cur store.Document) (store.Change, error) {
		var m *asdd.Manifest
		if cur.Exists() {
			dm, err := asdd.Decode(cur.Value)
			if err != nil {
				return store.Change{}, err
			}
			m = dm
		}
		out, err := asdd.Apply(m, op, cfg, f.now)
		if err != nil {
			return store.Change{}, err
		}
		raw, err := asdd.Encode(out.Manifest)
		return store.Change{Value: raw, Actor: op.Actor(), Reason: out.Summary}, err
	}, opts...)
	if err != nil {
		f.t.Fatalf("%T: %v", op, err)
	}
}

func (f *fixture) put(key string, value []byte) {
	f.t.Helper()
	_, err := f.st.Update(context.Background(), key, func(store.Document) (store.Change, error) {
		return store.Change{Value: value, Actor: "test"}, nil
	}, store.Create())
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) write(rel, content string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return effects.Sum([]byte(content))
}

func (f *fixture) get(path string, wantStatus int, v any) string {
	f.t.Helper()
	resp, err := http.Get(f.srv.URL + path)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		f.t.Fatalf("GET %s: %d, want %d: %s", path, resp.StatusCode, wantStatus, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			f.t.Fatalf("GET %s: %v: %s", path, err, b)
		}
	}
	return string(b)
}

func TestHandlerPageAndAssets(t *testing.T) {
	f := newFixture(t)
	page := f.get("/", http.StatusOK, nil)
	for _, want := range []string{`<script src="/assets/app.js"`, `href="/assets/style.css"`, `id="board"`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	// Everything the page loads is embedded: no other host is named.
	for _, name := range []string{"index.html", "app.js", "style.css"} {
		b, err := fsRead(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"http://", "https://", "//cdn"} {
			if strings.Contains(strings.ReplaceAll(b, "http://www.w3.org/2000/svg", ""), bad) {
				t.Errorf("%s names an outside address (%s): the dashboard must work offline", name, bad)
			}
		}
	}
	f.get("/assets/app.js", http.StatusOK, nil)
	f.get("/assets/style.css", http.StatusOK, nil)
	f.get("/nope", http.StatusNotFound, nil)
}

func fsRead(name string) (string, error) {
	b, err := fsReadFile(name)
	return string(b), err
}

func fsReadFile(name string) ([]byte, error) {
	f, err := board.Assets().Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func TestHandlerBoardDriftAndHashes(t *testing.T) {
	f := newFixture(t)
	var v board.View
	f.get("/board.json", http.StatusOK, &v)
	if len(v.Cards) != 0 || len(v.Columns) != 9 {
		t.Fatalf("empty board: %d cards, columns %v", len(v.Cards), v.Columns)
	}

	sum := f.write("specs/S-1/intent.md", "# intent\n")
	f.apply(asdd.Init{Sprint: "W47"})
	f.apply(asdd.AddSlice{ID: "S-1", Name: "Login"})
	f.apply(asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.97, Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/S-1/intent.md", SHA256: sum}}})
	f.get("/board.json", http.StatusOK, &v)
	if len(v.Cards) != 1 || v.Cards[0].Column != "SPEC" || len(v.Cards[0].Drift) != 0 {
		t.Fatalf("board after a proposal: %+v", v.Cards)
	}

	// A hand edit is a drift mark on the card; the hashes served are the
	// file's now.
	edited := f.write("specs/S-1/intent.md", "# intent, edited by hand\n")
	f.get("/board.json", http.StatusOK, &v)
	if d := v.Cards[0].Drift; len(d) != 1 || d[0].Code != "STATE_DRIFT" || d[0].Path != "specs/S-1/intent.md" {
		t.Fatalf("drift marks %+v", d)
	}
	var hs struct {
		Hashes map[string]string `json:"hashes"`
	}
	f.get("/hashes?slice=S-1", http.StatusOK, &hs)
	if hs.Hashes["specs/S-1/intent.md"] != edited {
		t.Errorf("hashes %v, want the edited file's %s", hs.Hashes, edited)
	}
	// A deleted file is a missing mark.
	if err := os.Remove(filepath.Join(f.dir, "specs/S-1/intent.md")); err != nil {
		t.Fatal(err)
	}
	f.get("/board.json", http.StatusOK, &v)
	if d := v.Cards[0].Drift; len(d) != 1 || d[0].Code != "STATE_INCONSISTENCY" {
		t.Fatalf("missing-file marks %+v", d)
	}
	f.get("/hashes?slice=S-9", http.StatusNotFound, nil)
}

func TestHandlerNotice(t *testing.T) {
	f := newFixture(t)
	sum := f.write("specs/S-1/intent.md", "# intent\n")
	f.apply(asdd.Init{})
	f.apply(asdd.AddSlice{ID: "S-1"})
	f.apply(asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.5, Uncertainty: []string{"vague"}, Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/S-1/intent.md", SHA256: sum}}})
	doc, err := f.st.Get(context.Background(), asdd.Key)
	if err != nil {
		t.Fatal(err)
	}
	m, err := asdd.Decode(doc.Value)
	if err != nil {
		t.Fatal(err)
	}
	esc := m.Slice("S-1").OpenEscalation()
	if esc == nil {
		t.Fatal("no escalation")
	}
	// The notice is a file effect the CLI or daemon writes; not yet here.
	f.get("/notice?slice=S-1", http.StatusNotFound, nil)
	f.write(esc.Path, "# Escalation\nDiscovery below minimum.\n")
	if got := f.get("/notice?slice=S-1", http.StatusOK, nil); !strings.Contains(got, "Discovery below minimum") {
		t.Errorf("notice %q", got)
	}
	f.get("/notice?slice=S-1&id=ESC-OTHER", http.StatusNotFound, nil)
	f.get("/notice?slice=NOPE", http.StatusNotFound, nil)
}

func TestHandlerPlanAndCycles(t *testing.T) {
	f := newFixture(t)
	var pr board.PlanResponse
	f.get("/plan.json", http.StatusOK, &pr)
	if pr.Plan != nil || len(pr.Cycles) != 0 {
		t.Fatalf("empty project: %+v", pr)
	}
	im := &impl.Manifest{Version: impl.Version, Plan: impl.Plan{Title: "Payments", Path: "plans/p.md"},
		Phases: []impl.Phase{{Number: 1}}, Tasks: []impl.Task{{ID: "T-1", Phase: 1, Status: impl.Passed, CreatedAt: "2026-11-22T00:00:00Z", UpdatedAt: "2026-11-22T00:00:00Z"}}}
	raw, err := impl.Encode(im)
	if err != nil {
		t.Fatal(err)
	}
	f.put(impl.Key, raw)
	cs, err := cycle.New("cycle-v1-20261122T120000-abcd", "Rate limiting", "", 3, f.now)
	if err != nil {
		t.Fatal(err)
	}
	craw, err := cycle.Encode(cs)
	if err != nil {
		t.Fatal(err)
	}
	f.put(cycle.Key(cs.CycleID), craw)
	f.put(cycle.Key("cycle-v1-20261122T120001-bad0"), []byte(`{"cycle_id": 5}`))
	f.get("/plan.json", http.StatusOK, &pr)
	if pr.Plan == nil || pr.Plan.Title != "Payments" || len(pr.Plan.Phases) != 1 || pr.Plan.Counts["passed"] != 1 {
		t.Errorf("plan %+v", pr.Plan)
	}
	if len(pr.Cycles) != 1 || pr.Cycles[0].Title != "Rate limiting" {
		t.Errorf("cycles %+v", pr.Cycles)
	}
	if len(pr.Errors) != 1 || !strings.Contains(pr.Errors[0], "bad0") {
		t.Errorf("errors %v: want the broken cycle named", pr.Errors)
	}
}
