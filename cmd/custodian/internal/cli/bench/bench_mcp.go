package bench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/serve"
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
	// MCPLean is the same calls from a lean client (plain JSON-RPC POSTs
	// with the session header, as agents' clients send them, not the Go
	// SDK's client), and LeanRatio its throughput over the API's: the
	// server's capacity, which the target is judged on.
	MCPLean   []bench.Result `json:"mcp_http_lean"`
	LeanRatio []float64      `json:"mcp_lean_vs_api"`
	// The same against a custodian serve process (the clients in this
	// one), as agents use it: the daemon's collector does not pay for the
	// clients' garbage.
	ProcessMCP       []bench.Result `json:"process_mcp_http"`
	ProcessMCPLean   []bench.Result `json:"process_mcp_http_lean"`
	ProcessAPI       []bench.Result `json:"process_api_http"`
	ProcessRatio     []float64      `json:"process_mcp_vs_api"`
	ProcessLeanRatio []float64      `json:"process_mcp_lean_vs_api"`
	// ProcessMCPCPU, ProcessMCPLeanCPU and ProcessAPICPU are the daemon
	// process's CPU time per call (user + system, from /proc; 0 where
	// there is none).
	ProcessMCPCPU     []time.Duration `json:"process_mcp_cpu_per_call_ns"`
	ProcessMCPLeanCPU []time.Duration `json:"process_mcp_lean_cpu_per_call_ns"`
	ProcessAPICPU     []time.Duration `json:"process_api_cpu_per_call_ns"`
}

// mcpRuns are the measurements of one daemon at each client count.
type mcpRuns struct {
	mcp, lean, api   []bench.Result
	ratio, leanRatio []float64
	cpu              [3][]time.Duration // daemon CPU per call: mcp, lean, api
}

// mcpVsAPI measures /mcp (the SDK's client and a lean client) and the
// HTTP API of one daemon with each client count, in turns (bench.
// Interleave), with the daemon's CPU time per call where it is a process.
func mcpVsAPI(progress func(string, ...any), sock string, d *bench.Daemon, prefix string, cs []int, duration time.Duration) (r mcpRuns, err error) {
	var cpu func() time.Duration
	if pid := d.Pid(); pid != 0 {
		cpu = func() time.Duration { return bench.ProcessCPU(pid) }
	}
	for _, c := range cs {
		progress("measuring %s/mcp (SDK and lean clients) and the HTTP API in turns, %d client(s)…", prefix, c)
		rs, perCall, err := measureLoads(prefix, duration, cpu,
			func() (bench.Load, error) { return bench.MCPHTTPLoad(sock, c) },
			func() (bench.Load, error) { return bench.MCPHTTPLeanLoad(sock, c) },
			func() (bench.Load, error) { return bench.APILoad(d, c) })
		if err != nil {
			return r, err
		}
		for i := range r.cpu {
			r.cpu[i] = append(r.cpu[i], perCall[i])
		}
		r.mcp, r.lean, r.api = append(r.mcp, rs[0]), append(r.lean, rs[1]), append(r.api, rs[2])
		r.ratio, r.leanRatio = append(r.ratio, ratio(rs[0], rs[2])), append(r.leanRatio, ratio(rs[1], rs[2]))
	}
	return r, nil
}

// measureLoads opens the loads, measures each for duration in all, in
// four turns, and closes them.
func measureLoads(prefix string, duration time.Duration, cpu func() time.Duration, opens ...func() (bench.Load, error)) ([]bench.Result, []time.Duration, error) {
	var loads []bench.Load
	defer func() {
		for _, l := range loads {
			l.Close()
		}
	}()
	for _, open := range opens {
		l, err := open()
		if err != nil {
			return nil, nil, err
		}
		l.Name = prefix + l.Name
		loads = append(loads, l)
	}
	return bench.Interleave(loads, duration, 4, cpu)
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
session per client, from two clients: the Go SDK's, and a lean one sending
plain JSON-RPC POSTs with the session header as agents' clients do (the
server's capacity). Each is measured in turns with the same operation over
the daemon's HTTP API (POST /v1/asdd/heartbeat) with as many clients, so
that all see the same machine. Then all again against a separate custodian
serve process (the clients stay in this one), as agents use it, with the
daemon process's CPU time per call (from
/proc). Scratch files live under the project root (-C) and are removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, exe, tmp, progress, done, err := benchSetup(app, clients)
			if err != nil {
				return err
			}
			defer done()
			dir, err := seeded(tmp, "project", slices)
			if err != nil {
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
				var r mcpRuns
				r, err = mcpVsAPI(progress, d.Socket(), d.Daemon, "", cs, duration)
				rep.MCP, rep.MCPLean, rep.API, rep.Ratio, rep.LeanRatio = r.mcp, r.lean, r.api, r.ratio, r.leanRatio
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
			r, err := mcpVsAPI(progress, bench.ServeSocket(dir), sd, "custodian serve process, ", cs, duration)
			rep.ProcessMCP, rep.ProcessMCPLean, rep.ProcessAPI, rep.ProcessRatio, rep.ProcessLeanRatio = r.mcp, r.lean, r.api, r.ratio, r.leanRatio
			rep.ProcessMCPCPU, rep.ProcessMCPLeanCPU, rep.ProcessAPICPU = r.cpu[0], r.cpu[1], r.cpu[2]
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
		if i < len(r.MCPLean) {
			row(r.MCPLean[i], fmt.Sprintf("%.2f×", r.LeanRatio[i]))
		}
		row(r.API[i], "")
	}
	for i := range r.ProcessMCP {
		row(r.ProcessMCP[i], fmt.Sprintf("%.2f×", r.ProcessRatio[i]), at(r.ProcessMCPCPU, i))
		if i < len(r.ProcessMCPLean) {
			row(r.ProcessMCPLean[i], fmt.Sprintf("%.2f×", r.ProcessLeanRatio[i]), at(r.ProcessMCPLeanCPU, i))
		}
		row(r.ProcessAPI[i], "", at(r.ProcessAPICPU, i))
	}
	return tw.Flush()
}
