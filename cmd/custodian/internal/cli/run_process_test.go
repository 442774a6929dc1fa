package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/testbin"
)

// scriptedAgent is the agent every runner test configures: a POSIX shell
// script that logs its start and end (with nanosecond times, from the
// agent itself) to $LOG, writes its phase artifact, and reports a score —
// printed as a result, or with `custodian propose` itself when it is $SELF.
// $HANG hangs (with a child in its process group, pid in $PIDS), $CRASH
// exits 7; sub-agents ($CUSTODIAN_TASK) sleep $SLEEP_<task> or $TASK_SLEEP.
const scriptedAgent = `#!/bin/sh
a=$CUSTODIAN_AGENT
t=${CUSTODIAN_TASK:--}
echo "start $CUSTODIAN_SLICE $a $t $(date +%s%N)" >> "$LOG"
[ -n "$SERVERS" ] && echo "$a $CUSTODIAN_SERVER" >> "$SERVERS"
[ -f "$CUSTODIAN_CONTEXT" ] || { echo "no context packet" >&2; exit 9; }
if [ "$t" != "-" ]; then
  eval "s=\${SLEEP_$t:-\${TASK_SLEEP:-0.1}}"
  sleep "$s"
  echo "end $CUSTODIAN_SLICE $a $t $(date +%s%N)" >> "$LOG"
  exit 0
fi
if [ "$a" = "$HANG" ]; then
  sleep 60 &
  echo $! >> "$PIDS"
  wait
fi
[ "$a" = "$CRASH" ] && exit 7
eval "score=\${SCORE_$a:-0.97}"
case $a in
  discovery) art=intent;; spec) art=requirements;; domain) art=domain_model;; design) art=design;; task_planning) art=tasks;; *) art=;;
esac
arts=
if [ -n "$art" ]; then
  f=.asdd/specs/$CUSTODIAN_SLICE/$art.md
  mkdir -p .asdd/specs/$CUSTODIAN_SLICE
  echo "# $art of $CUSTODIAN_SLICE by $a" > "$f"
  arts=", \"artifacts\": {\"$art\": \"$f\"}"
fi
unc=
case $score in 0.9[5-9]*|1*) ;; *) unc=', "uncertainty_factors": ["scripted doubt"]';; esac
extra=
[ "$a" = task_planning ] && [ -n "$TASKS" ] && extra=", \"tasks\": $TASKS"
echo "end $CUSTODIAN_SLICE $a $t $(date +%s%N)" >> "$LOG"
if [ "$a" = "$SELF" ]; then
  "$CUSTODIAN_BIN" propose --agent "$a" --slice "$CUSTODIAN_SLICE" --score "$score" --artifact "$art=$f" \
    --base-revision "$CUSTODIAN_BASE_REVISION" >/dev/null
  exit 0
fi
echo "some chatter from the agent"
echo "{\"score\": $score$arts$unc$extra}"
`

// runProject is a project whose agents are the scripted agent.
type runProject struct {
	*proc
	env []string
	log string
}

var agentLine = regexp.MustCompile(`(?m)^  - name: (\w+)\n`)

