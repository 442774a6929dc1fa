package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/monitor"
	"github.com/custodian-dev/custodian/store"
)

func init() { Register("monitor", newMonitorCmd) }

// ModeTimeout is the failure mode of an escalated silent agent (seed 004:
// "Agent timeout / crash").
const ModeTimeout = "AGENT_TIMEOUT"

// MonitorResult is what `custodian monitor --once --json` prints.
type MonitorResult struct {
	Revision uint64           `json:"revision"`
	Actions  []monitor.Action `json:"actions"`
	Notices  []string         `json:"notices,omitempty"` // escalation notice files written
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
		Long: `The pipeline monitor of seed 000: an agent whose heartbeat says ACTIVE but
that has been silent for longer than heartbeat.timeout (.asdd/config.yaml,
15m by default) gets a retry request, recorded on its heartbeat
(retry_requested_at, visible in ` + "`custodian status`" + `); if it stays silent for a
further timeout it is escalated: escalated_at on the heartbeat, a notice
under .asdd/escalations/ and a row in docs/agent-failure-log.md. A new
heartbeat clears both (with heartbeat.retries: 0 the escalation comes at the
first timeout).

--once checks once, for cron and CI; without it the check repeats --every
interval until interrupted (the daemon runs the same loop).`,
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

// monitorOnce evaluates the heartbeats and commits the actions. The
// evaluation runs inside the store update, on the latest manifest, so a
// heartbeat committed meanwhile is never overridden.
func monitorOnce(app *App, cmd *cobra.Command) (*MonitorResult, error) {
	cfg, err := asddConfig(app)
	if err != nil {
		return nil, err
	}
	if _, err := loadManifest(app, cmd); err != nil {
		return nil, err
	}
	st, err := app.Store()
	if err != nil {
		return nil, err
	}
	now := app.Now().UTC()
	res := &MonitorResult{Actions: []monitor.Action{}, Pending: []PendingAgent{}}
	var effs []asdd.Effect
	r, err := st.Update(app.Context(cmd), asdd.Key, func(cur store.Document) (store.Change, error) {
		m, err := asdd.Decode(cur.Value)
		if err != nil {
			return store.Change{}, corrupt(err)
		}
		acts := monitor.Evaluate(heartbeatsOf(m), policyOf(cfg), now)
		res.Actions, effs = acts, nil
		defer func() { res.Pending = pendingOf(m) }()
		if len(acts) == 0 {
			return store.Change{}, nil
		}
		rev := cur.Revision + 1
		m.Revision = rev
		var events []store.Event
		var summary []string
		for _, a := range acts {
			h := m.AgentHeartbeats[a.Agent]
			switch a.Kind {
			case monitor.RequestRetry:
				h.RetryRequestedAt = asdd.Timestamp(a.At)
			case monitor.Escalate:
				h.EscalatedAt = asdd.Timestamp(a.At)
				effs = append(effs, timeoutEscalation(m, a, cfg, rev)...)
			case monitor.Clear:
				h.RetryRequestedAt, h.EscalatedAt = "", ""
			}
			data, err := json.Marshal(a)
			if err != nil {
				return store.Change{}, fmt.Errorf("encode event: %w", err)
			}
			events = append(events, store.Event{Type: "heartbeat_" + string(a.Kind), Data: data})
			summary = append(summary, a.Agent+" "+string(a.Kind))
		}
		raw, err := asdd.Encode(m)
		if err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: raw, Actor: "custodian", Reason: "monitor: " + strings.Join(summary, ", "), Events: events}, nil
	})
	if err != nil {
		return nil, err
	}
	res.Revision = r.Revision
	if len(effs) > 0 {
		root, err := app.Root()
		if err != nil {
			return nil, err
		}
		p, err := effects.Open(root)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		if err := p.Apply(effs); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("committed revision %d, but: %v", r.Revision, err))
		}
		for _, e := range effs {
			if e.Kind == asdd.EffectWriteFile {
				res.Notices = append(res.Notices, e.Path)
			}
		}
	}
	return res, nil
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

// timeoutEscalation is the notice and failure-log row of an escalated silent
// agent.
func timeoutEscalation(m *asdd.Manifest, a monitor.Action, cfg *asdd.Config, rev uint64) []asdd.Effect {
	agent := strings.TrimSuffix(a.Agent, "_agent")
	id := fmt.Sprintf("ESC-TIMEOUT-%s-r%d", agent, rev)
	phase := "—"
	if s := m.Slice(a.Slice); s != nil {
		phase = s.Status
	}
	e := &asdd.Escalation{ID: id, Path: asdd.EscalationDir + "/" + id + ".md", FailureMode: ModeTimeout, Agent: agent, Phase: phase,
		Reason: a.Message, RouteTo: cfg.Escalation.RouteTo, RaisedAt: asdd.Timestamp(a.At), Status: asdd.EscalationOpen}
	var b strings.Builder
	fmt.Fprintf(&b, "# Escalation %s — Agent timeout / crash\n\n", id)
	fmt.Fprintf(&b, "- Status: %s\n- Failure mode category: Agent timeout / crash (%s)\n- Agent: %s (%s)\n", e.Status, ModeTimeout, agent, a.Agent)
	if a.Slice != "" {
		fmt.Fprintf(&b, "- Slice: %s (%s)\n", a.Slice, phase)
	}
	fmt.Fprintf(&b, "- Silent for: %s\n- Raised: %s\n- Routed to: %s\n", a.Silent.Round(time.Second), e.RaisedAt, strings.Join(e.RouteTo, ", "))
	fmt.Fprintf(&b, "\n## Reason\n\n%s\n\n## Resolution\n\nOpen. Restart or replace the agent; its next `custodian heartbeat` clears the escalation.\n", a.Message)
	return []asdd.Effect{
		{Kind: asdd.EffectWriteFile, Path: e.Path, Content: b.String()},
		{Kind: asdd.EffectUpsertRow, Path: asdd.FailureLogPath, Key: id, Content: asdd.FailureLogRow(e), Header: asdd.FailureLogHeader()},
	}
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
