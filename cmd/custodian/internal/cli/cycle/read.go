package cycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/wire"
)

// The commands that read a cycle (show, list, signal) or write what is
// derived from it (sync): an Options struct each, a NewXCmd that parses
// the command line into it, and a runX that does the work.

// ShowOptions is what `custodian cycle show` was asked to do.
type ShowOptions struct {
	App *cmdutil.App
	ID  string
}

func newShowCmd(app *cmdutil.App, runF func(context.Context, *ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{App: app}
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show a cycle (--json: the whole document)",
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return runF(app.Context(cmd), opts)
		},
	}
}

func runShow(ctx context.Context, opts *ShowOptions) error {
	st, _, err := load(ctx, opts.App, opts.ID)
	if err != nil {
		return err
	}
	return opts.App.Render(st, func(w io.Writer) error { return showText(w, st) })
}

// ListOptions is what `custodian cycle list` was asked to do.
type ListOptions struct {
	App *cmdutil.App
}

func newListCmd(app *cmdutil.App, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{App: app}
	return &cobra.Command{
		Use:   "list",
		Short: "List the cycles",
		Args:  cmdutil.ExactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(app.Context(cmd), opts)
		},
	}
}

// cycleSummary is one row of cycle list.
type cycleSummary struct {
	CycleID          string `json:"cycle_id"`
	Status           string `json:"status"`
	CurrentIteration int    `json:"current_iteration"`
	MaxIterations    int    `json:"max_iterations"`
	CurrentPhase     string `json:"current_phase"`
	Title            string `json:"title"`
	UpdatedAt        string `json:"updated_at"`
	Error            string `json:"error,omitempty"`
}

