package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/monitor"
)

func init() { Register("monitor", newMonitorCmd) }

// MonitorResult is what `custodian monitor --once --json` prints.
type MonitorResult = appl.MonitorResult

// PendingAgent is a silent agent the monitor already acted on.
type PendingAgent = appl.PendingAgent

func newMonitorCmd(app *App) *cobra.Command {
	var once bool
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "monitor [--once | --every 1m]",
		Short: "Flag silent ACTIVE agents: a retry request first, then an escalation",
		Long: `The pipeline monitor of seed 000 ("Agent timeout / crash: retry once; then
escalate to TL", seed 004): an agent whose heartbeat says ACTIVE but that has
been silent for longer than heartbeat.timeout (.asdd/config.yaml, 15m by
default) gets a retry request, recorded on its heartbeat (retry_requested_at);
if it stays silent for a further timeout it is escalated: escalated_at on the
heartbeat, and the slice it was working on halts (failure mode AGENT_TIMEOUT)
with an escalation notice under .asdd/escalations/ and a row in
docs/agent-failure-log.md. A new heartbeat clears the markers (with
heartbeat.retries: 0 the escalation comes at the first timeout).

--once checks once, for cron and CI; without it the check repeats --every
interval until interrupted (custodian serve runs the same loop).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if once {
				res, err := monitorOnce(app, cmd)
				if err != nil {
					return err
				}
				return app.Render(res, func(w io.Writer) error { return printMonitor(w, res, app.Now()) })
			}
			if every <= 0 {
				return fmt.Errorf("--every must be positive")
			}
			ctx, stop := signal.NotifyContext(app.Context(cmd), os.Interrupt)
			defer stop()
			err := monitor.Loop(ctx, every, nil, func(ctx context.Context) error {
				res, err := monitorOnce(app, cmd)
				if err != nil {
					return err
				}
				if len(res.Actions) == 0 {
					return nil
				}
				return app.Render(res, func(w io.Writer) error { return printMonitor(w, res, app.Now()) })
			})
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&once, "once", false, "check once and exit")
	cmd.Flags().DurationVar(&every, "every", time.Minute, "how often to check without --once")
	return cmd
}

// monitorOnce is one pass of the heartbeat monitor through the
// application layer (app.MonitorOnce).
func monitorOnce(app *App, cmd *cobra.Command) (*MonitorResult, error) {
	cfg, err := asddConfig(app)
	if err != nil {
		return nil, err
	}
	svc, err := app.Service()
	if err != nil {
		return nil, err
	}
	res, err := appl.MonitorOnce(app.Context(cmd), svc, cfg, app.Now())
	return res, noManifestHint(err)
}

func printMonitor(w io.Writer, res *MonitorResult, now time.Time) error {
	for _, a := range res.Actions {
		fmt.Fprintf(w, "%-16s %s\n", a.Kind, a.Message)
	}
	for _, p := range res.Pending {
		state := "retry requested at " + p.RetryRequestedAt
		if p.EscalatedAt != "" {
			state = "escalated at " + p.EscalatedAt
		}
		fmt.Fprintf(w, "pending          %s silent since %s: %s\n", p.Agent, p.LastExecution, state)
	}
	if len(res.Actions) == 0 {
		if len(res.Pending) == 0 {
			_, err := fmt.Fprintln(w, "every ACTIVE agent has sent a heartbeat within its timeout")
			return err
		}
		_, err := fmt.Fprintln(w, "nothing new to do")
		return err
	}
	for _, id := range res.Halted {
		fmt.Fprintf(w, "halted %s: AGENT_TIMEOUT; resolve it as any halt (custodian resolve %s --role ROLE --rationale TEXT)\n", id, id)
	}
	for _, n := range res.Notices {
		fmt.Fprintf(w, "notice: %s\n", n)
	}
	for _, wmsg := range res.Warnings {
		fmt.Fprintf(w, "warning: %s\n", wmsg)
	}
	_, err := fmt.Fprintf(w, "revision %d\n", res.Revision)
	return err
}

// newTable is the tab writer integrity commands print tables with.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// progress draws a progress bar on a terminal's stderr; elsewhere it stays
// silent so that output is stable.
type progressBar struct {
	w     io.Writer
	label string
	on    bool
	last  int
}

func newProgress(app *App, label string) *progressBar {
	return &progressBar{w: app.Err, label: label, on: app.IsTTY && isTerminal(app.Err)}
}

func (p *progressBar) update(done, total int) {
	if !p.on || total == 0 {
		return
	}
	pct := done * 100 / total
	if pct == p.last && done != total {
		return
	}
	p.last = pct
	const width = 30
	fill := done * width / total
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d files", p.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total)
}

func (p *progressBar) done() {
	if p.on && p.last > 0 {
		fmt.Fprintln(p.w)
	}
}
