package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// State is the runner's access to the custodian: read the committed
// manifest, commit an operation (the application layer's rules, commit and
// file effects; it hashes the artifacts an operation names and observes the
// slice's files itself). The CLI implements it on the project's
// application layer (app.Service); tests use an in-memory one.
type State interface {
	// Manifest returns the latest committed manifest.
	Manifest(ctx context.Context) (*asdd.Manifest, error)
	// Apply commits op under cfg (nil: the project's configuration). A
	// committed halt comes back as the outcome's Verdict; a rejection as a
	// *reason.Error.
	Apply(ctx context.Context, op asdd.Op, cfg *asdd.Config) (*asdd.Outcome, error)
}

// Options configure a Runner.
type Options struct {
	// Root is the project root: the agents' working directory.
	Root   string
	Config *asdd.Config
	State  State
	// Starter starts agent processes (default ExecStarter).
	Starter Starter
	// Clock is the time source (default the wall clock).
	Clock Clock
	// FS reads project files for the context packets (default os.DirFS(Root)).
	FS fs.FS
	// Env is the agents' base environment (default os.Environ()).
	Env []string
	// Vars are set for every agent: CUSTODIAN_SERVER, CUSTODIAN_BIN…
	Vars map[string]string
	// MaxParallel bounds the agent processes running at once (0: the
	// configuration's pipeline.max_parallel, or the number of CPUs).
	MaxParallel int
	// Until stops each slice when it reaches this phase.
	Until string
	// Resume accepts (and cleans up after) a previous run that died.
	Resume bool
	// Progress receives the run's events (nil: none). It is called from
	// several goroutines, one event at a time.
	Progress func(Event)
	// Poll is how often a running agent's slice is checked for a halt
	// (default 250ms).
	Poll time.Duration
}

// EventKind names a progress event.
type EventKind string

// Progress events.
const (
	EvResume    EventKind = "resume"     // leftover processes of a dead run killed
	EvStart     EventKind = "start"      // an agent process started
	EvEnd       EventKind = "end"        // an agent process ended
	EvTimeout   EventKind = "timeout"    // killed: past its timeout
	EvRetry     EventKind = "retry"      // a failed run is retried
	EvEscalate  EventKind = "escalate"   // a run failed twice: the slice halts (AGENT_TIMEOUT)
	EvProposed  EventKind = "proposed"   // the runner proposed an agent's result
	EvReported  EventKind = "reported"   // the agent proposed (or reported) itself
	EvRejected  EventKind = "rejected"   // the custodian rejected the result
	EvTaskDone  EventKind = "task_done"  // a sub-agent's task was marked done
	EvWave      EventKind = "wave"       // a wave of sub-agents starts
	EvSkip      EventKind = "skip"       // an agent without a command is passed over
	EvSliceEnd  EventKind = "slice_end"  // the runner is done with a slice
	EvQuickFix  EventKind = "quick"      // a QUICK_FIX slice was recorded
	EvStopAgent EventKind = "stop_agent" // an agent was killed because its slice halted
)

// Event is one line of progress.
type Event struct {
	Time    time.Time     `json:"time"`
	Kind    EventKind     `json:"kind"`
	Slice   string        `json:"slice,omitempty"`
	Agent   string        `json:"agent,omitempty"`
	Task    string        `json:"task,omitempty"`
	Attempt int           `json:"attempt,omitempty"`
	Pid     int           `json:"pid,omitempty"`
	Elapsed time.Duration `json:"elapsed,omitempty"`
	Detail  string        `json:"detail,omitempty"`
	Log     string        `json:"log,omitempty"`
}

// Outcomes of a slice in the summary.
const (
	OutcomeDone        = "done"
	OutcomeHalted      = "halted"
	OutcomeStopped     = "stopped"
	OutcomeRejected    = "rejected"
	OutcomeInterrupted = "interrupted"
	OutcomeError       = "error"
)

// SliceSummary is what happened to one slice.
type SliceSummary struct {
	Slice   string        `json:"slice"`
	Status  string        `json:"status"`
	Outcome string        `json:"outcome"`
	Why     string        `json:"why,omitempty"`
	Runs    int           `json:"runs"`
	Elapsed time.Duration `json:"elapsed"`
}

// Summary is the end of a run.
type Summary struct {
	RunID       string         `json:"run_id"`
	Slices      []SliceSummary `json:"slices"`
	Runs        int            `json:"runs"`
	Retries     int            `json:"retries"`
	Timeouts    int            `json:"timeouts"`
	Crashes     int            `json:"crashes"`
	Escalations int            `json:"escalations"`
	Killed      []RunProc      `json:"killed_leftovers,omitempty"`
	Elapsed     time.Duration  `json:"elapsed"`
}