func runList(ctx context.Context, opts *ListOptions) error {
	app := opts.App
	ids, err := cycleIDs(ctx, app)
	if err != nil {
		return err
	}
	rows := []cycleSummary{}
	for _, id := range ids {
		st, _, err := load(ctx, app, id)
		if err != nil {
			rows = append(rows, cycleSummary{CycleID: id, Status: "error", Error: messageOf(err)})
			continue
		}
		rows = append(rows, cycleSummary{CycleID: id, Status: st.Status, CurrentIteration: st.CurrentIteration,
			MaxIterations: st.MaxIterations, CurrentPhase: st.CurrentPhase, Title: st.Title, UpdatedAt: st.UpdatedAt})
	}
	return app.Render(rows, func(w io.Writer) error {
		if len(rows) == 0 {
			_, err := fmt.Fprintln(w, "No cycles.")
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tITERATION\tPHASE\tTITLE")
		for _, r := range rows {
			if r.Error != "" {
				fmt.Fprintf(tw, "%s\terror\t\t\t%s\n", r.CycleID, r.Error)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", r.CycleID, r.Status, r.CurrentIteration, r.MaxIterations, r.CurrentPhase, r.Title)
		}
		return tw.Flush()
	})
}

// cycleIDs lists the cycles: every <id>.json in the cycle directory, and
// every cycle the store has a journal for.
func cycleIDs(ctx context.Context, app *cmdutil.App) ([]string, error) {
	seen := map[string]bool{}
	root, err := openRoot(app)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	ents, err := fs.ReadDir(root.FS(), cycle.Dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list cycles: %w", err)
	}
	for _, e := range ents {
		if id, ok := cycle.IDFromKey(path.Join(cycle.Dir, e.Name())); ok && e.Type().IsRegular() {
			seen[id] = true
		}
	}
	svc, err := app.Service()
	if err != nil {
		return nil, err
	}
	keys, err := svc.Keys(ctx)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if id, ok := cycle.IDFromKey(k); ok {
			seen[id] = true
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// SignalOptions is what `custodian cycle signal` was asked to do.
type SignalOptions struct {
	App     *cmdutil.App
	ID      string
	Wait    bool          // while paused, wait for a resume or a stop
	Timeout time.Duration // with Wait: give up after this long (0: never)
}

func newSignalCmd(app *cmdutil.App, runF func(context.Context, *SignalOptions) error) *cobra.Command {
	opts := &SignalOptions{App: app}
	cmd := &cobra.Command{
		Use:   "signal ID",
		Short: "What an agent must do now: exit 0 continue, 10 pause, 11 stop, 12 not running",
		Long: `Check the cycle's control signal, as the seed's checkControlSignals: a running
cycle says continue (exit 0); paused says pause (exit 10); stopped (failed)
says stop (exit 11); created or completed says unknown (exit 12): do not act.
Agents call it before each action. The action is printed, or with --json
{"cycle_id", "status", "continue", "action"}. Errors (no such cycle, …) keep
the custodian's usual exit codes (1-5).

With --wait, a paused cycle is watched until it is resumed or stopped (or
--timeout passes), and the signal printed is the one that ended the wait.`,
		Example: `  custodian cycle signal $id || exit 0        # stop working unless told to continue
  custodian cycle signal $id --wait --timeout 30m`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "while the cycle is paused, wait for it to be resumed or stopped")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 0, "with --wait, give up after this long (0: wait forever) and report pause")
	return cmd
}

func runSignal(ctx context.Context, opts *SignalOptions) error {
	app := opts.App
	st, rev, err := load(ctx, app, opts.ID)
	if err != nil {
		return err
	}
	sig := cycle.CheckSignal(st)
	if opts.Wait && sig.Action == cycle.ActionPause {
		if sig, err = waitWhilePaused(ctx, app, opts.ID, rev, opts.Timeout); err != nil {
			return err
		}
	}
	if err := app.Render(sig, func(w io.Writer) error {
		_, err := fmt.Fprintln(w, sig.Action)
		return err
	}); err != nil {
		return err
	}
	if code := signalExit(sig.Action); code != SignalExitContinue {
		return &cmdutil.ExitError{Code: code}
	}
	return nil
}

// waitWhilePaused watches the cycle's commits from revision rev until its
// signal is no longer pause, or the timeout passes (then it is still pause).
func waitWhilePaused(ctx context.Context, app *cmdutil.App, id string, rev uint64, timeout time.Duration) (cycle.Signal, error) {
	svc, err := app.Service()
	if err != nil {
		return cycle.Signal{}, err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	paused := cycle.Signal{CycleID: id, Status: cycle.StatusPaused, Action: cycle.ActionPause}
	for _, err := range svc.Watch(ctx, cycle.Key(id), rev) {
		if err != nil {
			if ctx.Err() != nil {
				return paused, nil
			}
			return cycle.Signal{}, err
		}
		st, _, err := svc.Cycle(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return paused, nil
			}
			return cycle.Signal{}, err
		}
		if sig := cycle.CheckSignal(st); sig.Action != cycle.ActionPause {
			return sig, nil
		}
	}
	// The watch ends only when ctx is done: the timeout passed.
	return paused, nil
}

func signalExit(action string) int {
	switch action {
	case cycle.ActionContinue:
		return SignalExitContinue
	case cycle.ActionPause:
		return SignalExitPause
	case cycle.ActionStop:
		return SignalExitStop
	}
	return SignalExitUnknown
}

// SyncOptions is what `custodian cycle sync` was asked to do.
type SyncOptions struct {
	App *cmdutil.App
	ID  string
}

func newSyncCmd(app *cmdutil.App, runF func(context.Context, *SyncOptions) error) *cobra.Command {
	opts := &SyncOptions{App: app}
	return &cobra.Command{
		Use:   "sync ID",
		Short: "Write the cycle's progress files again from its state",
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return runF(app.Context(cmd), opts)
		},
	}
}

// runSync has the application layer (the daemon's, when one runs) write
// the progress files from the latest committed state.
func runSync(ctx context.Context, opts *SyncOptions) error {
	app, id := opts.App, opts.ID
	if err := cycle.CheckID(id); err != nil {
		return err
	}
	svc, err := app.Service()
	if err != nil {
		return err
	}
	r, err := svc.UpdateCycle(ctx, wire.CycleRequest{ID: id, Op: "sync"})
	if err != nil {
		return err
	}
	wrote := r.Synced
	if wrote == nil {
		wrote = []string{}
	}
	return app.Render(map[string]any{"cycle_id": id, "synced": wrote}, func(w io.Writer) error {
		if len(wrote) == 0 {
			_, err := fmt.Fprintf(w, "%s: progress files up to date\n", id)
			return err
		}
		for _, f := range wrote {
			if _, err := fmt.Fprintf(w, "wrote %s\n", f); err != nil {
				return err
			}
		}
		return nil
	})
}
