package runner

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

const sixAndTwo = `, "tasks": [{"id":"A1","wave":1},{"id":"A2","wave":1},{"id":"A3","wave":1},{"id":"A4","wave":1},{"id":"A5","wave":1},{"id":"A6","wave":1},{"id":"B1","wave":2,"depends_on":["A1"]},{"id":"B2","wave":2}]}`

// planner is the fake behaviour of a pipeline whose agents all pass; the
// planning agent plans 6 tasks in wave 1 and 2 in wave 2.
func planner(env map[string]string) fakeRun {
	a := env["CUSTODIAN_AGENT"]
	if env["CUSTODIAN_TASK"] != "" {
		return fakeRun{sleep: 50 * time.Millisecond}
	}
	out := result(a, 0.97)
	if a == "task_planning" {
		out = strings.TrimSuffix(strings.TrimSpace(out), "}") + sixAndTwo + "\n"
	}
	return fakeRun{out: out}
}

// A slice through every phase to DONE; sub-agents bounded by max_parallel
// and waves in order, from the fake processes' own record.
func TestRunToDoneWithWaves(t *testing.T) {
	cfg := testConfig(time.Minute)
	st := newMemState(t, cfg, "S")
	fs := &fakeStarter{behave: planner}
	var events []Event
	r := newTestRunner(t, cfg, st, fs, Options{MaxParallel: 3, Progress: func(e Event) { events = append(events, e) }})
	sum, err := r.Run(context.Background(), []string{"S", "S"})
	if err != nil {
		t.Fatal(err)
	}
	if s := st.slice("S"); s.Status != asdd.Done {
		t.Fatalf("status %s; summary %+v", s.Status, sum)
	}
	if !sum.OK() || len(sum.Slices) != 1 || sum.Slices[0].Outcome != OutcomeDone {
		t.Errorf("summary %+v", sum)
	}
	if fs.maxRunning != 3 {
		t.Errorf("at most %d processes at once, want exactly 3", fs.maxRunning)
	}
	lastA, firstB := -1, len(fs.log)
	for i, l := range fs.log {
		if strings.HasPrefix(l, "end S/implementation/A") {
			lastA = i
		}
		if strings.HasPrefix(l, "start S/implementation/B") && i < firstB {
			firstB = i
		}
	}
	if firstB < lastA {
		t.Errorf("wave 2 started before wave 1 ended:\n%s", strings.Join(fs.log, "\n"))
	}
	for _, a := range []string{"discovery", "spec", "implementation", "observability"} {
		if n := fs.starts("S/" + a); n != 1 {
			t.Errorf("%s ran %d times", a, n)
		}
	}
	// Refactor gates IMPLEMENTATION: it runs once, after the waves and
	// before the implementation agent reports.
	if n := fs.starts("S/refactor"); n != 1 {
		t.Errorf("refactor ran %d times", n)
	}
	refactor, report := -1, -1
	for i, l := range fs.log {
		if strings.HasPrefix(l, "start S/refactor") {
			refactor = i
		}
		if l == "start S/implementation" || strings.HasPrefix(l, "start S/implementation ") {
			report = i
		}
	}
	if refactor < 0 || report < refactor || refactor < lastA {
		t.Errorf("refactor at %d, implementation's report at %d, last wave-1 task at %d:\n%s", refactor, report, lastA, strings.Join(fs.log, "\n"))
	}
	waves := 0
	for _, e := range events {
		if e.Kind == EvWave {
			waves++
		}
	}
	if waves != 2 {
		t.Errorf("%d wave events, want 2", waves)
	}
	m, _ := st.Manifest(context.Background())
	if h := m.AgentHeartbeats["implementation_agent"]; h == nil || h.Status != asdd.HeartbeatIdle {
		t.Errorf("implementation heartbeat %+v", h)
	}
}