// OK reports whether every slice ended DONE or where it was asked to stop.
func (s *Summary) OK() bool {
	for _, x := range s.Slices {
		if x.Outcome != OutcomeDone && !(x.Outcome == OutcomeStopped && strings.HasSuffix(x.Why, "(--until)")) {
			return false
		}
	}
	return true
}

// Running is an agent process running now.
type Running struct {
	RunProc
	Since time.Time

	halted chan struct{} // closed by the watcher when the slice halts
}

// Runner drives agents through the pipeline.
type Runner struct {
	o     Options
	cfg   *asdd.Config
	sem   chan struct{}
	runID string
	rl    *runLock

	mu      sync.Mutex
	seq     int
	active  map[string]int // agent -> runs in progress (IDLE beat at 0)
	running map[int]Running
	sum     Summary
	progMu  sync.Mutex
}

// New checks the options and returns a runner.
func New(o Options) (*Runner, error) {
	if o.Root == "" || o.State == nil || o.Config == nil {
		return nil, errors.New("runner: Root, State and Config are required")
	}
	if o.Until != "" && !asdd.IsPhase(o.Until) {
		return nil, reason.New(reason.InvalidInput, "--until %q is not a lifecycle phase (%s)", o.Until, strings.Join(asdd.Lifecycle, ", "))
	}
	if o.Starter == nil {
		o.Starter = ExecStarter{}
	}
	if o.Clock == nil {
		o.Clock = RealClock
	}
	if o.FS == nil {
		o.FS = os.DirFS(o.Root)
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	n := o.MaxParallel
	if n <= 0 {
		n = o.Config.Pipeline.MaxParallel
	}
	if n <= 0 {
		n = runtime.NumCPU()
	}
	now := o.Clock.Now().UTC()
	return &Runner{o: o, cfg: o.Config, sem: make(chan struct{}, n),
		runID:  now.Format("20060102T150405Z") + "-" + strconv.Itoa(os.Getpid()),
		active: map[string]int{}, running: map[int]Running{}}, nil
}

// MaxParallel is the bound on agent processes running at once.
func (r *Runner) MaxParallel() int { return cap(r.sem) }

// Running lists the agent processes running now, oldest first.
func (r *Runner) Running() []Running {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Collect(maps.Values(r.running))
	slices.SortFunc(out, func(a, b Running) int { return a.Since.Compare(b.Since) })
	return out
}

func (r *Runner) emit(e Event) {
	if r.o.Progress == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = r.o.Clock.Now()
	}
	r.progMu.Lock()
	defer r.progMu.Unlock()
	r.o.Progress(e)
}

func (r *Runner) count(f func(s *Summary)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.sum)
}

// Quick records a QUICK_FIX slice for a one-line description (seed 004's
// /asdd:quick) and runs it: the implementation agent makes the fix, the QA
// agent verifies it; the slice stays logged as QUICK_FIX.
func (r *Runner) Quick(ctx context.Context, description string) (*Summary, error) {
	return r.run(ctx, nil, description)
}

// Run drives the given slices (when none are given: every slice not DONE,
// but QUICK_FIX ones) until each is DONE, halted, or stopped, and returns
// the summary.
func (r *Runner) Run(ctx context.Context, ids []string) (*Summary, error) {
	return r.run(ctx, ids, "")
}

func (r *Runner) run(ctx context.Context, ids []string, quick string) (*Summary, error) {
	start := r.o.Clock.Now()
	rl, _, killed, err := acquireRun(r.o.Root, r.runID, start, r.o.Resume)
	if err != nil {
		return nil, err
	}
	r.rl = rl
	defer rl.release()
	r.sum = Summary{RunID: r.runID, Slices: []SliceSummary{}, Killed: killed}
	for _, p := range killed {
		r.emit(Event{Kind: EvResume, Slice: p.Slice, Agent: p.Agent, Task: p.Task, Pid: p.PGID, Detail: "killed the process group left by the previous run"})
	}
	if len(killed) > 0 {
		r.idleLeftovers(ctx, killed)
	}
	m, err := r.o.State.Manifest(ctx)
	if err != nil {
		return nil, err
	}
	if quick != "" {
		out, err := r.o.State.Apply(ctx, asdd.Quick{Description: quick}, nil)
		if err != nil {
			return nil, err
		}
		for _, e := range out.Events {
			if e.Type == "quick_fix" {
				ids = []string{e.Slice}
			}
		}
		r.emit(Event{Kind: EvQuickFix, Slice: ids[0], Detail: quick})
	} else if len(ids) == 0 {
		// QUICK_FIX slices are logged fixes, not pipeline work: they run
		// only when named (or from --quick).
		for _, s := range m.Slices {
			if s.Status != asdd.QuickFix && Next(s, r.cfg, r.o.Until).Kind != StepDone {
				ids = append(ids, s.SliceID)
			}
		}
	} else {
		ids = slices.Clone(ids)
		seen := map[string]bool{}
		ids = slices.DeleteFunc(ids, func(id string) bool { // one driver per slice
			dup := seen[id]
			seen[id] = true
			return dup
		})
		for _, id := range ids {
			if _, err := m.Find(id); err != nil {
				return nil, err
			}
		}
	}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		r.watchHalts(wctx)
	}()
	defer func() {
		stopWatch()
		<-watched
	}()
	res := make([]SliceSummary, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() { res[i] = r.driveSlice(ctx, id) })
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sum.Slices = res
	r.sum.Elapsed = r.o.Clock.Now().Sub(start)
	out := r.sum
	return &out, nil
}

