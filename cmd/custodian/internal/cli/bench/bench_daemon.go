package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/serve"
)

// DaemonBenchReport is what `custodian bench daemon --json` prints.
type DaemonBenchReport struct {
	Baseline bench.Result   `json:"baseline"`
	CLI      bench.Result   `json:"cli"`
	Daemon   []bench.Result `json:"daemon"`
	// Process is the largest client count against a separate custodian
	// serve process (the clients stay in this one), as agents use it.
	Process bench.Result `json:"daemon_process"`
	// Writes are raw commits of a 1 KB manifest (its schema checked, none
	// of the ASDD rules): the daemon's own cost (HTTP, store, group commit).
	Writes []bench.Result `json:"raw_writes"`
	// HTTP is the round trip alone (GET /v1/health, no store, no rules)
	// with each client count: the ceiling any operation through the
	// daemon's HTTP API has on this machine.
	HTTP  []bench.Result `json:"http_round_trips"`
	Reads bench.Result   `json:"slice_reads"`
	// Small and Big are single-client commits on manifests of --slices and
	// --big slices; CostRatio is Big's p50 over Small's.
	Small     bench.Result `json:"commit_small"`
	Big       bench.Result `json:"commit_big"`
	CostRatio float64      `json:"commit_cost_ratio"`
	Memory    bench.Memory `json:"memory"`
	MemoryRun bench.Result `json:"memory_run"`
	// Proposals are real proposals (a discovery result naming an artifact
	// file the daemon hashes itself, accepted and committed) with each
	// client count.
	Proposals []bench.Result `json:"real_proposals"`
	// CLISmall and CLIBig are CLI heartbeats (whole processes, measured
	// alternately) on manifests of 10 and --slices slices; CLICostRatio
	// is Big's p50 over Small's.
	CLISmall     bench.Result `json:"cli_heartbeat_small"`
	CLIBig       bench.Result `json:"cli_heartbeat_big"`
	CLICostRatio float64      `json:"cli_commit_cost_ratio"`
	// Impl and Script are `custodian impl --update-status` and the
	// plugin's task-manifest.sh (--task-manifest) on a 10-task manifest,
	// measured alternately; ImplSpeedup is Script's p50 over Impl's.
	Impl        bench.Result `json:"impl_update_status"`
	Script      bench.Result `json:"task_manifest_sh,omitempty"`
	ImplSpeedup float64      `json:"impl_speedup,omitempty"`
}