// A hung agent is killed at its timeout, retried once, then escalated.
func TestTimeoutRetriedThenEscalated(t *testing.T) {
	cfg := testConfig(40 * time.Millisecond)
	st := newMemState(t, cfg, "S")
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun {
		if env["CUSTODIAN_AGENT"] == "spec" {
			return fakeRun{hang: true}
		}
		return fakeRun{out: result(env["CUSTODIAN_AGENT"], 0.97)}
	}}
	r := newTestRunner(t, cfg, st, fs, Options{})
	sum, err := r.Run(context.Background(), []string{"S"})
	if err != nil {
		t.Fatal(err)
	}
	if n := fs.starts("S/spec"); n != 2 {
		t.Fatalf("spec ran %d times, want 2", n)
	}
	s := st.slice("S")
	if s.Status != asdd.Blocked || s.FailureMode != asdd.ModeAgentTimeout || !strings.Contains(s.BlockReason, "1 retry") || !strings.Contains(s.BlockReason, "no result within 40ms") {
		t.Fatalf("slice %s %s %q", s.Status, s.FailureMode, s.BlockReason)
	}
	if sum.Timeouts != 2 || sum.Retries != 1 || sum.Escalations != 1 || sum.OK() {
		t.Errorf("summary %+v", sum)
	}
	if fs.starts("S/validation") != 0 {
		t.Error("a downstream agent ran")
	}
}

// A crash is retried once; a retry that reports goes on.
func TestCrashRetried(t *testing.T) {
	cfg := testConfig(time.Minute)
	st := newMemState(t, cfg, "S")
	crashed := false
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun {
		if env["CUSTODIAN_AGENT"] == "spec" && !crashed {
			crashed = true
			return fakeRun{code: 7, out: "panic\n"}
		}
		return fakeRun{out: result(env["CUSTODIAN_AGENT"], 0.97)}
	}}
	r := newTestRunner(t, cfg, st, fs, Options{Until: asdd.Design})
	sum, err := r.Run(context.Background(), []string{"S"})
	if err != nil {
		t.Fatal(err)
	}
	if s := st.slice("S"); s.Status != asdd.Design {
		t.Fatalf("status %s", s.Status)
	}
	if sum.Crashes != 1 || sum.Retries != 1 || sum.Escalations != 0 || !sum.OK() {
		t.Errorf("summary %+v", sum)
	}
}

// A halt stops its slice's agents, never the other slices'.
func TestHaltStopsOnlyItsSlice(t *testing.T) {
	cfg := testConfig(time.Minute)
	st := newMemState(t, cfg, "GOOD", "BAD")
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun {
		score := 0.97
		if env["CUSTODIAN_SLICE"] == "BAD" && env["CUSTODIAN_AGENT"] == "validation" {
			score = 0.5
		}
		return fakeRun{sleep: 2 * time.Millisecond, out: result(env["CUSTODIAN_AGENT"], score)}
	}}
	r := newTestRunner(t, cfg, st, fs, Options{Until: asdd.Implementation})
	sum, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := st.slice("BAD"); s.Status != asdd.Blocked || s.FailureMode != asdd.ModeBelowMinimum {
		t.Errorf("BAD %s %s", s.Status, s.FailureMode)
	}
	if s := st.slice("GOOD"); s.Status != asdd.Implementation {
		t.Errorf("GOOD %s", s.Status)
	}
	if fs.starts("BAD/domain") != 0 || fs.starts("GOOD/design") != 1 {
		t.Errorf("runs %v", fs.log)
	}
	got := map[string]string{}
	for _, s := range sum.Slices {
		got[s.Slice] = s.Outcome
	}
	if got["BAD"] != OutcomeHalted || got["GOOD"] != OutcomeStopped || sum.OK() {
		t.Errorf("outcomes %v", got)
	}
}

