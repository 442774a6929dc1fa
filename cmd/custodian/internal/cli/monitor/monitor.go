package monitor

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/monitor"
)

// MonitorResult is what `custodian monitor --once --json` prints.
type MonitorResult = appl.MonitorResult

// PendingAgent is a silent agent the monitor already acted on.
type PendingAgent = appl.PendingAgent

// Options is what `custodian monitor` was asked to do.
type Options struct {
	App   *cmdutil.App
	Once  bool          // check once and exit
	Every time.Duration // how often to check without Once
}

// NewCmd returns `custodian monitor`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
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
			if !opts.Once && opts.Every <= 0 {
				return fmt.Errorf("--every must be positive")
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmd.Flags().BoolVar(&opts.Once, "once", false, "check once and exit")
	cmd.Flags().DurationVar(&opts.Every, "every", time.Minute, "how often to check without --once")
	return cmd
}

// run checks once, or every Every until interrupted, printing what each
// pass did.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	if opts.Once {
		res, err := monitorOnce(ctx, app)
		if err != nil {
			return err
		}
		return app.Render(res, func(w io.Writer) error { return printMonitor(w, res, app.Now()) })
	}
	// An interrupt stops the loop between passes; a pass under way
	// finishes (it runs under the command's context).
	passCtx := ctx
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	err := monitor.Loop(ctx, opts.Every, nil, func(context.Context) error {
		res, err := monitorOnce(passCtx, app)
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
}

// monitorOnce is one pass of the heartbeat monitor through the
// application layer (app.MonitorOnce).
func monitorOnce(ctx context.Context, app *cmdutil.App) (*MonitorResult, error) {
	cfg, err := cmdutil.ASDDConfig(app)
	if err != nil {
		return nil, err
	}
	svc, err := app.Service()
	if err != nil {
		return nil, err
	}
	res, err := appl.MonitorOnce(ctx, svc, cfg, app.Now())
	return res, err
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