func newRunProject(t *testing.T, timeouts map[string]string, env ...string) *runProject {
	t.Helper()
	p := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want(0, "init")
	script := filepath.Join(p.dir, "agent.sh")
	if err := os.WriteFile(script, []byte(scriptedAgent), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := agentLine.ReplaceAllStringFunc(string(asdd.DefaultConfigYAML), func(m string) string {
		name := agentLine.FindStringSubmatch(m)[1]
		if name == "knowledge" {
			return m
		}
		m += "    command: [" + script + "]\n"
		if d := timeouts[name]; d != "" {
			m += "    timeout: " + d + "\n"
		}
		return m
	})
	p.write(asdd.ConfigPath, cfg)
	log := filepath.Join(p.dir, "agents.log")
	return &runProject{proc: p, log: log,
		env: append([]string{"LOG=" + log, "PIDS=" + filepath.Join(p.dir, "pids")}, env...)}
}

// custodian starts the binary with the test's agent environment.
func (p *runProject) command(args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(p.bin, append([]string{"-C", p.dir}, args...)...)
	cmd.Env = append(os.Environ(), p.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

func (p *runProject) runner(code int, args ...string) string {
	p.t.Helper()
	cmd, out := p.command(args...)
	err := cmd.Run()
	got := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		got = exit.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	if got != code {
		p.t.Fatalf("custodian %s: exit %d, want %d\n%s", strings.Join(args, " "), got, code, out)
	}
	return out.String()
}

// logEntry is one line the scripted agents wrote.
type logEntry struct {
	what, slice, agent, task string
	at                       int64
}

func (p *runProject) entries() []logEntry {
	p.t.Helper()
	f, err := os.Open(p.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		p.t.Fatal(err)
	}
	defer f.Close()
	var out []logEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 5 {
			p.t.Fatalf("bad agent log line %q", sc.Text())
		}
		at, err := strconv.ParseInt(fs[4], 10, 64)
		if err != nil {
			p.t.Fatalf("bad time in %q", sc.Text())
		}
		out = append(out, logEntry{fs[0], fs[1], fs[2], fs[3], at})
	}
	return out
}

// starts counts the runs of an agent (a task, or "-" for the phase agent).
func starts(es []logEntry, slice, agent, task string) int {
	n := 0
	for _, e := range es {
		if e.what == "start" && e.slice == slice && e.agent == agent && e.task == task {
			n++
		}
	}
	return n
}

// A slice from DISCOVERY to DONE driven only by the runner: scripted agents
// that print their result or propose themselves, a plan in two waves.
func TestRunSliceToDone(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	t.Parallel()
	p := newRunProject(t, nil, "SELF=spec",
		`TASKS=[{"id":"T1","wave":1,"requirement":"REQ-001"},{"id":"T2","wave":1},{"id":"T3","wave":2,"depends_on":["T1"]}]`)
	p.want(0, "slice", "add", "S1", "--name", "Login")
	dry := p.runner(0, "run", "--dry-run", "S1")
	for _, want := range []string{"DISCOVERY       discovery", "CI_CD           devops", "then: DONE"} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry)
		}
	}
	if len(p.entries()) != 0 {
		t.Fatal("the dry run started agents")
	}
	out := p.runner(0, "run", "S1")
	m := p.manifest()
	s := m.Slice("S1")
	if s.Status != asdd.Done {
		t.Fatalf("status %s, want DONE\n%s", s.Status, out)
	}
	es := p.entries()
	for _, a := range []string{"discovery", "spec", "validation", "domain", "design", "task_planning", "refactor", "implementation", "qa", "security", "devops", "observability"} {
		if n := starts(es, "S1", a, "-"); n != 1 {
			t.Errorf("%s ran %d times, want once", a, n)
		}
	}
	for _, task := range []string{"T1", "T2", "T3"} {
		if n := starts(es, "S1", "implementation", task); n != 1 {
			t.Errorf("task %s ran %d times", task, n)
		}
	}
	if len(s.Tasks) != 3 || slices.ContainsFunc(s.Tasks, func(t asdd.Task) bool { return t.Status != asdd.TaskDone }) {
		t.Errorf("tasks %+v", s.Tasks)
	}
	// The spec agent proposed itself; the others were proposed for.
	var spec asdd.ChainEntry
	for _, e := range s.ConfidenceChain {
		if e.Agent == "spec" {
			spec = e
		}
	}
	if spec.Outcome != asdd.OutcomeAccepted || s.PhaseData["requirements"] == "" {
		t.Errorf("spec entry %+v, phase data %v", spec, s.PhaseData)
	}
	for k, h := range m.AgentHeartbeats {
		if h.Status != asdd.HeartbeatIdle {
			t.Errorf("heartbeat %s left %s", k, h.Status)
		}
	}
	if !strings.Contains(out, "S1     DONE    done") {
		t.Errorf("summary:\n%s", out)
	}
	// Every run had its context packet; T1's names its requirement.
	packets, _ := filepath.Glob(filepath.Join(p.dir, ".asdd/runs/*/*-S1-implementation-T1-1.json"))
	if len(packets) != 1 {
		t.Fatalf("packets for T1: %v", packets)
	}
	b, _ := os.ReadFile(packets[0])
	if !bytes.Contains(b, []byte(`"id": "REQ-001"`)) || !bytes.Contains(b, []byte(`"requirements"`)) && !bytes.Contains(b, []byte(`requirements.md`)) {
		t.Errorf("T1 packet:\n%s", b)
	}
	// Nothing left to do: a second run starts nothing.
	before := len(p.entries())
	p.runner(0, "run", "S1")
	if after := len(p.entries()); after != before {
		t.Errorf("a run on a DONE slice started %d agents", (after-before)/2)
	}
}