// watchHalts reads the manifest every Poll while agents run and tells the
// running agents of a slice that halted (another agent's proposal, a
// human, the heartbeat monitor) to stop: one read for all of them.
func (r *Runner) watchHalts(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.o.Clock.After(r.o.Poll):
		}
		r.mu.Lock()
		n := len(r.running)
		r.mu.Unlock()
		if n == 0 {
			continue
		}
		m, err := r.o.State.Manifest(ctx)
		if err != nil {
			continue
		}
		r.mu.Lock()
		for pid, x := range r.running {
			if s := m.Slice(x.Slice); s != nil && s.Status == asdd.Blocked && x.halted != nil {
				close(x.halted)
				x.halted = nil
				r.running[pid] = x
			}
		}
		r.mu.Unlock()
	}
}

// idleLeftovers sets to IDLE the heartbeats a dead run left ACTIVE for the
// agents whose processes were just killed.
func (r *Runner) idleLeftovers(ctx context.Context, killed []RunProc) {
	m, err := r.o.State.Manifest(ctx)
	if err != nil {
		return
	}
	done := map[string]bool{}
	for _, p := range killed {
		key := asdd.HeartbeatKey(p.Agent)
		if h := m.AgentHeartbeats[key]; h != nil && h.Status == asdd.HeartbeatActive && !done[key] {
			done[key] = true
			_, _ = r.o.State.Apply(ctx, asdd.Beat{Agent: p.Agent, Status: asdd.HeartbeatIdle}, nil)
		}
	}
}

// driveSlice runs a slice's agents, one step at a time, each decided from
// the committed manifest.
func (r *Runner) driveSlice(ctx context.Context, id string) SliceSummary {
	start := r.o.Clock.Now()
	sum := SliceSummary{Slice: id}
	skipped := map[string]bool{}
	finish := func(outcome, why string) SliceSummary {
		sum.Outcome, sum.Why = outcome, why
		sum.Elapsed = r.o.Clock.Now().Sub(start)
		if m, err := r.o.State.Manifest(context.WithoutCancel(ctx)); err == nil {
			if s := m.Slice(id); s != nil {
				sum.Status = s.Status
			}
		}
		r.emit(Event{Kind: EvSliceEnd, Slice: id, Elapsed: sum.Elapsed, Detail: outcome + ": " + why})
		return sum
	}
	for {
		if ctx.Err() != nil {
			return finish(OutcomeInterrupted, "the run was interrupted")
		}
		m, err := r.o.State.Manifest(ctx)
		if err != nil {
			return finish(OutcomeError, err.Error())
		}
		s, err := m.Find(id)
		if err != nil {
			return finish(OutcomeError, err.Error())
		}
		st := Next(s, r.cfg, r.o.Until)
		for _, a := range st.Skipped {
			if !skipped[st.Phase+a] {
				skipped[st.Phase+a] = true
				r.emit(Event{Kind: EvSkip, Slice: id, Agent: a, Detail: "no command configured: skipped in " + st.Phase})
			}
		}
		var o stepOutcome
		switch st.Kind {
		case StepDone:
			return finish(OutcomeDone, st.Why)
		case StepHalted:
			return finish(OutcomeHalted, st.Why)
		case StepStop:
			return finish(OutcomeStopped, st.Why)
		case StepAgent:
			ag, _ := r.cfg.Agent(st.Agent)
			o = r.runAgent(ctx, id, ag, nil, &sum)
		case StepTasks:
			ag, _ := r.cfg.Agent(st.Agent)
			o = r.runWaves(ctx, id, ag, &sum)
		}
		if o.outcome != "" {
			return finish(o.outcome, o.why)
		}
	}
}

// stepOutcome ends a slice's drive when outcome is set; empty means go on.
type stepOutcome struct{ outcome, why string }

