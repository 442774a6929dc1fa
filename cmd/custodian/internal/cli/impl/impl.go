package impl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// custodian impl: a drop-in for the principled-implementation plugin's
// task-manifest.sh (seed 001). It takes the script's arguments verbatim and
// prints what the script prints; errors go to stderr as "Error: ..." with
// exit status 1. Every change is a store commit on .impl/manifest.json.

const implUsage = `Usage:
  custodian impl --init --plan-path <path> --plan-number <num> --plan-title "<title>" [--force]
  custodian impl --add-task --task-id <id> --phase <N> --description "<desc>" \
                 [--depends-on "<phases>"] [--bounded-contexts "<BCs>"]
  custodian impl --get-task --task-id <id>
  custodian impl --get-plan-path
  custodian impl --update-status --task-id <id> --status <status> \
                 [--branch <name>] [--check-results "<text>"] [--error "<text>"]
  custodian impl --list-tasks [--phase <N>] [--status <status>]
  custodian impl --phase-status --phase <N>
  custodian impl --summary
  custodian impl --continue      where to resume: phase, status, runnable tasks
  custodian impl --ready         every task that may start now
  custodian impl --stale [--base <branch>]
                                 tasks whose branch is missing or already merged

Manifest location: .impl/manifest.json (relative to -C DIR, default the
current directory). Valid statuses: pending, in_progress, validating,
passed, failed, merged, abandoned, conflict. --json prints JSON instead.
Exit codes: 0 success, 1 error (message on stderr).
`

// NewCmd returns `custodian impl`. It parses task-manifest.sh's command
// line into impl.Args (impl.ParseArgs) and calls runF with them (the
// operation, when runF is nil); a failure of either is printed as the
// script prints it.
func NewCmd(app *cmdutil.App, runF func(context.Context, *cmdutil.App, impl.Args) error) *cobra.Command {
	if runF == nil {
		runF = implOp
	}
	return &cobra.Command{
		Use:                "impl --OPERATION [options]",
		Short:              "The .impl/manifest.json task manifest (drop-in for task-manifest.sh)",
		Long:               "Operate on the task manifest of seed 001 with task-manifest.sh's arguments, output and exit codes.\n\n" + implUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImpl(app, app.Context(cmd), args, runF)
		},
	}
}

// runImpl parses and runs one invocation. Every failure is printed here as
// the script prints it and ends the process with status 1.
func runImpl(app *cmdutil.App, ctx context.Context, argv []string, runF func(context.Context, *cmdutil.App, impl.Args) error) error {
	a, err := impl.ParseArgs(argv)
	if err == nil {
		if a.Dir != "" {
			app.Dir = a.Dir
		}
		if a.JSON {
			app.JSON = true
		}
		if a.Server != "" {
			app.ServerURL = a.Server
		}
		if a.Store != "" {
			app.StoreURL = a.Store
		}
		if a.Op == impl.OpHelp {
			_, err = io.WriteString(app.Out, implUsage)
			return err
		}
		err = runF(ctx, app, a)
	}
	if err == nil {
		return nil
	}
	if app.JSON {
		e, ok := reason.As(err)
		if !ok {
			e = &reason.Error{Code: "INTERNAL", Message: err.Error()}
		}
		_ = cmdutil.WriteJSON(app.Out, map[string]any{"error": e})
	} else {
		fmt.Fprintf(app.Err, "Error: %s\n", implMessage(err))
	}
	return &cmdutil.ExitError{Code: 1}
}

func implMessage(err error) string {
	if e, ok := err.(*reason.Error); ok {
		return e.Message
	}
	return err.Error()
}

