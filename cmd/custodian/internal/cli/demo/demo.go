package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// Options is what `custodian demo` was asked to do.
type Options struct {
	App   *cmdutil.App
	Dir   string // the scratch project ("": a new temporary directory)
	Serve bool   // then serve the dashboard until interrupted
	Addr  string // with Serve: the dashboard's TCP address
}

// NewDemoCmd returns `custodian demo`; it parses the command line
// into Options and calls runF with them (run when runF is nil).
func NewDemoCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	cmd := &cobra.Command{
		Use:   "demo [DIR] [--serve]",
		Short: "Run a simulated ASDD pipeline with `custodian run` and scripted agents, then show the board",
		Long: `Create a scratch project (DIR, or a new temporary directory) whose agents are
this binary re-invoked as a scripted agent ("custodian demo-agent": it writes its
artifact and reports a chosen score), and drive it with "custodian run": four
slices at once, implementation tasks as waves of sub-agents. One slice reaches
DONE; one is halted by the CCS floor (cascading confidence failure); one is
refused while another agent holds its lease, then halted when two agents change
the same artifact at once (the conflict diff goes to the Tech Lead); one is
halted by an agent below its minimum, resolved by the Tech Lead, and resumed to
DONE. Then quick mode, and the board: the terminal board, and with --serve
the web dashboard (custodian serve on the demo project, until Ctrl-C).
The project is left in place to explore. Needs nothing but this binary.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().BoolVar(&opts.Serve, "serve", false, "then serve the web dashboard of the demo project until interrupted")
	cmd.Flags().StringVar(&opts.Addr, "addr", "127.0.0.1:7420", "with --serve: the dashboard's TCP `address`")
	return cmd
}

// run builds the demo project, drives it, shows the board and says where to look.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("demo: find this binary: %w", err)
	}
	dir := opts.Dir
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(dir, ".asdd")); err == nil {
			return reason.Usage("%s already holds an .asdd project; give an empty or new directory", dir)
		}
	} else if dir, err = os.MkdirTemp("", "custodian-demo-"); err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	progress := app.Out
	if app.JSON {
		progress = app.Err
	}
	d := &demo{self: self, dir: dir, out: progress}
	if err := d.run(); err != nil {
		return err
	}
	fmt.Fprintln(progress)
	board := exec.Command(self, "-C", dir, "status")
	if app.JSON {
		board.Args = append(board.Args, "--json")
	}
	board.Stdout, board.Stderr = app.Out, app.Err
	if err := board.Run(); err != nil {
		return fmt.Errorf("demo: status: %w", err)
	}
	name, note := commandName(self)
	fmt.Fprintf(progress, "\nThe project is in %s. Look around:\n", dir)
	for _, c := range []string{"status", "slice show SLICE-002", "escalations --all", "run --dry-run", "history .asdd/state/manifest.json"} {
		fmt.Fprintf(progress, "  %s -C %s %s\n", name, shellWord(dir), c)
	}
	fmt.Fprintf(progress, "  cat %s\n", filepath.Join(dir, asdd.FailureLogPath))
	fmt.Fprintf(progress, "  ls %s   (each agent run's context packet and log)\n", filepath.Join(dir, ".asdd", "runs"))
	if !opts.Serve {
		fmt.Fprintf(progress, "  %s -C %s serve   (the web dashboard, at http://%s/)\n", name, shellWord(dir), "127.0.0.1:7420")
	}
	if note != "" {
		fmt.Fprintf(progress, "(%s)\n", note)
	}
	if opts.Dir == "" {
		fmt.Fprintf(progress, "(a temporary directory: remove it when done)\n")
	}
	if len(d.failed) > 0 {
		return fmt.Errorf("demo: did not go as scripted: %s", strings.Join(d.failed, "; "))
	}
	if opts.Serve {
		fmt.Fprintf(progress, "\nThe web dashboard of the demo project (Ctrl-C to stop):\n")
		return demoServe(ctx, app, self, dir, opts.Addr)
	}
	return nil
}

// demoServe runs custodian serve on the demo project until interrupted (an
// interrupt ends the demo with exit 0).
func demoServe(ctx context.Context, app *cmdutil.App, self, dir, addr string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := exec.Command(self, "-C", dir, "serve", "--addr", addr)
	srv.Stdout, srv.Stderr = app.Err, app.Err
	if err := srv.Start(); err != nil {
		return fmt.Errorf("demo: serve: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("demo: serve: %w", err)
		}
		return nil
	case <-ctx.Done():
		_ = srv.Process.Signal(os.Interrupt)
		<-done
		return nil
	}
}

// commandName is how the user runs this binary from a shell: "custodian"
// when that is what PATH finds, else the binary's path; a binary that go
// run built in a temporary directory is gone after the demo, so the hint
// says how to install one.
func commandName(self string) (name, note string) {
	if p, err := exec.LookPath("custodian"); err == nil && same(p, self) {
		return "custodian", ""
	}
	if strings.Contains(filepath.ToSlash(self), "/go-build") {
		return "custodian", installHint
	}
	return shellWord(self), ""
}

// installHint is what the demo says when it ran from go run: the clone's
// install first (it works before the module is published), then the
// module's.
const installHint = "custodian is not on your PATH: in the clone, go install ./cmd/custodian (or go build -o ~/.local/bin/custodian ./cmd/custodian); " +
	"once the module is published, go install github.com/custodian-dev/custodian/cmd/custodian@latest from anywhere; until then, go run ./cmd/custodian works from the clone in its place"

// same reports whether two paths name the same file.
func same(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+:=@%") == "" {
		return s
	}
	return cmdutil.ShellQuote(s)
}

type demo struct {
	self, dir string
	out       io.Writer
	mu        sync.Mutex
	failed    []string
}

// custodian runs the binary as a separate process and returns its exit
// code and output.
func (d *demo) custodian(args ...string) (int, string) {
	cmd := exec.Command(d.self, append([]string{"-C", d.dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return exitOf(cmd.Run(), &out)
}

func exitOf(err error, out *bytes.Buffer) (int, string) {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String()
	}
	return -1, err.Error()
}

func (d *demo) say(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format+"\n", args...)
}

func (d *demo) fail(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failed = append(d.failed, fmt.Sprintf(format, args...))
}

// must runs a setup command that has to succeed.
func (d *demo) must(args ...string) error {
	if code, out := d.custodian(args...); code != 0 {
		return fmt.Errorf("demo: custodian %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(out))
	}
	return nil
}

// runner runs `custodian run` with its progress shown as it comes.
func (d *demo) runner(want int, args ...string) {
	cmd := exec.Command(d.self, append([]string{"-C", d.dir, "run", "--status-every", "0"}, args...)...)
	var buf bytes.Buffer
	w := &prefixWriter{w: d.out, mu: &d.mu}
	cmd.Stdout = io.MultiWriter(w, &buf)
	cmd.Stderr = cmd.Stdout
	code, _ := exitOf(cmd.Run(), &buf)
	if code != want {
		d.fail("custodian run %s: exit %d, want %d", strings.Join(args, " "), code, want)
	}
}

// prefixWriter indents a child's output under the demo's narration.
type prefixWriter struct {
	w    io.Writer
	mu   *sync.Mutex
	part []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			return len(b), nil
		}
		fmt.Fprintf(p.w, "  │ %s\n", p.part[:i])
		p.part = p.part[i+1:]
	}
}

var demoArtifacts = map[string]string{
	"discovery": "intent", "spec": "requirements", "domain": "domain_model", "design": "design", "task_planning": "tasks",
}

// demoScores are the scripted agents' scores per slice, one per run of the
// agent on that slice (the last repeats); agents not named score 0.96.
var demoScores = map[string]map[string][]string{
	// Seed 004's worked example: each agent passes its own gate, but the CCS falls below 0.65.
	"SLICE-002": {"discovery": {"0.90"}, "spec": {"0.88"}, "validation": {"0.91"}, "design": {"0.82"}},
	// Seed 000's example: Implementation Agent confidence 0.71 < threshold 0.75;
	// the revised run after the Tech Lead's resolution scores 0.88.
	"SLICE-004": {"discovery": {"0.95"}, "validation": {"0.95"}, "design": {"0.90"}, "implementation": {"0.71", "0.88"}},
}

var demoUncertainty = map[string]string{
	"discovery":      "The token type is not in the domain model",
	"spec":           "The NFR for p95 latency is not specified in the requirements",
	"validation":     "The 'Settlement' entity has conflicting definitions in two bounded contexts",
	"domain":         "Two candidate aggregates for Settlement",
	"design":         "Caching strategy for settlement queries undecided",
	"task_planning":  "Migration order depends on an unreviewed schema",
	"implementation": "Retry semantics of the payment gateway are undocumented",
	"qa":             "Edge cases of the lockout policy are untested",
	"security":       "Dependency scan reports an unreviewed CVE",
	"devops":         "Canary thresholds are guesses",
	"observability":  "No SLO defined for the settlement export",
}

var demoAgentLine = regexp.MustCompile(`(?m)^  - name: (\w+)\n`)

// demoConfig is the default configuration with every agent (but the
// knowledge agent, which the runner never starts) run as this binary's
// scripted agent.
func (d *demo) demoConfig() []byte {
	self, _ := json.Marshal(d.self)
	return demoAgentLine.ReplaceAllFunc(asdd.DefaultConfigYAML, func(m []byte) []byte {
		if bytes.Contains(m, []byte("knowledge")) {
			return m
		}
		return fmt.Appendf(bytes.Clone(m), "    command: [%s, demo-agent]\n    timeout: 1m\n", self)
	})
}

func (d *demo) run() error {
	d.say("Custodian demo: an ASDD pipeline driven by `custodian run`, in %s\n", d.dir)
	if err := d.must("init", "--sprint", "2026-Q2-S3", "--goal", "Self-service onboarding"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.dir, filepath.FromSlash(asdd.ConfigPath)), d.demoConfig(), 0o644); err != nil {
		return err
	}
	for _, s := range [][2]string{{"SLICE-001", "User Authentication Flow"}, {"SLICE-002", "Settlement Reports"},
		{"SLICE-003", "Notification Preferences"}, {"SLICE-004", "Audit Trail"}} {
		if err := d.must("slice", "add", s[0], "--name", s[1]); err != nil {
			return err
		}
	}
	code, out := d.custodian("lock", "SLICE-003", "--holder", "domain", "--ttl", "1h", "--reason", "reworking the notification domain model")
	d.say("The domain agent leases SLICE-003 to rework its model: %s\n", firstLine(out, code))

	d.say("Round 1: `custodian run` drives the four slices at once; every agent is a separate process")
	d.say("(this binary as a scripted agent: it writes its artifact and reports a chosen score).\n")
	d.runner(3, "--max-parallel", "4")

	d.say("\nThe Tech Lead reads the escalation for SLICE-004 and approves a revised run;")
	d.say("the domain agent releases SLICE-003:")
	code, out = d.custodian("resolve", "SLICE-004", "--role", "TL", "--by", "dana", "--rationale", "gateway retry semantics documented in the design", "--root-cause", "undocumented external API", "--action", "rerun")
	d.say("  %-9s %-8s %-8s %s", "SLICE-004", "TL", "RESOLVE", firstLine(out, code))
	code, out = d.custodian("unlock", "SLICE-003", "--holder", "domain")
	d.say("  %-9s %-8s %-8s %s\n", "SLICE-003", "domain", "UNLOCK", firstLine(out, code))

	d.say("Round 2: `custodian run SLICE-003 SLICE-004` goes on from the committed state. In SLICE-003's design")
	d.say("phase the domain and knowledge agents change the glossary at once, from the same revision:\n")
	d.runner(3, "SLICE-003", "SLICE-004")

	d.say("\nQuick mode: `custodian run --quick` records a QUICK_FIX slice and runs implementation, then QA:\n")
	d.runner(0, "--quick", "Fix typo in login header")
	d.check()
	return nil
}

// check compares the end state with the script.
func (d *demo) check() {
	code, out := d.custodian("--json", "slice", "list")
	m := &asdd.Manifest{}
	if code != 0 || json.Unmarshal([]byte(out), &m.Slices) != nil {
		d.fail("list the slices: exit %d", code)
		return
	}
	want := map[string]string{"SLICE-001": asdd.Done, "SLICE-002": asdd.Blocked, "SLICE-003": asdd.Blocked, "SLICE-004": asdd.Done, "QUICK-001": asdd.QuickFix}
	for id, st := range want {
		if s := m.Slice(id); s == nil || s.Status != st {
			d.fail("%s is not %s", id, st)
		}
	}
	if s := m.Slice("SLICE-002"); s != nil && s.FailureMode != asdd.ModeCCSFloor {
		d.fail("SLICE-002 halted by %s, not the CCS floor", s.FailureMode)
	}
	if s := m.Slice("SLICE-003"); s != nil && s.FailureMode != asdd.ModeConflict {
		d.fail("SLICE-003 halted by %s, not a conflict", s.FailureMode)
	}
}

// NewDemoAgentCmd is the demo's scripted agent: run by `custodian run`
// with the CUSTODIAN_* environment, it writes its phase artifact and
// reports the score the demo's script gives it.
//
// Its command line is the environment `custodian run` gives an agent:
// $CUSTODIAN_SLICE, $CUSTODIAN_AGENT and, for a sub-agent, $CUSTODIAN_TASK;
// they are parsed into AgentOptions and runF is called with them
// (runAgent when runF is nil).
func NewDemoAgentCmd(app *cmdutil.App, runF func(context.Context, *AgentOptions) error) *cobra.Command {
	if runF == nil {
		runF = runAgent
	}
	return &cobra.Command{
		Use:    "demo-agent",
		Short:  "The demo's scripted agent (run by `custodian run`)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &AgentOptions{App: app, Slice: os.Getenv("CUSTODIAN_SLICE"), Agent: os.Getenv("CUSTODIAN_AGENT"), Task: os.Getenv("CUSTODIAN_TASK")}
			if opts.Slice == "" || opts.Agent == "" {
				return reason.Usage("demo-agent runs under `custodian run` (CUSTODIAN_SLICE and CUSTODIAN_AGENT are not set)")
			}
			return runF(app.Context(cmd), opts)
		},
	}
}

// AgentOptions is what the demo's agent was started to do.
type AgentOptions struct {
	App   *cmdutil.App
	Slice string // $CUSTODIAN_SLICE
	Agent string // $CUSTODIAN_AGENT
	Task  string // $CUSTODIAN_TASK: a context-fresh sub-agent's one task
}

// runAgent does the scripted agent's work: writes its phase artifact and
// prints the result the demo's script gives it.
func runAgent(ctx context.Context, opts *AgentOptions) error {
	app, slice, agent, task := opts.App, opts.Slice, opts.Agent, opts.Task
	if task != "" { // a context-fresh sub-agent: one task
		time.Sleep(150 * time.Millisecond)
		fmt.Fprintf(app.Out, "task %s of %s done\n", task, slice)
		return nil
	}
	m, err := cmdutil.LoadManifest(ctx, app)
	if err != nil {
		return err
	}
	s, err := m.Find(slice)
	if err != nil {
		return err
	}
	runs := 0
	for _, e := range s.ConfidenceChain {
		if e.Agent == agent {
			runs++
		}
	}
	score := "0.96"
	if list := demoScores[slice][agent]; len(list) > 0 {
		score = list[min(runs, len(list)-1)]
	}
	res := map[string]any{}
	if name, ok := demoArtifacts[agent]; ok {
		rel := fmt.Sprintf(".asdd/specs/%s/%s.md", strings.ToLower(slice), name)
		content := fmt.Sprintf("# %s — %s\n\nWritten by the %s agent (confidence %s).\n", s.Name, name, agent, score)
		if err := os.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(rel, []byte(content), 0o644); err != nil {
			return err
		}
		res["artifacts"] = map[string]string{name: rel}
	}
	if slice == "SLICE-003" && agent == "domain" {
		return demoConflict(app, slice)
	}
	v, _ := strconv.ParseFloat(score, 64)
	res["score"] = v
	if v < 0.95 {
		res["uncertainty_factors"] = []string{demoUncertainty[agent]}
	}
	if agent == "task_planning" && slice == "SLICE-001" {
		res["tasks"] = []map[string]any{
			{"id": "T1", "title": "migrations", "wave": 1, "requirement": "REQ-001"},
			{"id": "T2", "title": "domain models", "wave": 1, "requirement": "REQ-001"},
			{"id": "T3", "title": "repositories", "wave": 2, "depends_on": []string{"T1"}, "requirement": "REQ-002"},
			{"id": "T4", "title": "domain services", "wave": 2, "depends_on": []string{"T2"}, "requirement": "REQ-002"},
		}
	}
	fmt.Fprintf(app.Out, "the %s agent worked on %s\n", agent, slice)
	return json.NewEncoder(app.Out).Encode(res)
}

// demoConflict is SLICE-003's design phase: the domain agent and the
// knowledge agent, having read the same revision, propose different
// glossaries at once. No steering rule settles the glossary, so whichever
// commits second halts the slice and the conflict diff goes to the TL.
func demoConflict(app *cmdutil.App, slice string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	base := os.Getenv("CUSTODIAN_BASE_REVISION")
	dir := ".asdd/specs/" + strings.ToLower(slice) + "/"
	for _, f := range []string{"glossary-knowledge.md", "glossary-domain.md"} {
		if err := os.WriteFile(dir+f, []byte("# "+f+"\n"), 0o644); err != nil {
			return err
		}
	}
	runs := [][]string{
		{"propose", "--agent", "knowledge", "--slice", slice, "--score", "0.96", "--base-revision", base,
			"--artifact", "glossary=" + dir + "glossary-knowledge.md"},
		{"propose", "--agent", "domain", "--slice", slice, "--score", "0.96", "--base-revision", base,
			"--artifact", "glossary=" + dir + "glossary-domain.md", "--artifact", "domain_model=" + dir + "domain_model.md"},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, args := range runs {
		wg.Go(func() {
			cmd := exec.Command(self, args...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			code, text := exitOf(cmd.Run(), &out)
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(app.Out, "%s agent (based on revision %s): %s\n", args[2], base, firstLine(text, code))
		})
	}
	wg.Wait()
	return nil
}

func firstLine(s string, code int) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if code != 0 {
		return fmt.Sprintf("exit %d: %s", code, line)
	}
	return line
}
