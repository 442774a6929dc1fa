package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/testbin"
)

// proc runs the custodian binary as a separate process in dir.
type proc struct {
	t   *testing.T
	bin string
	dir string
	env []string // added to the test's environment
}

func (p *proc) run(args ...string) (string, int) {
	p.t.Helper()
	cmd := exec.Command(p.bin, append([]string{"-C", p.dir}, args...)...)
	if p.env != nil {
		cmd.Env = append(os.Environ(), p.env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode()
	}
	p.t.Fatalf("run custodian %v: %v", args, err)
	return "", -1
}

func (p *proc) want(code int, args ...string) string {
	p.t.Helper()
	out, got := p.run(args...)
	if got != code {
		p.t.Fatalf("custodian %s: exit %d, want %d\n%s", strings.Join(args, " "), got, code, out)
	}
	return out
}

func (p *proc) write(path, content string) {
	p.t.Helper()
	full := filepath.Join(p.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func (p *proc) manifest() *asdd.Manifest {
	p.t.Helper()
	b, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(asdd.Key)))
	if err != nil {
		p.t.Fatal(err)
	}
	m, err := asdd.Decode(b)
	if err != nil {
		p.t.Fatal(err)
	}
	return m
}

func (p *proc) status(id string) string {
	p.t.Helper()
	var view struct {
		Revision uint64
		Slice    asdd.Slice
	}
	if err := json.Unmarshal([]byte(p.want(0, "--json", "slice", "show", id)), &view); err != nil {
		p.t.Fatal(err)
	}
	if view.Revision == 0 || view.Slice.SliceID != id {
		p.t.Fatalf("slice show --json: %+v", view)
	}
	return view.Slice.Status
}

// propose runs one agent with its standard artifact, written first.
func (p *proc) propose(code int, agent, slice, score string, extra ...string) string {
	p.t.Helper()
	args := []string{"propose", "--agent", agent, "--slice", slice, "--score", score}
	if name := map[string]string{"discovery": "intent", "spec": "requirements", "domain": "domain_model", "design": "design", "task_planning": "tasks"}[agent]; name != "" {
		path := fmt.Sprintf("specs/%s/%s.md", slice, name)
		p.write(path, fmt.Sprintf("# %s of %s by %s (%s)\n", name, slice, agent, score))
		args = append(args, "--artifact", name+"="+path)
	}
	if score < "0.95" {
		args = append(args, "--uncertainty", agent+" is not sure")
	}
	return p.want(code, append(args, extra...)...)
}

// The CLI as separate processes: a slice from DISCOVERY to DONE, and one
// slice halted by each failure mode and resolved by a human.
func TestASDDEndToEndProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	p := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want(0, "init", "--sprint", "2026-Q2-S3")

	// DISCOVERY → DONE, with a plan in two waves.
	p.want(0, "slice", "add", "S-DONE", "--name", "full pipeline")
	for _, step := range [][2]string{{"discovery", "0.97"}, {"spec", "0.96"}, {"validation", "0.97"}, {"domain", "0.96"}, {"design", "0.95"}, {"task_planning", "0.97"}} {
		p.propose(0, step[0], "S-DONE", step[1])
	}
	p.want(0, "tasks", "add", "S-DONE", "T1", "--wave", "1")
	p.want(0, "tasks", "add", "S-DONE", "T2", "--wave", "2", "--depends-on", "T1")
	if out := p.want(0, "tasks", "ready", "S-DONE"); !strings.HasPrefix(out, "T1") || strings.Contains(out, "T2") {
		t.Fatalf("ready: %q", out)
	}
	p.want(3, "tasks", "done", "S-DONE", "T2")
	p.want(0, "tasks", "done", "S-DONE", "T1")
	p.want(0, "tasks", "done", "S-DONE", "T2")
	// Refactor gates IMPLEMENTATION; QA and Security gate CI_CD (GATE_PENDING, exit 3, nothing changed).
	p.propose(3, "implementation", "S-DONE", "0.96")
	p.propose(0, "refactor", "S-DONE", "0.97")
	p.propose(0, "implementation", "S-DONE", "0.96")
	p.propose(0, "qa", "S-DONE", "0.97")
	p.propose(3, "devops", "S-DONE", "0.97")
	for _, step := range [][2]string{{"security", "0.98"}, {"devops", "0.97"}, {"observability", "0.97"}} {
		p.propose(0, step[0], "S-DONE", step[1])
	}
	if got := p.status("S-DONE"); got != asdd.Done {
		t.Fatalf("S-DONE is %s", got)
	}
	p.propose(3, "observability", "S-DONE", "0.97")

	// 1. An agent below its minimum, resolved by approving a re-run.
	p.want(0, "slice", "add", "S-MIN")
	p.propose(0, "discovery", "S-MIN", "0.97")
	if out := p.propose(3, "spec", "S-MIN", "0.80"); !strings.Contains(out, "BELOW_THRESHOLD") {
		t.Fatalf("%s", out)
	}
	req, _ := os.ReadFile(filepath.Join(p.dir, "specs/S-MIN/requirements.md"))
	if !strings.HasPrefix(string(req), asdd.DefaultMarker+"\n") {
		t.Fatalf("halted artifact not marked: %q", req)
	}
	p.propose(3, "validation", "S-MIN", "0.97") // paused downstream
	p.want(0, "resolve", "S-MIN", "--role", "TL", "--rationale", "ambiguities listed for the next run", "--root-cause", "vague intent")
	p.propose(0, "spec", "S-MIN", "0.97")

	// 2. A low-confidence cascade, resolved by returning to SPEC.
	p.want(0, "slice", "add", "S-CAS")
	p.propose(0, "discovery", "S-CAS", "0.97")
	p.propose(3, "spec", "S-CAS", "0.84")
	p.want(0, "approve", "S-CAS", "--role", "TL", "--rationale", "accept the spec as is")
	if out := p.propose(3, "validation", "S-CAS", "0.89"); !strings.Contains(out, "Low-confidence cascade") {
		t.Fatalf("%s", out)
	}
	p.want(0, "resolve", "S-CAS", "--role", "TL", "--rationale", "rewrite the spec", "--to", "SPEC")
	p.propose(0, "spec", "S-CAS", "0.97")
	p.propose(0, "validation", "S-CAS", "0.97")

	// 3. Cascading confidence failure (CCS below 0.65), resolved by returning to DESIGN.
	p.want(0, "slice", "add", "S-CCS")
	p.propose(0, "discovery", "S-CCS", "0.90")
	p.propose(0, "spec", "S-CCS", "0.88")
	p.propose(0, "validation", "S-CCS", "0.91")
	if out := p.propose(3, "design", "S-CCS", "0.82"); !strings.Contains(out, "CCS 0.591 < floor 0.65") {
		t.Fatalf("%s", out)
	}
	p.want(0, "resolve", "S-CCS", "--role", "TL", "--rationale", "review all artifacts; redo design", "--action", "return", "--to", "DESIGN")
	p.propose(0, "design", "S-CCS", "0.95")

	// 4. Infinite refinement loop: the third submission of SPEC.
	p.want(0, "slice", "add", "S-LOOP")
	p.propose(0, "discovery", "S-LOOP", "0.97")
	p.propose(3, "spec", "S-LOOP", "0.80")
	p.want(0, "resolve", "S-LOOP", "--role", "TL", "--rationale", "again")
	p.propose(3, "spec", "S-LOOP", "0.81")
	p.want(0, "resolve", "S-LOOP", "--role", "TL", "--rationale", "once more")
	if out := p.propose(3, "spec", "S-LOOP", "0.97"); !strings.Contains(out, "SLICE_HALTED") || !strings.Contains(out, "3rd time") {
		t.Fatalf("%s", out)
	}
	p.want(0, "resolve", "S-LOOP", "--role", "TL", "--rationale", "loop broken by hand", "--action", "resume")
	if got := p.status("S-LOOP"); got != asdd.Validation {
		t.Fatalf("S-LOOP is %s", got)
	}

	// 5. Conflicting concurrent outputs with no steering rule: escalated, TL arbitrates.
	p.want(0, "slice", "add", "S-CON")
	for _, a := range []string{"discovery", "spec", "validation"} {
		p.propose(0, a, "S-CON", "0.97")
	}
	var board asdd.Board
	if err := json.Unmarshal([]byte(p.want(0, "--json", "status")), &board); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprint(board.Revision)
	p.write("specs/S-CON/glossary-k.md", "k")
	p.write("specs/S-CON/glossary-d.md", "d")
	p.want(0, "propose", "--agent", "knowledge", "--slice", "S-CON", "--score", "0.97", "--artifact", "glossary=specs/S-CON/glossary-k.md", "--base-revision", base)
	if out := p.propose(4, "domain", "S-CON", "0.97", "--artifact", "glossary=specs/S-CON/glossary-d.md", "--base-revision", base); !strings.Contains(out, "CONFLICT") {
		t.Fatalf("%s", out)
	}
	p.want(0, "approve", "S-CON", "--role", "TL", "--rationale", "domain's glossary wins")

	// 6. State drift: an artifact edited by hand halts the slice until approved.
	p.want(0, "slice", "add", "S-DRIFT")
	p.propose(0, "discovery", "S-DRIFT", "0.97")
	p.write("specs/S-DRIFT/intent.md", "edited without the custodian\n")
	p.propose(5, "spec", "S-DRIFT", "0.97")
	p.want(0, "approve", "S-DRIFT", "--role", "TL", "--rationale", "hand edit reviewed")
	p.propose(0, "spec", "S-DRIFT", "0.97")

	// 7. A failure an agent detects: a hallucinated spec section.
	p.want(0, "slice", "add", "S-HAL")
	p.propose(0, "discovery", "S-HAL", "0.97")
	p.propose(0, "spec", "S-HAL", "0.97")
	p.want(0, "halt", "S-HAL", "--agent", "validation", "--mode", "hallucinated_spec_section", "--reason", "'Escrow' is not a domain term", "--flag", "REQ-007", "--artifact", "requirements=specs/S-HAL/requirements.md")
	p.propose(3, "validation", "S-HAL", "0.97")
	p.want(0, "resolve", "S-HAL", "--role", "TL", "--rationale", "REQ-007 removed", "--to", "SPEC")

	// 8. A lock conflict.
	p.want(0, "lock", "S-DRIFT", "--holder", "validation", "--ttl", "1h")
	p.propose(4, "knowledge", "S-DRIFT", "0.97")
	p.want(0, "unlock", "S-DRIFT", "--holder", "validation")

	// Several agent processes at once: every commit lands, none is lost.
	before := p.manifest().Revision
	var wg sync.WaitGroup
	agents := []string{"discovery", "spec", "validation", "domain", "design", "implementation", "qa", "devops"}
	errs := make(chan string, len(agents))
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(p.bin, "-C", p.dir, "heartbeat", "--agent", a, "--slice", "S-DONE", "--done", "1", "--remaining", "2")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("%s: %v %s", a, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	m := p.manifest()
	if m.Revision != before+uint64(len(agents)) {
		t.Fatalf("revision %d after %d concurrent heartbeats from %d", m.Revision, len(agents), before)
	}
	for _, a := range agents {
		if m.AgentHeartbeats[asdd.HeartbeatKey(a)].CurrentSlice != "S-DONE" {
			t.Errorf("heartbeat of %s lost", a)
		}
	}

	// Every halt was escalated, logged, and resolved.
	if bad := asdd.Invariants(m, asdd.DefaultConfig()); len(bad) > 0 {
		t.Fatalf("invariants: %v", bad)
	}
	modes := map[string]bool{}
	var escalations int
	for _, s := range m.Slices {
		if s.Status == asdd.Blocked {
			t.Errorf("%s still blocked", s.SliceID)
		}
		for _, e := range s.Escalations {
			escalations++
			modes[e.FailureMode] = true
			if e.Status != asdd.EscalationResolved || e.TimeToResolve == "" {
				t.Errorf("%s: escalation %s not resolved", s.SliceID, e.ID)
			}
			notice, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(e.Path)))
			if err != nil || !strings.Contains(string(notice), "- Decision: ") {
				t.Errorf("notice %s: %v %q", e.Path, err, notice)
			}
		}
	}
	for _, mode := range []string{asdd.ModeBelowMinimum, asdd.ModeLowCascade, asdd.ModeCCSFloor, asdd.ModeRefinementLoop, asdd.ModeConflict, asdd.ModeDrift, asdd.ModeHallucinatedSpec} {
		if !modes[mode] {
			t.Errorf("no escalation of %s", mode)
		}
	}
	log, err := os.ReadFile(filepath.Join(p.dir, asdd.FailureLogPath))
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Count(string(log), "<!-- ESC-"); rows != escalations || strings.Contains(string(log), "open — routed") {
		t.Errorf("failure log has %d rows for %d escalations:\n%s", rows, escalations, log)
	}
	p.want(0, "verify", asdd.Key)
	if out := p.want(0, "escalations"); strings.Contains(out, "ESC-") {
		t.Errorf("open escalations left: %s", out)
	}
}