// implOp runs one parsed operation.
func implOp(ctx context.Context, app *cmdutil.App, a impl.Args) error {
	now := app.Now()
	switch a.Op {
	case impl.OpInit:
		return implInit(app, ctx, a, now)
	case impl.OpAddTask:
		return implAddTask(app, ctx, a, now)
	case impl.OpUpdateStatus:
		return implUpdateStatus(app, ctx, a, now)
	}
	m, err := implLoad(app, ctx)
	if err != nil {
		return err
	}
	switch a.Op {
	case impl.OpGetPlanPath:
		return app.Render(map[string]string{"path": m.Plan.Path}, implLines(m.Plan.Path))
	case impl.OpGetTask:
		t, err := m.Task(a.TaskID)
		if err != nil {
			if a.TaskID == "" {
				return reason.New(reason.InvalidInput, "--get-task requires --task-id")
			}
			return err
		}
		return app.Render(t, implLines(impl.TaskLines(*t)...))
	case impl.OpListTasks:
		var f impl.Filter
		if a.Phase != "" {
			n, err := impl.ParsePhase(a.Phase)
			if err != nil {
				return err
			}
			f.Phase = &n
		}
		if a.Status != "" {
			s, err := impl.ParseStatus(a.Status)
			if err != nil {
				return err
			}
			f.Status = s
		}
		tasks := m.List(f)
		return app.Render(tasks, implTaskLines(tasks))
	case impl.OpPhaseStatus:
		if a.Phase == "" {
			return reason.New(reason.InvalidInput, "--phase-status requires --phase")
		}
		n, err := impl.ParsePhase(a.Phase)
		if err != nil {
			return err
		}
		ps := m.PhaseStatus(n)
		return app.Render(implCountsJSON([]implKV{{"phase", ps.Phase}, {"total", ps.Total}}, ps.Counts), implLines(impl.PhaseStatusLines(ps)...))
	case impl.OpSummary:
		s := m.Summary()
		head := []implKV{{"plan_title", s.PlanTitle}, {"plan_number", s.PlanNumber}, {"total_phases", s.TotalPhases}, {"total_tasks", s.TotalTasks}}
		lines := impl.SummaryLines(s)
		if c := implPlanStale(app, m); c != nil {
			head = append(head, implKV{"plan_stale", c})
			lines = append(lines, c.Line())
		}
		return app.Render(implCountsJSON(head, s.Counts), implLines(lines...))
	case impl.OpContinue:
		r := m.Continue()
		r.PlanStale = implPlanStale(app, m)
		lines := impl.ResumeLines(r)
		if r.PlanStale != nil {
			lines = append(lines, r.PlanStale.Line())
		}
		return app.Render(r, implLines(lines...))
	case impl.OpReady:
		tasks := m.Ready()
		return app.Render(tasks, implTaskLines(tasks))
	case impl.OpStale:
		root, err := app.Root()
		if err != nil {
			return err
		}
		stale, err := m.Stale(&impl.Git{Dir: root, Base: a.Base})
		if err != nil {
			return err
		}
		out := make([]string, len(stale))
		for i, s := range stale {
			out[i] = impl.StaleLine(s)
		}
		if c := implPlanStale(app, m); c != nil {
			stale = append(stale, impl.StaleTask{ID: "plan", Plan: c})
			out = append(out, c.Line())
		}
		return app.Render(stale, implLines(out...))
	}
	return reason.New(reason.InvalidInput, "unknown operation '%s'", a.Op)
}

// implLoad reads the manifest through the application layer (the store
// applies recovery).
func implLoad(app *cmdutil.App, ctx context.Context) (*impl.Manifest, error) {
	svc, err := app.Service()
	if err != nil {
		return nil, err
	}
	m, _, err := svc.ImplManifest(ctx)
	return m, err
}

// implChange runs a change of the manifest through the application layer,
// which checks the arguments as the script does.
func implChange(app *cmdutil.App, ctx context.Context, a impl.Args) (*wire.ImplResponse, error) {
	svc, err := app.Service()
	if err != nil {
		return nil, err
	}
	return svc.Impl(ctx, wire.ImplRequestOf(a, cmdutil.Actor("")))
}

func implInit(app *cmdutil.App, ctx context.Context, a impl.Args, _ time.Time) error {
	r, err := implChange(app, ctx, a)
	if err != nil {
		return err
	}
	return app.Render(map[string]any{"manifest": impl.Key, "revision": r.Revision, "message": r.Message}, implLines(r.Message))
}

func implAddTask(app *cmdutil.App, ctx context.Context, a impl.Args, _ time.Time) error {
	r, err := implChange(app, ctx, a)
	if err != nil {
		return err
	}
	return app.Render(map[string]any{"id": r.ID, "phase": r.Phase, "revision": r.Revision, "message": r.Message}, implLines(r.Message))
}

// implPlanStale reports a plan changed since decomposition (seed 001).
func implPlanStale(app *cmdutil.App, m *impl.Manifest) *impl.PlanChange {
	if m.Plan.SHA256 == "" {
		return nil
	}
	root, err := app.Root()
	if err != nil {
		return nil
	}
	return m.PlanStale(appl.PlanHash(root, m.Plan.Path))
}

func implUpdateStatus(app *cmdutil.App, ctx context.Context, a impl.Args, _ time.Time) error {
	r, err := implChange(app, ctx, a)
	if err != nil {
		return err
	}
	return app.Render(map[string]any{"transition": r.Transition, "revision": r.Revision, "message": r.Message}, implLines(r.Message))
}

// implLines renders text lines, each ended by a newline.
func implLines(ls ...string) func(io.Writer) error {
	return func(w io.Writer) error {
		if len(ls) == 0 {
			return nil
		}
		_, err := io.WriteString(w, strings.Join(ls, "\n")+"\n")
		return err
	}
}

func implTaskLines(ts []impl.Task) func(io.Writer) error {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = impl.TaskLine(t)
	}
	return implLines(out...)
}

type implKV struct {
	k string
	v any
}

// implCountsJSON is the --json form of --phase-status and --summary: the
// head fields then one count per status, in the text output's order.
func implCountsJSON(head []implKV, counts []impl.Count) json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	kvs := head
	for _, c := range counts {
		kvs = append(kvs, implKV{string(c.Status), c.N})
	}
	for i, kv := range kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.k)
		v, _ := json.Marshal(kv.v)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}
