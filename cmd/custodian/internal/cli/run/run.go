package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/runner"
)

// Options is what `custodian run` was asked to do.
type Options struct {
	App         *cmdutil.App
	Slices      []string      // the slices to run (none: every slice with work left)
	Until       string        // stop each slice when it reaches this phase
	DryRun      bool          // print what would run, start nothing
	Resume      bool          // continue after a runner that died
	Quick       string        // quick mode's one-line description
	MaxParallel int           // agent processes at once (0: pipeline.max_parallel)
	StatusEvery time.Duration // print the running agents this often (0: never)
}

// NewCmd returns `custodian run`; it parses the command line into Options
// and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	o := &Options{App: app}
	cmd := &cobra.Command{
		Use:   `run [SLICE…] [--until PHASE] [--dry-run] [--resume] [--quick "…"]`,
		Short: "Drive agents through the pipeline: each slice's next agent, gated by confidence, tasks in waves",
		Long: `Run the pipeline's agents (the command of each agent in .asdd/config.yaml) for
the given slices, or for every slice with work left. For each slice the next
agent of its phase starts with a minimal context packet (a JSON file named by
$CUSTODIAN_CONTEXT: the task, the requirement it serves, the relevant files,
the domain terms, the steering rules) and $CUSTODIAN_SLICE, $CUSTODIAN_AGENT,
$CUSTODIAN_SERVER, $CUSTODIAN_BASE_REVISION. The agent reports with
"custodian propose", or prints a result object as its last line of output and
the runner proposes it; the custodian's gates decide what runs next.

Implementation tasks run as context-fresh sub-agents ($CUSTODIAN_TASK set),
wave by wave: parallel within a wave, the next wave only when the last is done,
at most pipeline.max_parallel processes at once. A run past its agent's timeout
has its process group killed; a timed-out or crashed run is retried once, then
escalated (the slice halts, AGENT_TIMEOUT). A halt stops that slice's agents
only.

The next step is always decided from the manifest, so a run that was killed
resumes where the committed state says: --resume kills what the dead run left
running and goes on, without repeating committed phases or tasks.
--quick "one line" records a QUICK_FIX slice and runs implementation, then QA.
See docs/runner.md.`,
		Example: `  custodian run                      # every slice with work left
  custodian run SLICE-001 --until IMPLEMENTATION
  custodian run --dry-run
  custodian run --resume             # after the runner was killed
  custodian run --quick "Fix typo in login header"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Quick != "" && len(args) > 0 {
				return reason.Usage("--quick records its own slice: give no slice ids with it")
			}
			if o.Quick != "" && o.DryRun {
				return reason.Usage("--quick and --dry-run do not go together")
			}
			o.Slices, o.Until = args, strings.ToUpper(o.Until)
			return cmdutil.Run(app, cmd, o, runF, run)
		},
	}
	f := cmd.Flags()
	cmdutil.EnumFlag(cmd, f, &o.Until, "until", "", asdd.Lifecycle, "stop each slice when it reaches this phase (its agents do not run)")
	f.BoolVar(&o.DryRun, "dry-run", false, "print what would run, start nothing, commit nothing")
	f.BoolVar(&o.Resume, "resume", false, "continue after a runner that died: kill its leftover agents first")
	f.StringVar(&o.Quick, "quick", "", "quick mode: record a QUICK_FIX slice for this one-line `DESCRIPTION` and run implementation and QA")
	f.IntVar(&o.MaxParallel, "max-parallel", 0, "agent processes at once (default: pipeline.max_parallel)")
	f.DurationVar(&o.StatusEvery, "status-every", 10*time.Second, "print the running agents this often (0: never)")
	return cmd
}

// run drives the agents (or, with DryRun, prints what would run).
func run(ctx context.Context, o *Options) error {
	app, args := o.App, o.Slices
	cfg, err := cmdutil.ASDDConfig(app)
	if err != nil {
		return err
	}
	root, err := app.Root()
	if err != nil {
		return err
	}
	// No project: say so before the runner takes its lock under .asdd/runs.
	if _, err := cmdutil.LoadManifest(ctx, app); err != nil {
		return err
	}
	state, err := newRunState(app, cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.DryRun {
		return runDry(app, ctx, state, cfg, args, o.Until)
	}
	progress := app.Out
	if app.JSON {
		progress = app.Err
	}
	pw := &progressWriter{w: progress}
	r, err := runner.New(runner.Options{
		Root: root, Config: cfg, State: state, MaxParallel: o.MaxParallel, Until: o.Until, Resume: o.Resume,
		Vars: runVars(app, state.svc, root), Progress: pw.event,
	})
	if err != nil {
		return err
	}
	pw.start = time.Now()
	fmt.Fprintf(progress, "custodian run: at most %d agents at once; logs and context packets under %s/\n", r.MaxParallel(), runner.RunDir)
	done := make(chan struct{})
	var wg sync.WaitGroup
	if o.StatusEvery > 0 {
		wg.Go(func() { pw.ticker(r, o.StatusEvery, done) })
	}
	var sum *runner.Summary
	if o.Quick != "" {
		sum, err = r.Quick(ctx, o.Quick)
	} else {
		sum, err = r.Run(ctx, args)
	}
	close(done)
	wg.Wait()
	if err != nil {
		return err
	}
	if err := app.Render(sum, func(w io.Writer) error { return writeRunSummary(w, sum) }); err != nil {
		return err
	}
	for _, s := range sum.Slices {
		if s.Outcome == runner.OutcomeError {
			return &cmdutil.ExitError{Code: reason.ExitInternal}
		}
	}
	if !sum.OK() {
		return &cmdutil.ExitError{Code: reason.Halted.ExitCode()}
	}
	return nil
}

// runVars are the variables every agent gets to reach the custodian the
// runner uses: the daemon's URL when one serves, the store URL, this binary.
func runVars(app *cmdutil.App, svc app.Service, root string) map[string]string {
	v := map[string]string{}
	switch {
	case app.ServerURL != "":
		v["CUSTODIAN_SERVER"] = app.ServerURL
	default:
		if _, ok := svc.(*cmdutil.AppRemote); ok {
			v["CUSTODIAN_SERVER"] = "unix://" + filepath.Join(root, filepath.FromSlash(cmdutil.DefaultSocket))
		}
	}
	if app.StoreURL != "" {
		v["CUSTODIAN_STORE"] = app.StoreURL
	}
	if exe, err := os.Executable(); err == nil {
		v["CUSTODIAN_BIN"] = exe
	}
	return v
}

func runDry(app *cmdutil.App, ctx context.Context, state *runState, cfg *asdd.Config, ids []string, until string) error {
	if until != "" && !asdd.IsPhase(until) {
		return reason.New(reason.InvalidInput, "--until %q is not a lifecycle phase (%s)", until, strings.Join(asdd.Lifecycle, ", "))
	}
	m, err := state.Manifest(ctx)
	if err != nil {
		return err
	}
	plans := []runner.SlicePlan{}
	if len(ids) == 0 {
		for _, s := range m.Slices {
			if s.Status != asdd.QuickFix && runner.Next(s, cfg, until).Kind != runner.StepDone {
				plans = append(plans, runner.Plan(s, cfg, until))
			}
		}
	}
	for _, id := range ids {
		s, err := m.Find(id)
		if err != nil {
			return err
		}
		plans = append(plans, runner.Plan(s, cfg, until))
	}
	return app.Render(plans, func(w io.Writer) error {
		if len(plans) == 0 {
			_, err := fmt.Fprintln(w, "nothing to run: every slice is DONE")
			return err
		}
		for _, p := range plans {
			fmt.Fprintf(w, "%s (%s)\n", p.Slice, p.Status)
			for _, run := range p.Runs {
				switch {
				case run.Skipped:
					fmt.Fprintf(w, "  %-15s %-15s skipped (%s)\n", run.Phase, run.Agent, run.Note)
				default:
					fmt.Fprintf(w, "  %-15s %-15s %s\n", run.Phase, run.Agent, strings.Join(run.Command, " "))
					for _, wave := range run.Tasks {
						fmt.Fprintf(w, "  %-31s   wave %d: %s\n", "", wave.Wave, strings.Join(wave.Tasks, ", "))
					}
				}
			}
			fmt.Fprintf(w, "  then: %s\n", p.End)
		}
		_, err := fmt.Fprintln(w, "(dry run: nothing started, nothing committed; gates may halt a slice earlier)")
		return err
	})
}

// progressWriter prints the run's events as lines.
type progressWriter struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (p *progressWriter) event(e runner.Event) {
	who := e.Agent
	if e.Task != "" {
		who += "/" + e.Task
	}
	var msg string
	switch e.Kind {
	case runner.EvStart:
		msg = fmt.Sprintf("started (attempt %d, pid %d)", e.Attempt, e.Pid)
	case runner.EvEnd:
		msg = fmt.Sprintf("ended after %s: %s", e.Elapsed.Round(time.Millisecond), e.Detail)
		if e.Detail != "exit 0" && e.Log != "" {
			msg += " (log " + e.Log + ")"
		}
	default:
		msg = e.Detail
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%7s  %-10s %-22s %-9s %s\n", fmtElapsed(e.Time.Sub(p.start)), e.Slice, who, e.Kind, msg)
}

func fmtElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("+%.1fs", d.Seconds())
}

// ticker prints, every so often, which agents run, for which slice, for
// how long.
func (p *progressWriter) ticker(r *runner.Runner, every time.Duration, done <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			list := r.Running()
			if len(list) == 0 {
				continue
			}
			var parts []string
			for _, x := range list {
				who := x.Agent
				if x.Task != "" {
					who += "/" + x.Task
				}
				parts = append(parts, fmt.Sprintf("%s %s %s", x.Slice, who, now.Sub(x.Since).Round(time.Second)))
			}
			p.mu.Lock()
			fmt.Fprintf(p.w, "%7s  running: %s\n", fmtElapsed(now.Sub(p.start)), strings.Join(parts, "; "))
			p.mu.Unlock()
		}
	}
}

func writeRunSummary(w io.Writer, s *runner.Summary) error {
	if len(s.Slices) == 0 {
		_, err := fmt.Fprintln(w, "nothing to run: no slice is waiting for an agent (custodian slice add ID adds one; custodian status shows them all)")
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SLICE\tSTATUS\tOUTCOME\tRUNS\tTIME\tWHY")
	for _, x := range s.Slices {
		// One decimal, always: the column's width then depends only on
		// the magnitude (6.1s, not 6.09s beside 6.092s).
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.1fs\t%s\n", x.Slice, x.Status, x.Outcome, x.Runs, x.Elapsed.Seconds(), x.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%s (%s, %s, %s, %s) in %s\n",
		nOf(s.Runs, "agent run", "agent runs"), nOf(s.Retries, "retry", "retries"), nOf(s.Timeouts, "timeout", "timeouts"),
		nOf(s.Crashes, "crash", "crashes"), nOf(s.Escalations, "escalation", "escalations"), s.Elapsed.Round(time.Millisecond))
	if len(s.Killed) > 0 {
		fmt.Fprintf(w, "resumed: killed %s of the previous run\n", nOf(len(s.Killed), "leftover agent process group", "leftover agent process groups"))
	}
	return err
}

// runState is runner.State on the project's application layer: the same
// path as every ASDD command. The runner's heartbeat policy travels with
// an operation only to a Local layer; a daemon applies its own.
type runState struct {
	app *cmdutil.App
	svc app.Service
	cfg *asdd.Config
}

func newRunState(cli *cmdutil.App, cfg *asdd.Config) (*runState, error) {
	svc, err := cli.Service()
	if err != nil {
		return nil, err
	}
	return &runState{app: cli, svc: svc, cfg: cfg}, nil
}

func (s *runState) Manifest(ctx context.Context) (*asdd.Manifest, error) {
	return s.svc.Manifest(ctx)
}

func (s *runState) Apply(ctx context.Context, op asdd.Op, cfg *asdd.Config) (*asdd.Outcome, error) {
	if cfg == nil {
		cfg = s.cfg
	}
	if l, ok := s.svc.(*app.Local); ok {
		_, out, err := l.ApplyASDD(ctx, op, cfg, "runner:")
		return out, err
	}
	resp, err := s.svc.ASDD(ctx, op)
	if err != nil {
		return nil, err
	}
	return &asdd.Outcome{Summary: resp.Summary, Events: resp.Events, Verdict: resp.Verdict}, nil
}

// nOf is "1 retry", "2 retries", "0 retries".
func nOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