// runWaves runs a slice's open tasks as context-fresh sub-agents of ag:
// the tasks asdd.Ready allows (wave N only once wave N-1 is done, their
// dependencies done), in parallel up to the runner's bound; each done task
// is committed before the next look at what is ready.
func (r *Runner) runWaves(ctx context.Context, id string, ag *asdd.Agent, sum *SliceSummary) stepOutcome {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type done struct {
		task string
		o    stepOutcome
	}
	results := make(chan done)
	running := map[string]bool{}
	lastWave := -1
	var stop stepOutcome
	r.agentBegin(ag.Name)
	defer r.agentEnd(ctx, ag.Name)
	var sumMu sync.Mutex
	for {
		m, err := r.o.State.Manifest(ctx)
		if err != nil {
			stop = stepOutcome{OutcomeError, err.Error()}
			break
		}
		s, err := m.Find(id)
		if err != nil {
			stop = stepOutcome{OutcomeError, err.Error()}
			break
		}
		if s.Status != asdd.Implementation {
			break // halted, or moved on by someone: the drive loop decides
		}
		wave, completed, remaining := progress(s)
		if wave != lastWave && remaining > 0 {
			lastWave = wave
			r.beat(ctx, ag.Name, id, &wave, &completed, &remaining)
			r.emit(Event{Kind: EvWave, Slice: id, Agent: ag.Name, Detail: fmt.Sprintf("wave %d: %d tasks done, %d to go", wave, completed, remaining)})
		}
		for _, t := range asdd.Ready(s) {
			if running[t.ID] {
				continue
			}
			running[t.ID] = true
			go func() {
				var local SliceSummary
				o := r.runAgent(wctx, id, ag, &t, &local)
				sumMu.Lock()
				sum.Runs += local.Runs
				sumMu.Unlock()
				results <- done{t.ID, o}
			}()
		}
		if len(running) == 0 {
			if remaining > 0 {
				stop = stepOutcome{OutcomeStopped, fmt.Sprintf("%d tasks can never start (dependencies on tasks that are not in the plan or in a later wave)", remaining)}
			}
			break
		}
		d := <-results
		delete(running, d.task)
		if d.o.outcome != "" {
			stop = d.o
			break
		}
		if m, err := r.o.State.Manifest(ctx); err == nil {
			if s := m.Slice(id); s != nil {
				_, c, rem := progress(s)
				if rem > 0 {
					r.beat(ctx, ag.Name, id, &wave, &c, &rem)
				}
			}
		}
	}
	cancel()
	for range running {
		<-results
	}
	return stop
}

// progress is the current wave (the lowest with open tasks) and the
// tasks done and remaining.
func progress(s *asdd.Slice) (wave, completed, remaining int) {
	wave = -1
	for _, t := range s.Tasks {
		if t.Status == asdd.TaskDone {
			completed++
			continue
		}
		remaining++
		if wave < 0 || t.Wave < wave {
			wave = t.Wave
		}
	}
	return wave, completed, remaining
}

func (r *Runner) agentBegin(agent string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active[agent]++
}

// agentEnd records that one run of agent ended; the last one sets its
// heartbeat IDLE.
func (r *Runner) agentEnd(ctx context.Context, agent string) {
	r.mu.Lock()
	r.active[agent]--
	last := r.active[agent] == 0
	r.mu.Unlock()
	if last {
		_, _ = r.o.State.Apply(context.WithoutCancel(ctx), asdd.Beat{Agent: agent, Status: asdd.HeartbeatIdle}, nil)
	}
}

// beat records an ACTIVE heartbeat for the agent working on the slice.
func (r *Runner) beat(ctx context.Context, agent, slice string, wave, completed, remaining *int) {
	_, _ = r.o.State.Apply(ctx, asdd.Beat{Agent: agent, Status: asdd.HeartbeatActive, Slice: slice, Wave: wave, Completed: completed, Remaining: remaining}, nil)
}

// failure is why a run produced no result.
type failure struct {
	timeout bool
	why     string
}