// An agent killed because another agent halted its slice while it ran.
func TestRunningAgentStoppedByHalt(t *testing.T) {
	cfg := testConfig(time.Minute)
	st := newMemState(t, cfg, "S")
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun {
		if env["CUSTODIAN_AGENT"] == "spec" {
			go func() {
				time.Sleep(20 * time.Millisecond)
				st.Apply(context.Background(), asdd.ReportFailure{Agent: "validation", Slice: "S", Mode: asdd.ModeHallucinatedSpec, Reason: "undefined term"}, nil)
			}()
			return fakeRun{hang: true}
		}
		return fakeRun{out: result(env["CUSTODIAN_AGENT"], 0.97)}
	}}
	r := newTestRunner(t, cfg, st, fs, Options{})
	sum, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Slices[0].Outcome != OutcomeHalted || fs.starts("S/spec") != 1 {
		t.Errorf("summary %+v, runs %v", sum, fs.log)
	}
}

// A result that breaks the rules is rejected and stops the slice; a
// missing command stops it with the reason.
func TestRejectedResultAndMissingCommand(t *testing.T) {
	cfg := testConfig(time.Minute)
	st := newMemState(t, cfg, "S")
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun {
		return fakeRun{out: `{"score": 0.9, "artifacts": {"intent": "i.md"}}`} // below 0.95 without uncertainty factors
	}}
	r := newTestRunner(t, cfg, st, fs, Options{})
	sum, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := sum.Slices[0]; o.Outcome != OutcomeRejected || !strings.Contains(o.Why, string(reason.MissingUncertaintyFactors)) {
		t.Errorf("summary %+v", o)
	}
	cfg2 := testConfig(time.Minute)
	a, _ := cfg2.Agent("spec")
	a.Command = nil
	st2 := newMemState(t, cfg2, "S")
	st2.must(t, asdd.Proposal{Agent: "discovery", Slice: "S", Score: 0.97, Artifacts: []asdd.Artifact{mustArtifact(st2, "intent")}})
	r2 := newTestRunner(t, cfg2, st2, &fakeStarter{behave: planner}, Options{})
	sum, err = r2.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := sum.Slices[0]; o.Outcome != OutcomeStopped || !strings.Contains(o.Why, "no command") {
		t.Errorf("summary %+v", o)
	}
}

func mustArtifact(st *memState, name string) asdd.Artifact {
	a, _ := st.Artifact(name, "specs/"+name+".md", "")
	return a
}

// The environment: the run's variables win over an inherited or
// configured value; the agent's env is added; the admin token of the
// person who started the run is not passed on.
func TestAgentEnvironment(t *testing.T) {
	cfg := testConfig(time.Minute)
	a, _ := cfg.Agent("discovery")
	a.Env = map[string]string{"MODEL": "small"}
	st := newMemState(t, cfg, "S")
	var got map[string]string
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun {
		got = env
		return fakeRun{code: 1}
	}}
	cfg.Heartbeat.Retries = 0
	r := newTestRunner(t, cfg, st, fs, Options{Vars: map[string]string{"CUSTODIAN_SERVER": "unix:///x.sock"}})
	if _, err := r.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"MODEL": "small", "CUSTODIAN_SLICE": "S", "CUSTODIAN_AGENT": "discovery", "CUSTODIAN_TASK": "",
		"CUSTODIAN_SERVER": "unix:///x.sock", "PATH": "/usr/bin", "CUSTODIAN_ATTEMPT": "1", "CUSTODIAN_ACTOR": "agent:discovery"} {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if _, err := os.Stat(got["CUSTODIAN_CONTEXT"]); err != nil {
		t.Errorf("context packet: %v", err)
	}
	if v, ok := got["CUSTODIAN_ADMIN_TOKEN"]; ok {
		t.Errorf("the agent inherited the admin token %q", v)
	}
}

