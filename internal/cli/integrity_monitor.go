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

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/monitor"
	"github.com/custodian-dev/custodian/reason"
)

// MonitorResult is what `custodian monitor --once --json` prints.
type MonitorResult struct {
	Revision uint64           `json:"revision"`
	Actions  []monitor.Action `json:"actions"`
	Notices  []string         `json:"notices,omitempty"` // escalation notice files written
	Halted   []string         `json:"halted,omitempty"`  // slices halted by an escalation
	// Pending lists agents whose retry request or escalation still stands.
	Pending  []PendingAgent `json:"pending"`
	Warnings []string       `json:"warnings,omitempty"`
}

// PendingAgent is a silent agent the monitor already acted on.
type PendingAgent struct {
	Agent            string `json:"agent"`
	Slice            string `json:"current_slice,omitempty"`
	LastExecution    string `json:"last_execution"`
	RetryRequestedAt string `json:"retry_requested_at,omitempty"`
	EscalatedAt      string `json:"escalated_at,omitempty"`
}

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

// heartbeatsOf converts the manifest's heartbeats for the monitor.
func heartbeatsOf(m *asdd.Manifest) []monitor.Heartbeat {
	var out []monitor.Heartbeat
	for _, k := range sortedKeys(m.AgentHeartbeats) {
		h := m.AgentHeartbeats[k]
		mh := monitor.Heartbeat{Agent: k, Status: h.Status, Slice: h.CurrentSlice, Wave: h.CurrentWave, TasksDone: h.TasksCompleted, TasksRemaining: h.TasksRemaining}
		mh.Last, _ = asdd.ParseTimestamp(h.LastExecution)
		mh.RetryRequested, _ = asdd.ParseTimestamp(h.RetryRequestedAt)
		mh.Escalated, _ = asdd.ParseTimestamp(h.EscalatedAt)
		out = append(out, mh)
	}
	return out
}

func policyOf(cfg *asdd.Config) monitor.Policy {
	return monitor.Policy{Timeout: cfg.Heartbeat.Timeout.D(), Retries: cfg.Heartbeat.Retries}
}

// monitorOnce decides with monitor.Evaluate which silent agents need a
// retry request or an escalation, and commits each through the rules
// (asdd.AgentTimeout: the retry marker, or the escalation marker and a halt
// of the agent's slice with its notice and failure-log row), one store
// update per agent, each re-checked against the latest manifest. Markers
// left on a heartbeat that spoke again (or left ACTIVE) without clearing
// them are cleared.
func monitorOnce(app *App, cmd *cobra.Command) (*MonitorResult, error) {
	cfg, err := asddConfig(app)
	if err != nil {
		return nil, err
	}
	m, err := loadManifest(app, cmd)
	if err != nil {
		return nil, err
	}
	now := app.Now().UTC()
	res := &MonitorResult{Actions: []monitor.Action{}, Pending: []PendingAgent{}, Revision: m.Revision}
	last := m
	for _, a := range monitor.Evaluate(heartbeatsOf(m), policyOf(cfg), now) {
		if a.Kind == monitor.Clear {
			r, cleared, err := clearMarkers(app, cmd, a, cfg)
			if err != nil {
				return nil, err
			}
			if cleared {
				res.Actions, res.Revision = append(res.Actions, a), r
			}
			continue
		}
		out, r, err := applyOp(app, cmd, asdd.AgentTimeout{Agent: strings.TrimSuffix(a.Agent, "_agent")}, false)
		if code := reason.CodeOf(err); code == reason.InvalidTransition || code == reason.InvalidInput {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %v", a.Agent, err))
			continue
		} else if err != nil {
			return nil, err
		}
		// Report what the rules did, which is what the monitor asked for
		// unless the state moved meanwhile.
		for _, e := range out.Events {
			switch e.Type {
			case "retry_requested":
				a.Kind = monitor.RequestRetry
			case "agent_escalated":
				a.Kind = monitor.Escalate
			}
		}
		res.Actions, res.Revision, last = append(res.Actions, a), r.Revision, out.Manifest
		if out.Verdict != nil && a.Slice != "" {
			res.Halted = append(res.Halted, a.Slice)
		}
		for _, e := range r.Effects {
			if e.Kind == asdd.EffectWriteFile {
				res.Notices = append(res.Notices, e.Path)
			}
		}
		res.Warnings = append(res.Warnings, r.Warnings...)
	}
	if len(res.Actions) > 0 {
		if last, err = loadManifest(app, cmd); err != nil {
			return nil, err
		}
	}
	res.Pending = pendingOf(last)
	return res, nil
}

// clearMarkers removes the retry and escalation markers of a heartbeat the
// monitor found stale, through the rules (asdd.ClearMarkers re-checks
// against the latest manifest that they still are).
func clearMarkers(app *App, cmd *cobra.Command, a monitor.Action, _ *asdd.Config) (uint64, bool, error) {
	_, r, err := applyOp(app, cmd, asdd.ClearMarkers{Heartbeat: a.Agent}, false)
	switch reason.CodeOf(err) {
	case "":
	case reason.InvalidTransition, reason.NotFound:
		return 0, false, nil // the state moved meanwhile
	default:
		return 0, false, err
	}
	return r.Revision, r.Committed, nil
}

// pendingOf lists the heartbeats that carry a retry request or escalation.
func pendingOf(m *asdd.Manifest) []PendingAgent {
	out := []PendingAgent{}
	for _, k := range sortedKeys(m.AgentHeartbeats) {
		h := m.AgentHeartbeats[k]
		if h.RetryRequestedAt != "" || h.EscalatedAt != "" {
			out = append(out, PendingAgent{Agent: k, Slice: h.CurrentSlice, LastExecution: h.LastExecution, RetryRequestedAt: h.RetryRequestedAt, EscalatedAt: h.EscalatedAt})
		}
	}
	return out
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