// runAgent runs ag for the slice (task nil: the phase agent; otherwise a
// sub-agent for the task): start it with its context packet, wait, take
// its result; a timeout or a crash is retried heartbeat.retries times (seed
// 004: once) and then escalated.
func (r *Runner) runAgent(ctx context.Context, id string, ag *asdd.Agent, task *asdd.Task, sum *SliceSummary) stepOutcome {
	if task == nil {
		r.agentBegin(ag.Name)
		defer r.agentEnd(ctx, ag.Name)
	}
	timeout := r.cfg.RunTimeout(ag)
	retries := r.cfg.Heartbeat.Retries
	for attempt := 1; ; attempt++ {
		m, err := r.o.State.Manifest(ctx)
		if err != nil {
			return stepOutcome{OutcomeError, err.Error()}
		}
		s, err := m.Find(id)
		if err != nil {
			return stepOutcome{OutcomeError, err.Error()}
		}
		if s.Status == asdd.Blocked {
			return stepOutcome{}
		}
		if task != nil {
			if t := findTask(s, task.ID); t == nil || t.Status == asdd.TaskDone {
				return stepOutcome{}
			}
		} else if attempt == 1 {
			r.beat(ctx, ag.Name, id, nil, nil, nil)
		}
		sum.Runs++
		r.count(func(x *Summary) { x.Runs++ })
		x := r.exec(ctx, s, m.Revision, ag, task, attempt, timeout)
		if x.err != nil {
			return stepOutcome{OutcomeError, x.err.Error()}
		}
		if ctx.Err() != nil {
			return stepOutcome{OutcomeInterrupted, "the run was interrupted"}
		}
		if x.haltedBy {
			return stepOutcome{} // the drive loop reads the halt
		}
		if x.startErr != nil {
			// The command cannot run at all (not found, not executable): a
			// configuration error for a human, not an agent failure to
			// retry and escalate.
			return stepOutcome{OutcomeError, fmt.Sprintf("the %s agent's command %q could not start: %v (check %s)", ag.Name, ag.Command[0], x.startErr, asdd.ConfigPath)}
		}
		o, fail := r.collect(ctx, id, ag, task, m.Revision, x)
		if fail == nil {
			return o
		}
		if fail.timeout {
			r.count(func(x *Summary) { x.Timeouts++ })
		} else {
			r.count(func(x *Summary) { x.Crashes++ })
		}
		if attempt <= retries {
			r.count(func(x *Summary) { x.Retries++ })
			r.emit(Event{Kind: EvRetry, Slice: id, Agent: ag.Name, Task: taskID(task), Attempt: attempt + 1, Detail: fail.why + ": retrying once"})
			r.markRetry(ctx, ag, id, timeout)
			continue
		}
		r.count(func(x *Summary) { x.Escalations++ })
		why := fmt.Sprintf("%s after %d attempts", fail.why, attempt)
		if err := r.escalate(ctx, ag, id, timeout, why); err != nil {
			return stepOutcome{OutcomeError, fmt.Sprintf("%s; escalation failed: %v", why, err)}
		}
		r.emit(Event{Kind: EvEscalate, Slice: id, Agent: ag.Name, Task: taskID(task), Detail: why + ": escalated, slice halted (AGENT_TIMEOUT)"})
		return stepOutcome{}
	}
}

func taskID(t *asdd.Task) string {
	if t == nil {
		return ""
	}
	return t.ID
}

func findTask(s *asdd.Slice, id string) *asdd.Task {
	for i := range s.Tasks {
		if s.Tasks[i].ID == id {
			return &s.Tasks[i]
		}
	}
	return nil
}

// execResult is how one process run ended.
type execResult struct {
	exit     int
	timedOut bool
	haltedBy bool // killed because its slice halted
	stdout   []byte
	startErr error
	err      error // the runner could not run it at all (files)
	elapsed  time.Duration
}

