package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/cli/serve"
)

// MCPBenchReport is what `custodian bench mcp --json` prints.
type MCPBenchReport struct {
	// Stdio is one client over stdio (custodian mcp) on the project's
	// files, and StdioDaemon the same while a daemon runs (the calls go
	// to it).
	Stdio       bench.Result `json:"stdio"`
	StdioDaemon bench.Result `json:"stdio_via_daemon"`
	// MCP is tool calls to /mcp per client count; API the same operation
	// over the daemon's HTTP API (POST /v1/asdd/heartbeat) in the same
	// run; Ratio MCP's throughput over the API's at each count.
	MCP   []bench.Result `json:"mcp_http"`
	API   []bench.Result `json:"api_http"`
	Ratio []float64      `json:"mcp_vs_api"`
	// The same against a custodian serve process (the clients in this
	// one), as agents use it: the daemon's collector does not pay for the
	// clients' garbage.
	ProcessMCP   []bench.Result `json:"process_mcp_http"`
	ProcessAPI   []bench.Result `json:"process_api_http"`
	ProcessRatio []float64      `json:"process_mcp_vs_api"`
	// ProcessMCPCPU and ProcessAPICPU are the daemon process's CPU time
	// per call (user + system, from /proc; 0 where there is none).
	ProcessMCPCPU []time.Duration `json:"process_mcp_cpu_per_call_ns"`
	ProcessAPICPU []time.Duration `json:"process_api_cpu_per_call_ns"`
}

// mcpVsAPI measures /mcp and the HTTP API of one daemon with each client
// count.
func mcpVsAPI(progress func(string, ...any), sock string, d *bench.Daemon, prefix string, cs []int, duration time.Duration, cpu *[2][]time.Duration) (mcps, apis []bench.Result, ratios []float64, err error) {
	perCall := func(d time.Duration, ops int) time.Duration {
		if ops == 0 {
			return 0
		}
		return d / time.Duration(ops)
	}
	for _, c := range cs {
		progress("measuring %s/mcp and the HTTP API, %d client(s)…", prefix, c)
		c0 := bench.ProcessCPU(d.Pid())
		m, err := bench.MCPHTTP(sock, c, duration)
		if err != nil {
			return nil, nil, nil, err
		}
		m.Name = prefix + m.Name
		c1 := bench.ProcessCPU(d.Pid())
		a, err := bench.DaemonProposals(d, fmt.Sprintf("%sHTTP API (POST /v1/asdd/heartbeat), %d client(s)", prefix, c), c, duration)
		if err != nil {
			return nil, nil, nil, err
		}
		if cpu != nil {
			c2 := bench.ProcessCPU(d.Pid())
			cpu[0] = append(cpu[0], perCall(c1-c0, m.Ops))
			cpu[1] = append(cpu[1], perCall(c2-c1, a.Ops))
		}
		ratio := 0.0
		if a.PerSecond > 0 {
			ratio = m.PerSecond / a.PerSecond
		}
		mcps, apis, ratios = append(mcps, m), append(apis, a), append(ratios, ratio)
	}
	return mcps, apis, ratios, nil
}

func newBenchMCPCmd(app *cmdutil.App) *cobra.Command {
	var (
		slices   int
		clients  string
		duration time.Duration
	)
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP tool calls/s and p50/p99 over stdio and over HTTP (/mcp), next to the HTTP API's for the same operation",
		Long: `Measures, on an ASDD manifest of --slices slices, one operation (an agent's
heartbeat, run through the ASDD rules and committed durably) called as an MCP
tool: over stdio with one client (custodian mcp as a separate process, as a
coding agent runs it), first on the project's files and then while a daemon
runs; and over streamable HTTP to /mcp of a daemon (in this process, on its
unix socket, as custodian serve runs it) with each --clients count, one MCP
session per client, next to the same operation over the daemon's HTTP API
(POST /v1/asdd/heartbeat) with as many clients, in the same run; then both
again against a separate custodian serve process (the clients stay in this
one), as agents use it, with the daemon process's CPU time per call (from
/proc). Scratch files live under the project root (-C) and are removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, exe, tmp, progress, done, err := benchSetup(app, clients)
			if err != nil {
				return err
			}
			defer done()
			dir := filepath.Join(tmp, "project")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			doc, err := bench.Manifest(slices, 0)
			if err != nil {
				return err
			}
			if err := bench.Seed(dir, doc); err != nil {
				return err
			}
			var rep MCPBenchReport
			progress("measuring custodian mcp over stdio on the files, %d slices…", slices)
			if rep.Stdio, err = bench.MCPStdio(exe, dir, "MCP over stdio, files, 1 client", duration); err != nil {
				return err
			}
			if err := serve.DaemonRuntime("160MB"); err != nil {
				return err
			}
			d, err := bench.StartMCPDaemon(dir)
			if err != nil {
				return err
			}
			progress("measuring custodian mcp over stdio while a daemon runs…")
			rep.StdioDaemon, err = bench.MCPStdio(exe, dir, "MCP over stdio, via the daemon, 1 client", duration, "CUSTODIAN_SERVER=unix://"+d.Socket())
			if err == nil {
				rep.MCP, rep.API, rep.Ratio, err = mcpVsAPI(progress, d.Socket(), d.Daemon, "", cs, duration, nil)
			}
			if cerr := d.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			progress("starting a custodian serve process…")
			sd, err := bench.StartServe(exe, dir)
			if err != nil {
				return err
			}
			var cpu [2][]time.Duration
			rep.ProcessMCP, rep.ProcessAPI, rep.ProcessRatio, err = mcpVsAPI(progress, bench.ServeSocket(dir), sd, "custodian serve process, ", cs, duration, &cpu)
			rep.ProcessMCPCPU, rep.ProcessAPICPU = cpu[0], cpu[1]
			if cerr := sd.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			return app.Render(rep, func(w io.Writer) error { return printMCPBench(w, &rep) })
		},
	}
	f := cmd.Flags()
	f.IntVar(&slices, "slices", 100, "slices in the manifest")
	f.StringVar(&clients, "clients", "1,16,64", "concurrent client counts over HTTP")
	f.DurationVar(&duration, "duration", 2*time.Second, "time spent on each measurement")
	return cmd
}

func at(ds []time.Duration, i int) time.Duration {
	if i < len(ds) {
		return ds[i]
	}
	return 0
}

func printMCPBench(w io.Writer, r *MCPBenchReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEASUREMENT\tCALLS/S\tP50\tP99\tVS API\tDAEMON CPU/CALL")
	row := func(res bench.Result, ratio string, cpu ...time.Duration) {
		c := ""
		if len(cpu) > 0 && cpu[0] > 0 {
			c = fmt.Sprintf("%dµs", cpu[0].Microseconds())
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\n", res.Name, res.PerSecond, cmdutil.Ms(res.P50), cmdutil.Ms(res.P99), ratio, c)
	}
	row(r.Stdio, "")
	row(r.StdioDaemon, "")
	for i := range r.MCP {
		row(r.MCP[i], fmt.Sprintf("%.2f×", r.Ratio[i]))
		row(r.API[i], "")
	}
	for i := range r.ProcessMCP {
		row(r.ProcessMCP[i], fmt.Sprintf("%.2f×", r.ProcessRatio[i]), at(r.ProcessMCPCPU, i))
		row(r.ProcessAPI[i], "", at(r.ProcessAPICPU, i))
	}
	return tw.Flush()
}
