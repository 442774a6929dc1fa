package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// custodian impl: a drop-in for the principled-implementation plugin's
// task-manifest.sh (seed 001). It takes the script's arguments verbatim and
// prints what the script prints; errors go to stderr as "Error: ..." with
// exit status 1. Every change is a store commit on .impl/manifest.json.

func init() { Register("impl", newImplCmd) }

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

func newImplCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:                "impl --OPERATION [options]",
		Short:              "The .impl/manifest.json task manifest (drop-in for task-manifest.sh)",
		Long:               "Operate on the task manifest of seed 001 with task-manifest.sh's arguments, output and exit codes.\n\n" + implUsage,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImpl(app, app.Context(cmd), args)
		},
	}
}

// runImpl parses and runs one invocation. Every failure is printed here as
// the script prints it and ends the process with status 1.
func runImpl(app *App, ctx context.Context, argv []string) error {
	a, err := impl.ParseArgs(argv)
	if err == nil {
		if a.Dir != "" {
			app.Dir = a.Dir
		}
		if a.JSON {
			app.JSON = true
		}
		if a.Op == impl.OpHelp {
			_, err = io.WriteString(app.Out, implUsage)
			return err
		}
		err = implOp(app, ctx, a)
	}
	if err == nil {
		return nil
	}
	if app.JSON {
		e, ok := reason.As(err)
		if !ok {
			e = &reason.Error{Code: "INTERNAL", Message: err.Error()}
		}
		_ = WriteJSON(app.Out, map[string]any{"error": e})
	} else {
		fmt.Fprintf(app.Err, "Error: %s\n", implMessage(err))
	}
	return &ExitError{Code: 1}
}

func implMessage(err error) string {
	if e, ok := err.(*reason.Error); ok {
		return e.Message
	}
	return err.Error()
}

// errNoManifest is the script's complaint about a missing manifest.
var errNoManifest = reason.New(reason.NotFound, "manifest not found at %s. Run --init first.", impl.Key)

func implOp(app *App, ctx context.Context, a impl.Args) error {
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

// implLoad reads the manifest through the store (which applies recovery).
func implLoad(app *App, ctx context.Context) (*impl.Manifest, error) {
	st, err := app.Store()
	if err != nil {
		return nil, err
	}
	doc, err := st.Get(ctx, impl.Key)
	if err != nil {
		if errors.Is(err, reason.NotFound) {
			return nil, errNoManifest
		}
		return nil, err
	}
	return impl.Decode(doc.Value)
}

// implUpdate commits f's change to the manifest. f runs on a freshly decoded
// manifest each time the store calls it; an error from f commits nothing.
func implUpdate(app *App, ctx context.Context, why string, f func(m *impl.Manifest) ([]store.Event, error)) (store.Result, error) {
	st, err := app.Store()
	if err != nil {
		return store.Result{}, err
	}
	actor := Actor("")
	return st.Update(ctx, impl.Key, func(cur store.Document) (store.Change, error) {
		if !cur.Exists() {
			return store.Change{}, errNoManifest
		}
		m, err := impl.Decode(cur.Value)
		if err != nil {
			return store.Change{}, err
		}
		events, err := f(m)
		if err != nil {
			return store.Change{}, err
		}
		v, err := impl.Encode(m)
		if err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: v, Actor: actor, Reason: why, Events: events}, nil
	}, store.Create())
}

func implEvent(typ string, data any) []store.Event {
	b, err := json.Marshal(data)
	if err != nil {
		return []store.Event{{Type: typ}}
	}
	return []store.Event{{Type: typ, Data: b}}
}

// implPlanHash is the plan document's hash now, "" when it cannot be read
// (the path is relative to the project root, or absolute).
func implPlanHash(app *App, planPath string) string {
	root, err := app.Root()
	if err != nil || planPath == "" {
		return ""
	}
	p := planPath
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, filepath.FromSlash(p))
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// implPlanStale reports a plan changed since decomposition (seed 001).
func implPlanStale(app *App, m *impl.Manifest) *impl.PlanChange {
	if m.Plan.SHA256 == "" {
		return nil
	}
	return m.PlanStale(implPlanHash(app, m.Plan.Path))
}