// exec runs one agent process with its context packet and waits for it,
// killing its process group on timeout, on a halt of its slice, or when
// ctx ends.
func (r *Runner) exec(ctx context.Context, s *asdd.Slice, base uint64, ag *asdd.Agent, task *asdd.Task, attempt int, timeout time.Duration) execResult {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return execResult{}
	}
	defer func() { <-r.sem }()

	r.mu.Lock()
	r.seq++
	seq := r.seq
	r.mu.Unlock()
	name := fmt.Sprintf("%03d-%s-%s", seq, s.SliceID, ag.Name)
	if task != nil {
		name += "-" + task.ID
	}
	name += fmt.Sprintf("-%d", attempt)
	relDir := RunDir + "/" + r.runID
	dir := filepath.Join(r.o.Root, filepath.FromSlash(relDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return execResult{err: fmt.Errorf("runner: %w", err)}
	}
	packet := BuildPacket(r.o.FS, s, r.cfg, ag, task, base, attempt)
	pb, err := encodePacket(packet)
	if err != nil {
		return execResult{err: err}
	}
	ctxPath := filepath.Join(dir, name+".json")
	if err := os.WriteFile(ctxPath, append(pb, '\n'), 0o644); err != nil {
		return execResult{err: fmt.Errorf("runner: %w", err)}
	}
	logRel := relDir + "/" + name + ".log"
	logf, err := os.Create(filepath.Join(r.o.Root, filepath.FromSlash(logRel)))
	if err != nil {
		return execResult{err: fmt.Errorf("runner: %w", err)}
	}
	defer logf.Close()
	out := &capped{max: maxResult}
	spec := ProcSpec{Argv: ag.Command, Dir: r.o.Root, Env: r.env(ag, s.SliceID, task, ctxPath, base, attempt),
		Stdout: io.MultiWriter(logf, out), Stderr: logf}
	start := r.o.Clock.Now()
	p, err := r.o.Starter.Start(spec)
	if err != nil {
		fmt.Fprintf(logf, "custodian run: could not start %q: %v\n", ag.Command[0], err)
		r.emit(Event{Kind: EvEnd, Slice: s.SliceID, Agent: ag.Name, Task: taskID(task), Attempt: attempt, Detail: "could not start: " + err.Error(), Log: logRel})
		return execResult{exit: -1, startErr: err}
	}
	rp := RunProc{Slice: s.SliceID, Agent: ag.Name, Task: taskID(task), Attempt: attempt, PGID: p.Pid(), Started: start.UTC().Format(time.RFC3339), Log: logRel}
	halted := make(chan struct{})
	r.mu.Lock()
	r.running[p.Pid()] = Running{RunProc: rp, Since: start, halted: halted}
	r.mu.Unlock()
	regErr := r.rl.add(rp)
	if g, ok := p.(Releaser); ok && regErr == nil {
		// Recorded: the agent may run now.
		regErr = g.Release()
	}
	r.emit(Event{Kind: EvStart, Slice: s.SliceID, Agent: ag.Name, Task: taskID(task), Attempt: attempt, Pid: p.Pid(), Log: logRel})

	type waited struct {
		code int
		err  error
	}
	wc := make(chan waited, 1)
	go func() {
		c, err := p.Wait()
		wc <- waited{c, err}
	}()
	res := execResult{}
	if regErr != nil {
		// Without its entry in the run file a crash of the runner could leave
		// the process behind unnoticed: do not let it run.
		_ = p.Kill()
		fmt.Fprintf(logf, "custodian run: %v\n", regErr)
		res.err = regErr
	}
	deadline := r.o.Clock.After(timeout)
	var w waited
	select {
	case w = <-wc:
	case <-deadline:
		res.timedOut = true
		_ = p.Kill()
		w = <-wc
	case <-ctx.Done():
		_ = p.Kill()
		w = <-wc
	case <-halted:
		res.haltedBy = true
		_ = p.Kill()
		w = <-wc
	}
	// Whatever the agent left running in its group goes with it.
	_ = p.Kill()
	res.elapsed = r.o.Clock.Now().Sub(start)
	res.exit, res.stdout = w.code, out.Bytes()
	if w.err != nil && res.err == nil {
		res.err = fmt.Errorf("runner: wait for %s: %w", ag.Name, w.err)
	}
	r.mu.Lock()
	delete(r.running, p.Pid())
	r.mu.Unlock()
	_ = r.rl.remove(p.Pid())
	detail := fmt.Sprintf("exit %d", res.exit)
	switch {
	case res.timedOut:
		detail = fmt.Sprintf("timed out after %s: process group killed", timeout)
		r.emit(Event{Kind: EvTimeout, Slice: s.SliceID, Agent: ag.Name, Task: taskID(task), Attempt: attempt, Pid: p.Pid(), Elapsed: res.elapsed, Detail: detail, Log: logRel})
	case res.haltedBy:
		detail = "its slice halted: process group killed"
		r.emit(Event{Kind: EvStopAgent, Slice: s.SliceID, Agent: ag.Name, Task: taskID(task), Attempt: attempt, Pid: p.Pid(), Elapsed: res.elapsed, Detail: detail, Log: logRel})
	}
	r.emit(Event{Kind: EvEnd, Slice: s.SliceID, Agent: ag.Name, Task: taskID(task), Attempt: attempt, Pid: p.Pid(), Elapsed: res.elapsed, Detail: detail, Log: logRel})
	return res
}

// env is the agent process's environment: the base, the runner's
// variables, the agent's own env, then the run's CUSTODIAN_* variables.
func (r *Runner) env(ag *asdd.Agent, slice string, task *asdd.Task, ctxPath string, base uint64, attempt int) []string {
	set := map[string]string{}
	var order []string
	put := func(k, v string) {
		if _, ok := set[k]; !ok {
			order = append(order, k)
		}
		set[k] = v
	}
	for _, kv := range r.o.Env {
		k, v, ok := strings.Cut(kv, "=")
		// The admin token is the person's who started the run, not the
		// agents': they get it only from their own configured env.
		if ok && !slices.Contains(asdd.RunnerEnv, k) && k != "CUSTODIAN_ADMIN_TOKEN" {
			put(k, v)
		}
	}
	put("CUSTODIAN_ACTOR", "agent:"+ag.Name)
	for _, k := range slices.Sorted(maps.Keys(r.o.Vars)) {
		put(k, r.o.Vars[k])
	}
	for _, k := range slices.Sorted(maps.Keys(ag.Env)) {
		put(k, ag.Env[k])
	}
	put("CUSTODIAN_ROOT", r.o.Root)
	put("CUSTODIAN_CONTEXT", ctxPath)
	put("CUSTODIAN_SLICE", slice)
	put("CUSTODIAN_AGENT", ag.Name)
	put("CUSTODIAN_TASK", taskID(task))
	put("CUSTODIAN_BASE_REVISION", strconv.FormatUint(base, 10))
	put("CUSTODIAN_ATTEMPT", strconv.Itoa(attempt))
	if _, ok := set["CUSTODIAN_SERVER"]; !ok {
		put("CUSTODIAN_SERVER", "")
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+set[k])
	}
	return out
}

