package doc

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/wire"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// NewGetCmd returns `custodian get`.
func NewGetCmd(app *cmdutil.App) *cobra.Command {
	var at string
	cmd := &cobra.Command{
		Use:   "get KEY",
		Short: "Print a document (its latest revision, or --at a past one)",
		Example: `  custodian get .asdd/state/manifest.json
  custodian get .impl/manifest.json --at 3 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := app.Store()
			if err != nil {
				return err
			}
			var doc store.Document
			if at != "" {
				rev, err := cmdutil.ParseRev(at)
				if err != nil {
					return err
				}
				doc, err = s.GetAt(app.Context(cmd), args[0], rev)
				if err != nil {
					return err
				}
			} else if doc, err = s.Get(app.Context(cmd), args[0]); err != nil {
				return err
			}
			return app.Render(doc, func(w io.Writer) error {
				b, err := store.Indent(doc.Value)
				if err != nil {
					return err
				}
				_, err = w.Write(b)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&at, "at", "", "read the document as it was at revision `REV`")
	return cmd
}

// NewHistoryCmd returns `custodian history`.
func NewHistoryCmd(app *cmdutil.App) *cobra.Command {
	var from, to uint64
	cmd := &cobra.Command{
		Use:   "history KEY",
		Short: "List a document's commits: revision, time, actor, reason",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := app.Store()
			if err != nil {
				return err
			}
			recs, err := s.History(app.Context(cmd), args[0], from, to)
			if err != nil {
				return err
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
		},
	}
	cmd.Flags().Uint64Var(&from, "from", 0, "first revision to list")
	cmd.Flags().Uint64Var(&to, "to", 0, "last revision to list (0: the latest)")
	return cmd
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

// NewDiffCmd returns `custodian diff`.
func NewDiffCmd(app *cmdutil.App) *cobra.Command {
	return &cobra.Command{
		Use:   "diff KEY REV1 REV2",
		Short: "Show what changed in a document between two revisions (RFC 6902)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := cmdutil.ParseRev(args[1])
			if err != nil {
				return err
			}
			b, err := cmdutil.ParseRev(args[2])
			if err != nil {
				return err
			}
			s, err := app.Store()
			if err != nil {
				return err
			}
			patch, err := store.DiffRevisions(app.Context(cmd), s, args[0], a, b)
			if err != nil {
				return err
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
		},
	}
}

// NewRollbackCmd returns `custodian rollback`.
func NewRollbackCmd(app *cmdutil.App) *cobra.Command {
	var to, why, actor string
	cmd := &cobra.Command{
		Use:   "rollback KEY --to REV --reason TEXT",
		Short: "Restore a document's value at a past revision, as a new commit",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev, err := cmdutil.ParseRev(to)
			if err != nil {
				return err
			}
			if strings.TrimSpace(why) == "" {
				return reason.Usage("rollback needs --reason")
			}
			svc, err := app.Service()
			if err != nil {
				return err
			}
			res, err := svc.Rollback(app.Context(cmd), wire.RollbackRequest{Key: args[0], To: rev, Reason: why, Actor: cmdutil.Actor(actor)})
			if err != nil {
				return err
			}
			return app.Render(map[string]any{"key": res.Key, "revision": res.Revision, "restored": rev, "changed": res.Changed}, func(w io.Writer) error {
				if !res.Changed {
					_, err := fmt.Fprintf(w, "%s already equals revision %d; nothing committed\n", res.Key, rev)
					return err
				}
				_, err := fmt.Fprintf(w, "%s rolled back to revision %d as revision %d\n", res.Key, rev, res.Revision)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the revision to restore (required)")
	cmd.Flags().StringVar(&why, "reason", "", "why (required; recorded in the journal)")
	cmd.Flags().StringVar(&actor, "actor", "", "who is rolling back (default $CUSTODIAN_ACTOR or the OS user)")
	_ = cmd.MarkFlagRequired("to")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

// NewDebugCmd holds hidden commands for tests and operations experiments.
func NewDebugCmd(app *cmdutil.App) *cobra.Command {
	cmd := &cobra.Command{Use: "debug", Short: "Commands for testing Custodian itself", Hidden: true}
	var id string
	var count, cycle int
	write := &cobra.Command{
		Use:   "write KEY --writer ID --count N",
		Short: "Commit N updates, each setting field ID-i, printing each acknowledged revision",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := app.Store()
			if err != nil {
				return err
			}
			for i := range count {
				n := i
				if cycle > 0 {
					n = i % cycle
				}
				field := fmt.Sprintf("%s-%d", id, n)
				res, err := s.Update(app.Context(cmd), args[0], func(cur store.Document) (store.Change, error) {
					m := map[string]any{}
					if cur.Value != nil {
						if err := json.Unmarshal(cur.Value, &m); err != nil {
							return store.Change{}, err
						}
					}
					m[field] = fmt.Sprintf("%d/%d", os.Getpid(), i)
					b, err := json.Marshal(m)
					return store.Change{Value: b, Actor: id, Reason: "set " + field}, err
				}, store.Create())
				if err != nil {
					return err
				}
				if res.Changed {
					fmt.Fprintf(app.Out, "committed %s %d\n", field, res.Revision)
				}
			}
			return nil
		},
	}
	write.Flags().StringVar(&id, "writer", "w", "writer id (field prefix and actor)")
	write.Flags().IntVar(&count, "count", 1, "number of commits")
	write.Flags().IntVar(&cycle, "cycle", 0, "reuse field names modulo `N` (0: a new field per commit)")
	cmd.AddCommand(write)
	return cmd
}