// `custodian demo DIR` runs its concurrent agent processes and ends with
// the board: one slice DONE, one halted by the CCS floor, one refused by a
// lease and then halted by two agents' concurrent conflicting changes, one
// halted below its minimum and resolved.
func TestASDDDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	p := &proc{t: t, bin: testbin.Path(t), dir: filepath.Join(t.TempDir(), "demo")}
	cmd := exec.Command(p.bin, "demo", p.dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	for _, want := range []string{"SLICE_LOCKED", "Conflicting agent outputs", "Cascading Confidence Failure", "Implementation Agent confidence 0.71 < threshold 0.75", "RESOLVE", "ASDD board", "Quick mode"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("demo output lacks %q", want)
		}
	}
	m := p.manifest()
	if bad := asdd.Invariants(m, asdd.DefaultConfig()); len(bad) > 0 {
		t.Fatalf("invariants: %v", bad)
	}
	s1, s2, s3, s4 := m.Slice("SLICE-001"), m.Slice("SLICE-002"), m.Slice("SLICE-003"), m.Slice("SLICE-004")
	if s1.Status != asdd.Done || s4.Status != asdd.Done {
		t.Errorf("SLICE-001 %s, SLICE-004 %s: want DONE", s1.Status, s4.Status)
	}
	if s2.Status != asdd.Blocked || s2.FailureMode != asdd.ModeCCSFloor {
		t.Errorf("SLICE-002 %s %s", s2.Status, s2.FailureMode)
	}
	if s3.Status != asdd.Blocked || s3.FailureMode != asdd.ModeConflict || s3.Lock == nil || s3.Lock.Status != "LOCK" || s3.Lock.Requester == "" || len(s3.OpenEscalation().Conflict) != 1 {
		t.Errorf("SLICE-003 %s %s lock %+v", s3.Status, s3.FailureMode, s3.Lock)
	}
	if len(s4.Escalations) != 1 || s4.Escalations[0].Status != asdd.EscalationResolved {
		t.Errorf("SLICE-004 escalations %+v", s4.Escalations)
	}
	p.want(2, "demo", p.dir) // not over an existing project
	// The closing hints name a command that works here (this binary is not
	// "custodian" on PATH) and the web dashboard.
	for _, want := range []string{p.bin + " -C " + p.dir + " status", p.bin + " -C " + p.dir + " serve   (the web dashboard"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("demo hints lack %q:\n%s", want, out[bytes.LastIndex(out, []byte("Look around")):])
		}
	}
}

// `custodian demo --serve` ends with the web dashboard of the demo project,
// until interrupted (exit 0).
func TestASDDDemoServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := testbin.Path(t)
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := exec.Command(bin, "demo", dir, "--serve", "--addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "dashboard: "); ok {
				urls <- strings.Fields(u)[0]
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(90 * time.Second):
		t.Fatalf("no dashboard address; stdout:\n%s", stdout.String())
	}
	// The printed address carries the admin token (#admin=…), which TCP
	// needs.
	base, frag, _ := strings.Cut(url, "#")
	token := strings.TrimPrefix(frag, "admin=")
	req, _ := http.NewRequest("GET", base+"board.json", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("QUICK-001")) || !bytes.Contains(body, []byte("SLICE-004")) {
		t.Fatalf("board.json: %d %s", resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("demo --serve after Ctrl-C: %v", err)
	}
}