// Six tasks in wave 1 and two in wave 2 with max_parallel 3: never more
// than three sub-agents at once, as the agents themselves recorded, and no
// wave-2 task before every wave-1 task ended.
func TestRunWavesBoundedAndOrdered(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	t.Parallel()
	tasks := `[{"id":"A1","wave":1},{"id":"A2","wave":1},{"id":"A3","wave":1},{"id":"A4","wave":1},{"id":"A5","wave":1},{"id":"A6","wave":1},` +
		`{"id":"B1","wave":2,"depends_on":["A1"]},{"id":"B2","wave":2}]`
	p := newRunProject(t, nil, "TASKS="+tasks, "TASK_SLEEP=0.6", "SLEEP_A2=0.05", "SLEEP_A5=0.9")
	p.want(0, "slice", "add", "W")
	p.runner(0, "run", "W", "--max-parallel", "3", "--until", "CI_CD")
	es := p.entries()
	type span struct {
		start, end int64
		wave       int
	}
	spans := map[string]*span{}
	for _, e := range es {
		if e.agent != "implementation" || e.task == "-" {
			continue
		}
		sp := spans[e.task]
		if sp == nil {
			sp = &span{wave: 1}
			if e.task[0] == 'B' {
				sp.wave = 2
			}
			spans[e.task] = sp
		}
		if e.what == "start" {
			if sp.start != 0 {
				t.Errorf("task %s started twice", e.task)
			}
			sp.start = e.at
		} else {
			sp.end = e.at
		}
	}
	if len(spans) != 8 {
		t.Fatalf("%d tasks ran, want 8: %v", len(spans), spans)
	}
	// Concurrency from the agents' own times: at each start, how many ran.
	most := 0
	for name, a := range spans {
		if a.end == 0 {
			t.Fatalf("task %s never ended", name)
		}
		n := 0
		for _, b := range spans {
			if b.start <= a.start && a.start < b.end {
				n++
			}
		}
		most = max(most, n)
	}
	if most > 3 {
		t.Errorf("%d sub-agents ran at once, max_parallel is 3", most)
	}
	if most < 3 {
		t.Errorf("at most %d sub-agents ran at once: the wave did not run in parallel", most)
	}
	var lastWave1 int64
	for _, s := range spans {
		if s.wave == 1 {
			lastWave1 = max(lastWave1, s.end)
		}
	}
	for name, s := range spans {
		if s.wave == 2 && s.start < lastWave1 {
			t.Errorf("wave-2 task %s started %v before wave 1 ended", name, time.Duration(lastWave1-s.start))
		}
	}
	if st := p.manifest().Slice("W").Status; st != asdd.CICD {
		t.Errorf("status %s, want CI_CD (--until)", st)
	}
}