// The runner lock: one runner per project; a run file left by a dead
// runner is refused without --resume, and with it its process groups are
// killed.
func TestRunLockAndResume(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	rl, _, _, err := acquireRun(root, "a", now, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := acquireRun(root, "b", now, false); reason.CodeOf(err) != reason.Conflict {
		t.Fatalf("second runner: %v", err)
	}
	// A leftover agent in its own process group, as a dead runner leaves it.
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if err := rl.add(RunProc{Slice: "S", Agent: "spec", PGID: cmd.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	rl.lock.Unlock() // the runner dies: the kernel frees its lock, the file stays
	if _, _, _, err := acquireRun(root, "c", now, false); reason.CodeOf(err) != reason.Conflict || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("after a crash, without --resume: %v", err)
	}
	rl2, prev, killed, err := acquireRun(root, "d", now, true)
	if err != nil {
		t.Fatal(err)
	}
	if prev == nil || len(killed) != 1 || killed[0].PGID != cmd.Process.Pid {
		t.Fatalf("prev %+v killed %+v", prev, killed)
	}
	done := make(chan error)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the leftover agent was not killed")
	}
	if err := rl2.release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root + "/" + RunDir + "/runner.json"); !os.IsNotExist(err) {
		t.Errorf("run file after release: %v", err)
	}
}

// Quick mode: a QUICK_FIX slice, implementation then QA, logged.
func TestQuick(t *testing.T) {
	cfg := testConfig(time.Minute)
	st := newMemState(t, cfg)
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun { return fakeRun{out: result(env["CUSTODIAN_AGENT"], 0.97)} }}
	r := newTestRunner(t, cfg, st, fs, Options{})
	sum, err := r.Quick(context.Background(), "Fix typo in login header")
	if err != nil {
		t.Fatal(err)
	}
	s := st.slice("QUICK-001")
	if s == nil || s.Status != asdd.QuickFix || !sum.OK() {
		t.Fatalf("slice %+v summary %+v", s, sum)
	}
	var agents []string
	for _, e := range s.ConfidenceChain {
		agents = append(agents, e.Agent)
	}
	if !slices.Equal(agents, []string{"implementation", "qa"}) {
		t.Errorf("chain %v", agents)
	}
}

// A quick fix recorded by hand (`custodian quick`) is done: a run without
// slice ids leaves it alone; named, it gets its implementation and QA runs.
func TestQuickFixRunsOnlyWhenNamed(t *testing.T) {
	cfg := testConfig(time.Minute)
	st := newMemState(t, cfg)
	st.must(t, asdd.Quick{Description: "Fix typo by hand"})
	fs := &fakeStarter{behave: func(env map[string]string) fakeRun { return fakeRun{out: result(env["CUSTODIAN_AGENT"], 0.97)} }}
	sum, err := newTestRunner(t, cfg, st, fs, Options{}).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Slices) != 0 || len(fs.log) != 0 {
		t.Fatalf("unnamed quick fix ran: %+v %v", sum, fs.log)
	}
	if _, err := newTestRunner(t, cfg, st, fs, Options{}).Run(context.Background(), []string{"QUICK-001"}); err != nil {
		t.Fatal(err)
	}
	if fs.starts("QUICK-001/implementation") != 1 || fs.starts("QUICK-001/qa") != 1 {
		t.Errorf("named quick fix: %v", fs.log)
	}
}

// A command that cannot start is a configuration error: the slice stops
// with it, nothing is retried or escalated.
func TestCommandThatCannotStart(t *testing.T) {
	cfg := testConfig(time.Minute)
	a, _ := cfg.Agent("discovery")
	a.Command = []string{"/nonexistent/agent"}
	st := newMemState(t, cfg, "S")
	r, err := New(Options{Root: t.TempDir(), Config: cfg, State: st})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := r.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := sum.Slices[0]; o.Outcome != OutcomeError || !strings.Contains(o.Why, "could not start") || sum.Retries != 0 || st.slice("S").Status != asdd.Discovery {
		t.Errorf("summary %+v", sum)
	}
}