// collect turns a finished run into the slice's next state: the agent's
// own report, or its printed result proposed on its behalf; fail is set
// when the run produced neither (crash, timeout, no result).
func (r *Runner) collect(ctx context.Context, id string, ag *asdd.Agent, task *asdd.Task, base uint64, x execResult) (stepOutcome, *failure) {
	m, err := r.o.State.Manifest(ctx)
	if err != nil {
		return stepOutcome{OutcomeError, err.Error()}, nil
	}
	s, err := m.Find(id)
	if err != nil {
		return stepOutcome{OutcomeError, err.Error()}, nil
	}
	if s.Status == asdd.Blocked {
		return stepOutcome{}, nil
	}
	if task != nil {
		if t := findTask(s, task.ID); t != nil && t.Status == asdd.TaskDone {
			r.emit(Event{Kind: EvReported, Slice: id, Agent: ag.Name, Task: task.ID, Detail: "task marked done by the sub-agent"})
			return stepOutcome{}, nil
		}
		if f := runFailure(x, ag, r.cfg); f != nil {
			return stepOutcome{}, f
		}
		_, err := r.o.State.Apply(ctx, asdd.CompleteTask{Slice: id, ID: task.ID, Agent: ag.Name}, nil)
		if err != nil {
			if reason.CodeOf(err) == reason.Halted {
				return stepOutcome{}, nil
			}
			r.emit(Event{Kind: EvRejected, Slice: id, Agent: ag.Name, Task: task.ID, Detail: err.Error()})
			return stepOutcome{OutcomeRejected, err.Error()}, nil
		}
		r.emit(Event{Kind: EvTaskDone, Slice: id, Agent: ag.Name, Task: task.ID, Elapsed: x.elapsed})
		return stepOutcome{}, nil
	}
	for _, e := range s.ConfidenceChain {
		if e.Agent == ag.Name && e.Revision > base {
			r.emit(Event{Kind: EvReported, Slice: id, Agent: ag.Name, Detail: fmt.Sprintf("proposed itself: score %s, %s", asdd.FormatScore(e.Score), e.Outcome)})
			return stepOutcome{}, nil
		}
	}
	if f := runFailure(x, ag, r.cfg); f != nil {
		return stepOutcome{}, f
	}
	res, ok, err := ParseResult(x.stdout)
	if err != nil {
		r.emit(Event{Kind: EvRejected, Slice: id, Agent: ag.Name, Detail: err.Error()})
		return stepOutcome{OutcomeRejected, err.Error()}, nil
	}
	if !ok {
		return stepOutcome{}, &failure{why: "exited 0 without proposing or printing a result"}
	}
	return r.propose(ctx, s, ag, res, base), nil
}

// runFailure says why a process run failed, or nil if it exited 0.
func runFailure(x execResult, ag *asdd.Agent, cfg *asdd.Config) *failure {
	switch {
	case x.timedOut:
		return &failure{timeout: true, why: fmt.Sprintf("no result within %s", cfg.RunTimeout(ag))}
	case x.exit != 0:
		return &failure{why: fmt.Sprintf("crashed (exit %d) without a result", x.exit)}
	}
	return nil
}

// propose commits an agent's printed result on its behalf.
func (r *Runner) propose(ctx context.Context, s *asdd.Slice, ag *asdd.Agent, res *Result, base uint64) stepOutcome {
	reject := func(err error) stepOutcome {
		r.emit(Event{Kind: EvRejected, Slice: s.SliceID, Agent: ag.Name, Detail: err.Error()})
		return stepOutcome{OutcomeRejected, fmt.Sprintf("the %s agent's result: %v", ag.Name, err)}
	}
	if res.Halt != nil {
		// The application layer marks the phase's artifact DRAFT — AGENT
		// HALTED and records the hashes it sees.
		_, err := r.o.State.Apply(ctx, asdd.ReportFailure{Agent: ag.Name, Slice: s.SliceID, Mode: res.Halt.Mode, Reason: res.Halt.Reason, Flagged: res.Halt.Flag}, nil)
		if err != nil {
			return reject(err)
		}
		r.emit(Event{Kind: EvReported, Slice: s.SliceID, Agent: ag.Name, Detail: "reported " + res.Halt.Mode})
		return stepOutcome{}
	}
	for _, t := range res.Tasks {
		if findTask(s, t.ID) != nil {
			continue // added by an earlier run of this agent
		}
		_, err := r.o.State.Apply(ctx, asdd.AddTask{Slice: s.SliceID, ID: t.ID, Title: t.Title, Wave: t.Wave, DependsOn: t.DependsOn, Requirement: t.Requirement, By: ag.Name}, nil)
		if err != nil {
			return reject(err)
		}
	}
	// The artifacts and the trace are named; the application layer hashes
	// them (marked as the agent's config says) and observes the slice's
	// files itself.
	p := asdd.Proposal{Agent: ag.Name, Slice: s.SliceID, Score: *res.Score, Artifacts: asdd.NamedArtifacts(res.Artifacts), Trace: asdd.TraceFile(res.Trace),
		Uncertainty: res.Uncertainty, To: res.To, BaseRevision: base, Assumptions: res.Assumptions}
	out, err := r.o.State.Apply(ctx, p, nil)
	if err != nil {
		return reject(err)
	}
	detail := fmt.Sprintf("%s: %s", res, out.Summary)
	if out.Verdict != nil {
		detail = fmt.Sprintf("%s: HALTED %s: %s", res, out.Verdict.Code, out.Verdict.Message)
	}
	r.emit(Event{Kind: EvProposed, Slice: s.SliceID, Agent: ag.Name, Detail: detail})
	r.featureBranch(ctx, s.SliceID, ag, out)
	return stepOutcome{}
}