// A hung agent: its process group is killed at its timeout, the run
// retried once, then escalated (the slice halts with AGENT_TIMEOUT, an
// escalation notice and a failure-log row); the other slice goes on.
func TestRunHungAgentKilledRetriedEscalated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	t.Parallel()
	p := newRunProject(t, map[string]string{"spec": "700ms"}, "HANG=spec")
	p.want(0, "slice", "add", "H")
	start := time.Now()
	out := p.runner(3, "run", "H", "--status-every", "200ms")
	// (a hung agent not killed would hang the run for ever: the bound
	// leaves room for a busy machine)
	if d := time.Since(start); d > 2*time.Minute {
		t.Errorf("the run took %s", d)
	}
	es := p.entries()
	if n := starts(es, "H", "spec", "-"); n != 2 {
		t.Fatalf("the hung agent ran %d times, want 2 (one retry)\n%s", n, out)
	}
	if n := starts(es, "H", "validation", "-"); n != 0 {
		t.Errorf("a downstream agent ran %d times after the halt", n)
	}
	s := p.manifest().Slice("H")
	if s.Status != asdd.Blocked || s.FailureMode != asdd.ModeAgentTimeout || s.BlockedAtPhase != asdd.Spec {
		t.Fatalf("slice %s %s at %s\n%s", s.Status, s.FailureMode, s.BlockedAtPhase, out)
	}
	if !strings.Contains(s.BlockReason, "1 retry") {
		t.Errorf("block reason %q", s.BlockReason)
	}
	e := s.OpenEscalation()
	if e == nil {
		t.Fatal("no open escalation")
	}
	if _, err := os.Stat(filepath.Join(p.dir, filepath.FromSlash(e.Path))); err != nil {
		t.Errorf("escalation notice: %v", err)
	}
	flog, err := os.ReadFile(filepath.Join(p.dir, filepath.FromSlash(asdd.FailureLogPath)))
	if err != nil || !bytes.Contains(flog, []byte("spec")) {
		t.Errorf("failure log: %v\n%s", err, flog)
	}
	// The whole process group went: the hung agent's child too.
	pids, err := os.ReadFile(filepath.Join(p.dir, "pids"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(pids)) {
		pid, _ := strconv.Atoi(f)
		if pid > 0 && syscall.Kill(pid, 0) == nil {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !bytes.Contains(b, []byte(") Z ")) {
				t.Errorf("child %d of the hung agent still runs", pid)
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	for _, want := range []string{"timeout", "retry", "escalate", "AGENT_TIMEOUT", "running: H spec"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

// The runner killed with SIGKILL in the middle of a wave, then resumed:
// no committed phase or task runs again, the leftover sub-agents of the
// dead run are killed, the slice reaches DONE.
func TestRunResumeAfterSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	t.Parallel()
	tasks := `[{"id":"Q1","wave":1},{"id":"Q2","wave":1},{"id":"Q3","wave":1},{"id":"L1","wave":1},{"id":"L2","wave":1},{"id":"L3","wave":1},{"id":"Z1","wave":2}]`
	p := newRunProject(t, nil, "TASKS="+tasks, "TASK_SLEEP=0.05", "SLEEP_L1=4", "SLEEP_L2=4", "SLEEP_L3=4")
	p.want(0, "slice", "add", "K")
	cmd, out := p.command("run", "K", "--max-parallel", "3")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the quick tasks are committed and the long ones run.
	deadline := time.Now().Add(30 * time.Second)
	for {
		es := p.entries()
		if starts(es, "K", "implementation", "L1")+starts(es, "K", "implementation", "L2")+starts(es, "K", "implementation", "L3") == 3 &&
			slices.ContainsFunc(p.manifest().Slice("K").Tasks, func(t asdd.Task) bool { return t.Status == asdd.TaskDone }) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the long tasks never started\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	m := p.manifest()
	var committed []string
	for _, tk := range m.Slice("K").Tasks {
		if tk.Status == asdd.TaskDone {
			committed = append(committed, tk.ID)
		}
	}
	if len(committed) == 0 {
		t.Fatal("no task was committed before the kill")
	}
	// Without --resume the runner refuses: the dead run left agents behind.
	refused := p.runner(4, "run", "K")
	if !strings.Contains(refused, "--resume") {
		t.Errorf("refusal: %s", refused)
	}
	resumed := p.runner(0, "run", "--resume", "K")
	if !strings.Contains(resumed, "resume") {
		t.Errorf("the resumed run says nothing of the leftovers:\n%s", resumed)
	}
	es := p.entries()
	if s := p.manifest().Slice("K"); s.Status != asdd.Done {
		t.Fatalf("status %s after resume\n%s", s.Status, resumed)
	}
	for _, a := range []string{"discovery", "spec", "validation", "domain", "design", "task_planning"} {
		if n := starts(es, "K", a, "-"); n != 1 {
			t.Errorf("committed phase agent %s ran %d times", a, n)
		}
	}
	for _, id := range committed {
		if n := starts(es, "K", "implementation", id); n != 1 {
			t.Errorf("committed task %s ran %d times", id, n)
		}
	}
	// The dead run's long sub-agents were killed: each long task ended once
	// (its resumed run), never twice. (They sleep 4 s: the refused run and
	// the resume must start before they would end by themselves, also on a
	// loaded CI machine.)
	for _, id := range []string{"L1", "L2", "L3"} {
		ends := 0
		for _, e := range es {
			if e.what == "end" && e.task == id {
				ends++
			}
		}
		if ends != 1 {
			t.Errorf("task %s ended %d times: the dead run's sub-agent was not killed", id, ends)
		}
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".asdd/runs/runner.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run file left after a clean end: %v", err)
	}
}

// With a daemon serving the project, the runner and its agents go through
// it: every agent gets its socket in CUSTODIAN_SERVER, the agent that
// proposes itself does so through it, and the slice reaches DONE.
func TestRunThroughDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("runs agent processes")
	}
	t.Parallel()
	p := newRunProject(t, nil, "SELF=design")
	servers := filepath.Join(p.dir, "servers")
	p.env = append(p.env, "SERVERS="+servers)
	p.want(0, "slice", "add", "D")
	d := startServe(t, p.dir)
	out := p.runner(0, "run", "D", "--until", "CI_CD")
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.wait(t); code != 0 {
		t.Fatalf("daemon exit %d\n%s", code, d.out.String())
	}
	if s := p.manifest().Slice("D"); s.Status != asdd.CICD {
		t.Fatalf("status %s\n%s", s.Status, out)
	}
	b, err := os.ReadFile(servers)
	if err != nil {
		t.Fatal(err)
	}
	want := "unix://" + filepath.Join(p.dir, cmdutil.DefaultSocket)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasSuffix(line, " "+want) {
			t.Errorf("agent saw %q, want the daemon %s", line, want)
		}
	}
	if !strings.Contains(out, "proposed itself") {
		t.Errorf("the design agent's own proposal went unseen:\n%s", out)
	}
}