func newBenchDaemonCmd(app *cmdutil.App) *cobra.Command {
	var (
		slices, big, tasks, cliOps, propSlices int
		clients, taskManifest                  string
		duration                               time.Duration
	)
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Proposals/s through the daemon with 1, 16 and 64 clients, next to CLI mode and bare append+fsync",
		Long: `Measures in one run, on an ASDD manifest of --slices slices: the machine's
bare append+fsync rate (the physical limit of a durable commit); CLI mode,
one custodian process per proposal with no daemon; the daemon (in this
process, over its unix socket, exactly as custodian serve runs it) with each
--clients count, next to the bare HTTP round trip (GET /v1/health: the
ceiling of any operation over the API), and raw 1 KB writes of the manifest
(its schema checked, none of the ASDD rules; a project of their own) with as
many clients; the largest --clients count again against a
separate custodian serve process (as agents use it: the clients are in
this process); reading one slice over the API; the cost of one commit on
--big slices against --slices; and the memory the daemon uses with --tasks
tasks in the manifest. A proposal here is an agent heartbeat: it runs through
the ASDD rules inside the daemon and is committed durably (group commit).
Scratch files live under the project root (-C) and are removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, exe, tmp, progress, done, err := benchSetup(app, clients)
			if err != nil {
				return err
			}
			defer done()
			var rep DaemonBenchReport
			progress("measuring bare append+fsync…")
			if rep.Baseline, err = bench.BareAppend(tmp, 300, duration); err != nil {
				return err
			}
			dir, err := seeded(tmp, "small", slices)
			if err != nil {
				return err
			}
			progress("measuring CLI mode (one process per proposal), %d slices…", slices)
			if rep.CLI, err = bench.CLIProposals(exe, dir, duration, cliOps); err != nil {
				return err
			}
			// The in-process daemon gets custodian serve's runtime
			// settings (--memory-limit's default, the spare P).
			if err := serve.DaemonRuntime("160MB"); err != nil {
				return err
			}
			d, err := bench.StartDaemon(dir)
			if err != nil {
				return err
			}
			for _, c := range cs {
				progress("measuring the daemon, %d client(s), %d slices…", c, slices)
				r, err := bench.DaemonProposals(d, fmt.Sprintf("daemon, %d client(s), %d slices", c, slices), c, duration)
				if err != nil {
					d.Close()
					return err
				}
				r.Baseline, r.Ratio = rep.CLI.Name, ratio(r, rep.CLI)
				rep.Daemon = append(rep.Daemon, r)
			}
			for i, c := range cs {
				progress("measuring the HTTP round trip alone, %d client(s)…", c)
				h, err := bench.HTTPRoundTrips(d, c, duration)
				if err != nil {
					d.Close()
					return err
				}
				rep.HTTP = append(rep.HTTP, h)
				rep.Daemon[i].VsHTTP = ratio(rep.Daemon[i], h)
			}
			progress("measuring one-slice reads over the API…")
			if rep.Reads, err = bench.SliceReads(d, "read one slice over the API", slices, duration); err != nil {
				d.Close()
				return err
			}
			if rep.Small, err = bench.DaemonProposals(d, fmt.Sprintf("one commit, %d slices", slices), 1, duration); err != nil {
				d.Close()
				return err
			}
			if err := d.Close(); err != nil {
				return err
			}
			// Raw writes replace the manifest: a project of their own.
			wdir, err := seeded(tmp, "writes", slices)
			if err != nil {
				return err
			}
			if d, err = bench.StartDaemon(wdir); err != nil {
				return err
			}
			for _, c := range cs {
				progress("measuring raw 1 KB manifest writes (schema only, no rules), %d client(s)…", c)
				wr, err := bench.DaemonWrites(d, c, duration)
				if err != nil {
					d.Close()
					return err
				}
				rep.Writes = append(rep.Writes, wr)
			}
			if err := d.Close(); err != nil {
				return err
			}
			if n := maxInt(cs); n > 0 {
				progress("measuring a custodian serve process, %d client(s), %d slices…", n, slices)
				if d, err = bench.StartServe(exe, dir); err != nil {
					return err
				}
				rep.Process, err = bench.DaemonProposals(d, fmt.Sprintf("custodian serve process, %d client(s), %d slices", n, slices), n, duration)
				if cerr := d.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					return err
				}
				rep.Process.Baseline, rep.Process.Ratio = rep.CLI.Name, ratio(rep.Process, rep.CLI)
			}
			progress("measuring one commit on %d slices…", big)
			bdir, err := seeded(tmp, "big", big)
			if err != nil {
				return err
			}
			if d, err = bench.StartDaemon(bdir); err != nil {
				return err
			}
			rep.Big, err = bench.DaemonProposals(d, fmt.Sprintf("one commit, %d slices", big), 1, duration)
			if cerr := d.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			if rep.Small.P50 > 0 {
				rep.CostRatio = float64(rep.Big.P50) / float64(rep.Small.P50)
			}
			for _, c := range cs {
				progress("measuring real proposals (the daemon hashes the artifact), %d client(s)…", c)
				pdir, err := scratch(tmp, fmt.Sprintf("proposals-%d", c))
				if err != nil {
					return err
				}
				r, err := realProposals(pdir, c, propSlices, duration)
				if err != nil {
					return err
				}
				rep.Proposals = append(rep.Proposals, r)
			}
			progress("measuring CLI heartbeats on 10 and %d slices, alternately…", slices)
			if err := cliCommitCost(exe, tmp, slices, cliOps, duration, &rep); err != nil {
				return err
			}
			progress("measuring custodian impl --update-status%s…", map[bool]string{true: " against " + taskManifest, false: ""}[taskManifest != ""])
			if err := implCost(exe, tmp, taskManifest, cliOps, duration, &rep); err != nil {
				return err
			}
			progress("measuring memory with %d tasks…", tasks)
			mdir, err := scratch(tmp, "memory")
			if err != nil {
				return err
			}
			per := 100
			if rep.Memory, rep.MemoryRun, err = bench.MeasureMemory(exe, mdir, max(1, tasks/per), per, duration); err != nil {
				return err
			}
			return app.Render(rep, func(w io.Writer) error { return printDaemonBench(w, &rep) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&slices, "slices", 1000, "slices in the manifest")
	f.IntVar(&big, "big", 10000, "slices in the large manifest of the commit-cost comparison")
	f.IntVar(&tasks, "tasks", 100000, "tasks in the manifest of the memory measurement (100 per slice)")
	f.IntVar(&cliOps, "cli-ops", 20, "at least this many CLI-mode proposals")
	f.StringVar(&clients, "clients", "1,16,64", "concurrent daemon client counts")
	f.IntVar(&propSlices, "proposal-slices", 40000, "slices seeded for the real-proposal measurement (each takes one proposal)")
	f.StringVar(&taskManifest, "task-manifest", "", "`path` of the plugin's task-manifest.sh, to measure custodian impl against (bash and jq needed)")
	f.DurationVar(&duration, "duration", 2*time.Second, "time spent on each measurement")
	return cmd
}

func printDaemonBench(w io.Writer, r *DaemonBenchReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "WHAT\tOPS/S\tP50\tP99\tVS CLI MODE\tVS HTTP ALONE\t")
	row := func(x bench.Result, ratio, vsHTTP string) {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t\n", x.Name, x.PerSecond, cmdutil.Ms(x.P50), cmdutil.Ms(x.P99), ratio, vsHTTP)
	}
	row(r.Baseline, "", "")
	row(r.CLI, "1.00×", "")
	for _, x := range r.HTTP {
		row(x, "", "1.00×")
	}
	for _, x := range r.Daemon {
		vs := ""
		if x.VsHTTP > 0 {
			vs = fmt.Sprintf("%.2f×", x.VsHTTP)
		}
		row(x, fmt.Sprintf("%.1f×", x.Ratio), vs)
	}
	if r.Process.Name != "" {
		row(r.Process, fmt.Sprintf("%.1f×", r.Process.Ratio), "")
	}
	for _, x := range r.Writes {
		row(x, "", "")
	}
	row(r.Reads, "", "")
	row(r.Small, "", "")
	row(r.Big, "", "")
	row(r.MemoryRun, "", "")
	for _, x := range r.Proposals {
		row(x, "", "")
	}
	row(r.CLISmall, "", "")
	row(r.CLIBig, "", "")
	row(r.Impl, "", "")
	if r.Script.Name != "" {
		row(r.Script, "", "")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.CLISmall.P50 > 0 {
		fmt.Fprintf(w, "\nCLI commit cost at %s vs %s: %.2f× (p50)", r.CLIBig.Name, r.CLISmall.Name, r.CLICostRatio)
	}
	if r.ImplSpeedup > 0 {
		fmt.Fprintf(w, "\ncustodian impl --update-status is %.2f× as fast as task-manifest.sh (p50)", r.ImplSpeedup)
	}
	_, err := fmt.Fprintf(w, "\ncommit cost at %s vs %s: %.2f× (p50)\ncustodian serve with %d tasks (%d slices, %.1f MB manifest): RSS %.1f MB after the load, peak RSS %.1f MB\n",
		r.Big.Name, r.Small.Name, r.CostRatio, r.Memory.Tasks, r.Memory.Slices, mb(r.Memory.DocBytes), mb(int(r.Memory.RSS)), mb(int(r.Memory.PeakRSS)))
	return err
}

func mb(n int) float64 { return float64(n) / (1 << 20) }

func maxInt(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// realProposals seeds dir with slices fresh slices and measures accepted
// proposals through an in-process daemon with clients clients.
func realProposals(dir string, clients, slices int, budget time.Duration) (bench.Result, error) {
	doc, err := bench.ProposalManifest(slices)
	if err != nil {
		return bench.Result{}, err
	}
	if err := bench.Seed(dir, doc); err != nil {
		return bench.Result{}, err
	}
	art, err := bench.SeedArtifact(dir)
	if err != nil {
		return bench.Result{}, err
	}
	d, err := bench.StartDaemon(dir)
	if err != nil {
		return bench.Result{}, err
	}
	r, err := bench.RealProposals(d, fmt.Sprintf("real proposals (daemon hashes the artifact), %d client(s)", clients), art, clients, slices, budget)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return r, err
}

// cliCommitCost measures CLI heartbeats, whole processes, on 10 and on
// big slices, alternately.
func cliCommitCost(exe, tmp string, big, minOps int, budget time.Duration, rep *DaemonBenchReport) error {
	dirs := [2]string{}
	for i, n := range []int{10, big} {
		d, err := seeded(tmp, fmt.Sprintf("cli-%d", n), n)
		if err != nil {
			return err
		}
		dirs[i] = d
	}
	beat := func(dir string) func(int) error {
		return func(i int) error {
			return runQuiet(exe, dir, "heartbeat", "--agent", "spec", "--status", "ACTIVE", "--done", fmt.Sprint(i+1))
		}
	}
	var err error
	rep.CLISmall, rep.CLIBig, err = bench.Alternate(
		bench.Command{Name: "CLI heartbeat (a process), 10 slices", Run: beat(dirs[0])},
		bench.Command{Name: fmt.Sprintf("CLI heartbeat (a process), %d slices", big), Run: beat(dirs[1])}, budget, minOps)
	if err == nil && rep.CLISmall.P50 > 0 {
		rep.CLICostRatio = float64(rep.CLIBig.P50) / float64(rep.CLISmall.P50)
	}
	return err
}

// implCost measures custodian impl --update-status on a 10-task manifest,
// alternately with the plugin's script when one is given.
func implCost(exe, tmp, script string, minOps int, budget time.Duration, rep *DaemonBenchReport) error {
	setup := func(dir string, run func(args ...string) error) error {
		// The .impl marker makes the scratch directory a project of its
		// own: without it custodian impl would find the enclosing project
		// (the one bench runs in) and write its .impl there.
		if err := os.Mkdir(filepath.Join(dir, ".impl"), 0o755); err != nil {
			return err
		}
		if err := run("--init", "--plan-path", "docs/plan.md", "--plan-number", "001", "--plan-title", "Bench"); err != nil {
			return err
		}
		for i := 1; i <= 10; i++ {
			if err := run("--add-task", "--task-id", fmt.Sprintf("1.%d", i), "--phase", "1", "--description", "task"); err != nil {
				return err
			}
		}
		return nil
	}
	statuses := []string{"in_progress", "pending"}
	cdir, err := scratch(tmp, "impl-custodian")
	if err != nil {
		return err
	}
	custodian := func(args ...string) error { return runQuiet(exe, cdir, append([]string{"impl"}, args...)...) }
	if err := setup(cdir, custodian); err != nil {
		return err
	}
	mine := bench.Command{Name: "custodian impl --update-status (a process), 10 tasks", Run: func(i int) error {
		return custodian("--update-status", "--task-id", "1.1", "--status", statuses[i%2])
	}}
	if script == "" {
		r, _, err := bench.Alternate(mine, bench.Command{Name: "none", Run: func(int) error { return nil }}, budget, minOps)
		rep.Impl = r
		return err
	}
	sdir, err := scratch(tmp, "impl-script")
	if err != nil {
		return err
	}
	theirs := func(args ...string) error {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Dir = sdir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", script, err, out)
		}
		return nil
	}
	if err := setup(sdir, theirs); err != nil {
		return err
	}
	rep.Impl, rep.Script, err = bench.Alternate(mine, bench.Command{Name: "task-manifest.sh --update-status (bash + jq), 10 tasks", Run: func(i int) error {
		return theirs("--update-status", "--task-id", "1.1", "--status", statuses[i%2])
	}}, budget, minOps)
	if err == nil && rep.Impl.P50 > 0 {
		rep.ImplSpeedup = float64(rep.Script.P50) / float64(rep.Impl.P50)
	}
	return err
}

// scratch makes the directory name under tmp.
func scratch(tmp, name string) (string, error) {
	d := filepath.Join(tmp, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	return d, nil
}

// seeded makes the scratch project name under tmp, with a manifest of n
// slices.
func seeded(tmp, name string, n int) (string, error) {
	d, err := scratch(tmp, name)
	if err != nil {
		return "", err
	}
	doc, err := bench.Manifest(n, 0)
	if err != nil {
		return "", err
	}
	return d, bench.Seed(d, doc)
}

// ratio is a's throughput over b's (0 when b has none).
func ratio(a, b bench.Result) float64 {
	if b.PerSecond > 0 {
		return a.PerSecond / b.PerSecond
	}
	return 0
}

// runQuiet runs exe -C dir args... with no daemon, failing with its output.
func runQuiet(exe, dir string, args ...string) error {
	cmd := exec.Command(exe, append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "CUSTODIAN_SERVER=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("custodian %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// benchSetup is what every daemon benchmark starts from: the client
// counts, this binary (for the processes it starts), a scratch directory
// under the project root (removed by done) and a progress printer (quiet
// with --json).
func benchSetup(app *cmdutil.App, clients string) (cs []int, exe, tmp string, progress func(string, ...any), done func(), err error) {
	if cs, err = cmdutil.ParseInts(clients); err != nil {
		return
	}
	root, err := app.Root()
	if err != nil {
		return
	}
	if exe, err = os.Executable(); err != nil {
		err = fmt.Errorf("bench: %w", err)
		return
	}
	if tmp, err = os.MkdirTemp(root, ".custodian-bench-"); err != nil {
		err = fmt.Errorf("bench: %w", err)
		return
	}
	progress = func(format string, a ...any) {
		if !app.JSON {
			fmt.Fprintf(app.Err, format+"\n", a...)
		}
	}
	return cs, exe, tmp, progress, func() { os.RemoveAll(tmp) }, nil
}