// markRetry records the retry request of seed 004's "retry once" on the
// agent's heartbeat (asdd.AgentTimeout, with the agent's own timeout).
func (r *Runner) markRetry(ctx context.Context, ag *asdd.Agent, id string, timeout time.Duration) {
	m, err := r.o.State.Manifest(ctx)
	if err != nil {
		return
	}
	h := m.AgentHeartbeats[asdd.HeartbeatKey(ag.Name)]
	if h == nil || h.Status != asdd.HeartbeatActive || h.CurrentSlice != id || h.RetryRequestedAt != "" || h.EscalatedAt != "" {
		return
	}
	cfg := r.timeoutConfig(h.LastExecution, timeout, 1)
	_, _ = r.o.State.Apply(ctx, asdd.AgentTimeout{Agent: ag.Name}, cfg)
}

// escalate halts the slice with failure mode AGENT_TIMEOUT (seed 004:
// "Retry once; then escalate to TL"), through asdd.AgentTimeout: the
// escalation notice, the failure-log row and the paused downstream agents
// are the custodian's, as for the heartbeat monitor's escalations.
func (r *Runner) escalate(ctx context.Context, ag *asdd.Agent, id string, timeout time.Duration, why string) error {
	ctx = context.WithoutCancel(ctx)
	var last error
	for range 5 {
		m, err := r.o.State.Manifest(ctx)
		if err != nil {
			return err
		}
		s, err := m.Find(id)
		if err != nil {
			return err
		}
		if s.Status == asdd.Blocked || !asdd.Active(s.Status) {
			return nil
		}
		h := m.AgentHeartbeats[asdd.HeartbeatKey(ag.Name)]
		if h == nil || h.Status != asdd.HeartbeatActive || h.CurrentSlice != id || h.EscalatedAt != "" {
			// Another run of the agent (another slice) moved its heartbeat.
			r.beat(ctx, ag.Name, id, nil, nil, nil)
			continue
		}
		since, retries := h.LastExecution, 0
		if h.RetryRequestedAt != "" {
			since, retries = h.RetryRequestedAt, r.cfg.Heartbeat.Retries
		}
		out, err := r.o.State.Apply(ctx, asdd.AgentTimeout{Agent: ag.Name, Cause: why}, r.timeoutConfig(since, timeout, retries))
		if err != nil {
			last = err
			if reason.CodeOf(err) == reason.InvalidTransition {
				time.Sleep(5 * time.Millisecond) // the heartbeat is younger than a millisecond
				continue
			}
			return err
		}
		if out.Verdict != nil {
			return nil
		}
	}
	if last == nil {
		last = errors.New("the heartbeat kept moving")
	}
	return last
}

// timeoutConfig is the configuration under which asdd.AgentTimeout judges
// the agent's run: its own timeout, or — when the heartbeat moved since the
// run started (a crash ends a run early; parallel sub-agents share one
// heartbeat) — the silence the heartbeat shows.
func (r *Runner) timeoutConfig(since string, timeout time.Duration, retries int) *asdd.Config {
	cfg := *r.cfg
	t, ok := asdd.ParseTimestamp(since)
	d := timeout
	if ok {
		if silent := r.o.Clock.Now().Sub(t) - time.Millisecond; silent < d {
			d = max(silent.Truncate(time.Millisecond), 0)
		}
	}
	cfg.Heartbeat.Timeout = asdd.Duration(d)
	cfg.Heartbeat.Retries = retries
	return &cfg
}

// capped keeps the last max bytes written to it.
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if over := c.buf.Len() - c.max; over > 0 {
		c.buf.Next(over)
	}
	return len(p), nil
}

func (c *capped) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// encodePacket writes a context packet as indented JSON, with <, > and &
// as they are (an agent reads requirement text, not HTML).
func encodePacket(p any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
