package doc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/wire"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// keyHelp ends the help of the commands that take a document's KEY.
const keyHelp = `KEY is a document's path from the project root (.asdd/state/manifest.json,
.impl/manifest.json, .agents/tmp/state.json, .workflow/.cycle/<id>.json) or
its short name: ` + cmdutil.ShortNames + `.`

// GetOptions is what `custodian get` was asked to print.
type GetOptions struct {
	App *cmdutil.App
	Key string
	At  string // a past revision ("": the latest)
}

// NewGetCmd returns `custodian get`; it parses the command line into
// GetOptions and calls runF with them (runGet when runF is nil).
func NewGetCmd(app *cmdutil.App, runF func(context.Context, *GetOptions) error) *cobra.Command {
	opts := &GetOptions{App: app}
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "Print a document (its latest revision, or --at a past one)",
		Long:  "Print a document: its latest revision, or --at a past one. " + keyHelp,
		Example: `  custodian get .asdd/state/manifest.json
  custodian get impl --at 3 --json`,
		Args: cmdutil.KeyArgs(app),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if runF == nil {
				runF = runGet
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().StringVar(&opts.At, "at", "", "read the document as it was at revision `REV`")
	return cmd
}

// runGet prints the document.
func runGet(ctx context.Context, opts *GetOptions) error {
	app := opts.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	key := cmdutil.ResolveKey(opts.Key)
	doc, err := svc.Doc(ctx, key)
	if err == nil && !doc.Exists() {
		err = appl.NoDocument(key)
	}
	if err != nil {
		return app.NoDocument(ctx, opts.Key, key, err)
	}
	if opts.At != "" {
		rev, err := cmdutil.ParseRev(opts.At)
		if err != nil {
			return err
		}
		head := doc.Revision
		if doc, err = svc.DocAt(ctx, key, rev); err != nil {
			return err
		}
		if !doc.Exists() {
			return reason.New(reason.NotFound, "%s at revision %d: that is before its first commit; its revisions are 1–%d (custodian history %s)", key, rev, head, opts.Key)
		}
	}
	return app.Render(doc, func(w io.Writer) error {
		b, err := store.Indent(doc.Value)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
}

// HistoryOptions is what `custodian history` was asked to list.
type HistoryOptions struct {
	App      *cmdutil.App
	Key      string
	From, To uint64 // the revisions to list (To 0: up to the latest)
}

// NewHistoryCmd returns `custodian history`; it parses the command line
// into HistoryOptions and calls runF with them (runHistory when runF is
// nil).
func NewHistoryCmd(app *cmdutil.App, runF func(context.Context, *HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{App: app}
	cmd := &cobra.Command{
		Use:   "history KEY",
		Short: "List a document's commits: revision, time, actor, reason",
		Long:  "List a document's commits: revision, time, actor, the number of changes, reason. " + keyHelp,
		Example: `  custodian history asdd
  custodian history .impl/manifest.json --from 3`,
		Args: cmdutil.KeyArgs(app),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if runF == nil {
				runF = runHistory
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().Uint64Var(&opts.From, "from", 0, "first revision to list")
	cmd.Flags().Uint64Var(&opts.To, "to", 0, "last revision to list (0: the latest)")
	return cmd
}

// runHistory lists the document's commits.
func runHistory(ctx context.Context, opts *HistoryOptions) error {
	app := opts.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	key := cmdutil.ResolveKey(opts.Key)
	recs, err := svc.History(ctx, key, opts.From, opts.To)
	if err != nil {
		return app.NoDocument(ctx, opts.Key, key, err)
	}
	if recs == nil {
		recs = []store.Record{}
	}
	return app.Render(recs, func(w io.Writer) error {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "REV\tTIME\tACTOR\tCHANGES\tREASON")
		for _, r := range recs {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\n", r.Rev, r.Time.UTC().Format(time.RFC3339), r.Actor, opCount(r.Patch), r.Reason)
		}
		return tw.Flush()
	})
}

func opCount(patch json.RawMessage) int {
	var ops []json.RawMessage
	_ = json.Unmarshal(patch, &ops)
	return len(ops)
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// DiffOptions is what `custodian diff` was asked to compare.
type DiffOptions struct {
	App      *cmdutil.App
	Key      string
	From, To uint64
}

// NewDiffCmd returns `custodian diff`; it parses the command line into
// DiffOptions and calls runF with them (runDiff when runF is nil).
func NewDiffCmd(app *cmdutil.App, runF func(context.Context, *DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{App: app}
	return &cobra.Command{
		Use:     "diff KEY REV1 REV2",
		Short:   "Show what changed in a document between two revisions (RFC 6902)",
		Long:    "Show what changed in a document between two revisions, as an RFC 6902 patch. " + keyHelp,
		Example: `  custodian diff asdd 3 5`,
		Args:    cmdutil.KeyArgs(app, "REV1", "REV2"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := cmdutil.ParseRev(args[1])
			if err != nil {
				return err
			}
			b, err := cmdutil.ParseRev(args[2])
			if err != nil {
				return err
			}
			opts.Key, opts.From, opts.To = args[0], a, b
			if runF == nil {
				runF = runDiff
			}
			return runF(app.Context(cmd), opts)
		},
	}
}

// runDiff prints the patch from one revision to the other.
func runDiff(ctx context.Context, opts *DiffOptions) error {
	app := opts.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	key := cmdutil.ResolveKey(opts.Key)
	patch, err := diff(ctx, svc, key, opts.From, opts.To)
	if err != nil {
		return app.NoDocument(ctx, opts.Key, key, err)
	}
	var ops []patchOp
	if err := json.Unmarshal(patch, &ops); err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	if ops == nil {
		ops = []patchOp{}
	}
	return app.Render(ops, func(w io.Writer) error {
		for _, op := range ops {
			path := op.Path
			if path == "" {
				path = "/"
			}
			switch op.Op {
			case "remove":
				fmt.Fprintf(w, "- %s\n", path)
			case "add":
				fmt.Fprintf(w, "+ %s = %s\n", path, op.Value)
			case "replace":
				fmt.Fprintf(w, "~ %s = %s\n", path, op.Value)
			case "move", "copy":
				fmt.Fprintf(w, "%s %s -> %s\n", op.Op, op.From, path)
			default:
				fmt.Fprintf(w, "%s %s %s\n", op.Op, path, op.Value)
			}
		}
		return nil
	})
}

// diff is the RFC 6902 patch from key at revision a to key at revision b.
func diff(ctx context.Context, svc appl.Service, key string, a, b uint64) (json.RawMessage, error) {
	da, err := svc.DocAt(ctx, key, a)
	if err != nil {
		return nil, err
	}
	db, err := svc.DocAt(ctx, key, b)
	if err != nil {
		return nil, err
	}
	return store.Diff(da.Value, db.Value)
}

// RollbackOptions is what `custodian rollback` was asked to do.
type RollbackOptions struct {
	App    *cmdutil.App
	Key    string
	To     uint64 // the revision to restore
	Reason string
	Actor  string // --actor ("": $CUSTODIAN_ACTOR or the OS user)
}

// NewRollbackCmd returns `custodian rollback`; it parses the command line
// into RollbackOptions and calls runF with them (runRollback when runF is
// nil).
func NewRollbackCmd(app *cmdutil.App, runF func(context.Context, *RollbackOptions) error) *cobra.Command {
	opts := &RollbackOptions{App: app}
	var to string
	cmd := &cobra.Command{
		Use:   "rollback KEY --to REV --reason TEXT",
		Short: "Restore a document's value at a past revision, as a new commit",
		Long: `Restore a document's value at a past revision, as a new commit: the
history keeps every revision, the rollback included (custodian history KEY).
The document's rules check the restored value. ` + keyHelp + `

Only the document changes. For the ASDD manifest, the files its operations
wrote stay as they are: the escalation notices under .asdd/escalations/ and
the rows of docs/agent-failure-log.md of the rolled-back revisions are the
record of what happened, and no operation rewrites them; a notice's status
(OPEN, RESOLVED) may no longer be the manifest's. rollback lists those
notices ("left in place", and escalations_left in --json) so that a human
can resolve or archive them; custodian rebuild reads OPEN notices, so
archive the ones that no longer apply before a rebuild.`,
		Example: `  custodian history asdd
  custodian rollback asdd --to 12 --reason "undo the bad import"`,
		Args: cmdutil.KeyArgs(app),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev, err := cmdutil.ParseRev(to)
			if err != nil {
				return err
			}
			if strings.TrimSpace(opts.Reason) == "" {
				return reason.Usage("rollback needs --reason")
			}
			opts.Key, opts.To = args[0], rev
			if runF == nil {
				runF = runRollback
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the revision to restore (required)")
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "why (required; recorded in the journal)")
	cmd.Flags().StringVar(&opts.Actor, "actor", "", "who is rolling back (default $CUSTODIAN_ACTOR or the OS user)")
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

// runRollback commits the past value through the application layer.
func runRollback(ctx context.Context, opts *RollbackOptions) error {
	app := opts.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	rev := opts.To
	key := cmdutil.ResolveKey(opts.Key)
	var left []leftNotice
	if key == asdd.Key {
		left = escalationsLeft(ctx, app, rev)
	}
	res, err := svc.Rollback(ctx, wire.RollbackRequest{Key: key, To: rev, Reason: opts.Reason, Actor: cmdutil.Actor(opts.Actor)})
	if err != nil {
		return app.NoDocument(ctx, opts.Key, key, err)
	}
	if !res.Changed || left == nil {
		left = []leftNotice{}
	}
	return app.Render(map[string]any{"key": res.Key, "revision": res.Revision, "restored": rev, "changed": res.Changed, "escalations_left": left}, func(w io.Writer) error {
		if !res.Changed {
			_, err := fmt.Fprintf(w, "%s already equals revision %d; nothing committed\n", res.Key, rev)
			return err
		}
		fmt.Fprintf(w, "%s rolled back to revision %d as revision %d\n", res.Key, rev, res.Revision)
		if len(left) > 0 {
			fmt.Fprintf(w, "left in place: %d escalation %s and %s in %s (the record of what happened; resolve or archive them by hand):\n",
				len(left), cmdutil.IntegrityPlural(len(left), "notice", "notices"), cmdutil.IntegrityPlural(len(left), "its row", "their rows"), asdd.FailureLogPath)
			for _, n := range left {
				fmt.Fprintf(w, "  %s  %s\n", n.Path, n.Why)
			}
		}
		return nil
	})
}

// leftNotice is an escalation notice a rollback of the ASDD manifest leaves
// as it is while the manifest no longer agrees with it.
type leftNotice struct {
	ID    string `json:"id"`
	Path  string `json:"path"`
	Slice string `json:"slice_id"`
	Why   string `json:"why"`
}

// escalationsLeft compares the latest manifest with the one at revision
// to: the escalations the rollback takes out of the manifest, or whose
// status it changes, keep their notice files and failure-log rows. Best
// effort: what cannot be read lists nothing (the rollback reports its own
// errors).
func escalationsLeft(ctx context.Context, app *cmdutil.App, to uint64) []leftNotice {
	svc, err := app.Service()
	if err != nil {
		return nil
	}
	now, err := svc.Manifest(ctx)
	if err != nil {
		return nil
	}
	then, err := appl.ManifestAt(ctx, svc, to)
	if err != nil {
		return nil
	}
	if then == nil {
		then = &asdd.Manifest{}
	}
	status := map[string]string{}
	for _, sl := range then.Slices {
		for _, e := range sl.Escalations {
			status[e.ID] = e.Status
		}
	}
	var out []leftNotice
	for _, sl := range now.Slices {
		for _, e := range sl.Escalations {
			was, named := status[e.ID]
			switch {
			case !named:
				out = append(out, leftNotice{ID: e.ID, Path: e.Path, Slice: sl.SliceID, Why: fmt.Sprintf("%s, no longer in the manifest", e.Status)})
			case was != e.Status:
				out = append(out, leftNotice{ID: e.ID, Path: e.Path, Slice: sl.SliceID, Why: fmt.Sprintf("the notice says %s, the manifest now %s", e.Status, was)})
			}
		}
	}
	return out
}

// DebugWriteOptions is what `custodian debug write` was asked to do.
type DebugWriteOptions struct {
	App    *cmdutil.App
	Key    string
	Writer string // the writer's id: field prefix and actor
	Count  int    // commits to make
	Cycle  int    // reuse field names modulo Cycle (0: a new field per commit)
}

// NewDebugCmd holds hidden commands for tests and operations experiments;
// `debug write` parses its command line into DebugWriteOptions and calls
// runF with them (runDebugWrite when runF is nil).
func NewDebugCmd(app *cmdutil.App, runF func(context.Context, *DebugWriteOptions) error) *cobra.Command {
	if runF == nil {
		runF = runDebugWrite
	}
	cmd := &cobra.Command{Use: "debug", Short: "Commands for testing Custodian itself", Hidden: true}
	opts := &DebugWriteOptions{App: app}
	write := &cobra.Command{
		Use:   "write KEY --writer ID --count N",
		Short: "Commit N updates, each setting field ID-i, printing each acknowledged revision",
		Args:  cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Key = args[0]
			if opts.Count < 0 || opts.Cycle < 0 {
				return reason.Usage("--count and --cycle are 0 or more")
			}
			return runF(app.Context(cmd), opts)
		},
	}
	write.Flags().StringVar(&opts.Writer, "writer", "w", "writer id (field prefix and actor)")
	write.Flags().IntVar(&opts.Count, "count", 1, "number of commits")
	write.Flags().IntVar(&opts.Cycle, "cycle", 0, "reuse field names modulo `N` (0: a new field per commit)")
	cmd.AddCommand(write)
	return cmd
}

// runDebugWrite commits straight to the store: a tool for testing the
// store's concurrency contract itself (real processes racing on one key),
// not a door to a pipeline's state, so it bypasses the application layer
// on purpose. With a daemon running, the store is the daemon's raw PUT,
// which the application layer checks.
func runDebugWrite(ctx context.Context, opts *DebugWriteOptions) error {
	app := opts.App
	s, err := app.Store()
	if err != nil {
		return err
	}
	for i := range opts.Count {
		n := i
		if opts.Cycle > 0 {
			n = i % opts.Cycle
		}
		field := fmt.Sprintf("%s-%d", opts.Writer, n)
		res, err := s.Update(ctx, opts.Key, func(cur store.Document) (store.Change, error) {
			m := map[string]any{}
			if cur.Value != nil {
				if err := json.Unmarshal(cur.Value, &m); err != nil {
					return store.Change{}, err
				}
			}
			m[field] = fmt.Sprintf("%d/%d", os.Getpid(), i)
			b, err := json.Marshal(m)
			return store.Change{Value: b, Actor: opts.Writer, Reason: "set " + field}, err
		}, store.Create())
		if err != nil {
			return err
		}
		if res.Changed {
			fmt.Fprintf(app.Out, "committed %s %d\n", field, res.Revision)
		}
	}
	return nil
}