func implInit(app *App, ctx context.Context, a impl.Args, now time.Time) error {
	m, err := impl.New(a.PlanPath, a.PlanNumber, a.PlanTitle, now)
	if err != nil {
		return err
	}
	// The plan's hash at decomposition: --stale, --summary and --continue
	// report a plan modified since.
	m.Plan.SHA256 = implPlanHash(app, a.PlanPath)
	v, err := impl.Encode(m)
	if err != nil {
		return err
	}
	st, err := app.Store()
	if err != nil {
		return err
	}
	why := fmt.Sprintf("init plan %s (%s)", a.PlanNumber, a.PlanPath)
	res, err := st.Update(ctx, impl.Key, func(cur store.Document) (store.Change, error) {
		if cur.Exists() && !a.Force {
			return store.Change{}, reason.New(reason.InvalidInput, "manifest already exists at %s. Use --force to overwrite.", impl.Key)
		}
		return store.Change{Value: v, Actor: Actor(""), Reason: why, Events: implEvent("impl.init", map[string]any{"plan": a.PlanNumber, "force": a.Force})}, nil
	}, store.Create())
	if err != nil {
		return err
	}
	msg := "Manifest initialized at " + impl.Key
	return app.Render(map[string]any{"manifest": impl.Key, "revision": res.Revision, "message": msg}, implLines(msg))
}

func implAddTask(app *App, ctx context.Context, a impl.Args, now time.Time) error {
	// As in the script, a missing manifest is reported before bad
	// arguments: the arguments are checked inside the update, after the
	// store has found the manifest.
	var nt impl.NewTask
	why := fmt.Sprintf("add-task %s to phase %s", a.TaskID, a.Phase)
	res, err := implUpdate(app, ctx, why, func(m *impl.Manifest) ([]store.Event, error) {
		if a.TaskID == "" || a.Phase == "" || a.Description == "" {
			return nil, reason.New(reason.InvalidInput, "--add-task requires --task-id, --phase, and --description")
		}
		phase, err := impl.ParsePhase(a.Phase)
		if err != nil {
			return nil, err
		}
		deps, err := impl.ParseDependsOn(a.DependsOn)
		if err != nil {
			return nil, err
		}
		nt = impl.NewTask{ID: a.TaskID, Phase: phase, Description: a.Description, DependsOn: deps, BoundedContexts: impl.ParseBoundedContexts(a.BoundedContexts)}
		if err := m.AddTask(nt, now); err != nil {
			return nil, err
		}
		return implEvent("impl.task_added", map[string]any{"id": nt.ID, "phase": nt.Phase}), nil
	})
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Added task %s to phase %d", nt.ID, nt.Phase)
	return app.Render(map[string]any{"id": nt.ID, "phase": nt.Phase, "revision": res.Revision, "message": msg}, implLines(msg))
}

func implUpdateStatus(app *App, ctx context.Context, a impl.Args, now time.Time) error {
	var tr impl.Transition
	res, err := implUpdate(app, ctx, fmt.Sprintf("update-status %s to %s", a.TaskID, a.Status), func(m *impl.Manifest) ([]store.Event, error) {
		if a.TaskID == "" || a.Status == "" {
			return nil, reason.New(reason.InvalidInput, "--update-status requires --task-id and --status")
		}
		status, err := impl.ParseStatus(a.Status)
		if err != nil {
			return nil, err
		}
		u := impl.StatusUpdate{ID: a.TaskID, Status: status, Branch: a.Branch, CheckResults: a.CheckResults, Error: a.Error}
		if tr, err = m.UpdateStatus(u, now); err != nil {
			return nil, err
		}
		return implEvent("impl.status_changed", tr), nil
	})
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Task %s status updated to %s", tr.ID, tr.To)
	return app.Render(map[string]any{"transition": tr, "revision": res.Revision, "message": msg}, implLines(msg))
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
