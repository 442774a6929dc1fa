package cli

import (
	"encoding/json"
	"fmt"
	"github.com/custodian-dev/custodian/wire"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// The generic verbs: they work on any document the store holds.
// Actor returns who this process acts as: --actor, $CUSTODIAN_ACTOR, or the
// OS user name.
func Actor(flag string) string {
	if flag != "" {
		return flag
	}
	if a := os.Getenv("CUSTODIAN_ACTOR"); a != "" {
		return a
	}
	if u := os.Getenv("USER"); u != "" {
		return "user:" + u
	}
	return "user"
}

func parseRev(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, reason.Usage("revision %q is not a number", s)
	}
	return n, nil
}

func newGetCmd(app *App) *cobra.Command {
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
				rev, err := parseRev(at)
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

func newHistoryCmd(app *App) *cobra.Command {
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

func newDiffCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "diff KEY REV1 REV2",
		Short: "Show what changed in a document between two revisions (RFC 6902)",
		Args:  cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := parseRev(args[1])
			if err != nil {
				return err
			}
			b, err := parseRev(args[2])
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

func newRollbackCmd(app *App) *cobra.Command {
	var to, why, actor string
	cmd := &cobra.Command{
		Use:   "rollback KEY --to REV --reason TEXT",
		Short: "Restore a document's value at a past revision, as a new commit",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rev, err := parseRev(to)
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
			res, err := svc.Rollback(app.Context(cmd), wire.RollbackRequest{Key: args[0], To: rev, Reason: why, Actor: Actor(actor)})
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

type verifyResult struct {
	Key      string `json:"key"`
	OK       bool   `json:"ok"`
	Revision uint64 `json:"revision"`
	Code     string `json:"code,omitempty"`
	Problem  string `json:"problem,omitempty"`
	// Recovery lists what an ordinary crash left that the next command
	// recovers, and how: not corruption (exit 0).
	Recovery []string `json:"recovery,omitempty"`
	// Anchored is the revision the journal's anchor names; Authenticated,
	// that the journal key checked the anchor and the records' MACs.
	Anchored      uint64 `json:"anchored,omitempty"`
	Authenticated bool   `json:"authenticated,omitempty"`
}

// wellKnownKeys are the documents verify looks at when none is named,
// besides those with a journal: a snapshot whose journal was deleted is
// reported, not skipped.
func wellKnownKeys(root string) []string {
	keys := []string{asdd.Key, impl.Key, agentstate.Key}
	if m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(cycle.Dir), "*.json")); err == nil {
		for _, p := range m {
			keys = append(keys, cycle.Dir+"/"+filepath.Base(p))
		}
	}
	var out []string
	for _, k := range keys {
		if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(k))); err == nil && !fi.IsDir() {
			out = append(out, k)
		}
	}
	return out
}

func newVerifyCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "verify [KEY...]",
		Short: "Check journals' hash chains and that replaying them reproduces each snapshot (exit 5 if not)",
		Long: `Check each document (all of them when no KEY is given): every journal record's
hash and its link to the one before, across all segments; that replaying the
journal reproduces every recorded value and the snapshot; that the journal
reaches its anchor (.head: the head's revision and hash, rewritten at every
commit) through the record it names; with a journal key
($CUSTODIAN_JOURNAL_KEY or $CUSTODIAN_JOURNAL_KEY_FILE), the anchor's and the
records' MACs. Nothing is repaired.

What an ordinary crash leaves — a snapshot behind its journal with an
interrupted rewrite's .tmp beside it, a torn last record, an empty journal
from a crash in a document's first commit — is not corruption: verify says
what the next command's recovery will do and exits 0. Anything else exits 5
(CORRUPT_STATE), naming the file and the revision; docs/store.md says what
is and is not detected.`,
		Example: `  custodian verify
  custodian verify .asdd/state/manifest.json --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := app.Store()
			if err != nil {
				return err
			}
			ctx := app.Context(cmd)
			keys := args
			if len(keys) == 0 {
				if keys, err = s.Keys(ctx); err != nil {
					return err
				}
				if _, ok := s.(*file.Store); ok {
					if root, err := app.Root(); err == nil {
						keys = append(keys, wellKnownKeys(root)...)
						slices.Sort(keys)
						keys = slices.Compact(keys)
					}
				}
			}
			results := make([]verifyResult, 0, len(keys))
			bad := 0
			for _, k := range keys {
				r := verifyResult{Key: k, OK: true}
				var err error
				if fs, ok := s.(*file.Store); ok {
					var rep file.VerifyReport
					rep, err = fs.VerifyDocument(ctx, k)
					r.Revision, r.Recovery, r.Anchored, r.Authenticated = rep.Revision, rep.Recovery, rep.Anchored, rep.Authenticated
				} else if err = s.Verify(ctx, k); err == nil {
					if recs, herr := s.History(ctx, k, 0, 0); herr == nil && len(recs) > 0 {
						r.Revision = recs[len(recs)-1].Rev
					}
				}
				if err != nil {
					r.OK, r.Problem, r.Code = false, err.Error(), string(reason.CodeOf(err))
					if e, ok := reason.As(err); ok {
						r.Problem = e.Message
					}
					r.Problem = strings.TrimPrefix(r.Problem, k+": ")
					if r.Code == "" {
						// Whatever keeps a state file from being read
						// is an integrity problem, not an internal one.
						r.Code = string(reason.CorruptState)
					}
					bad++
				}
				results = append(results, r)
			}
			err = app.Render(results, func(w io.Writer) error {
				for _, r := range results {
					switch {
					case !r.OK && r.Code == string(reason.CorruptState):
						fmt.Fprintf(w, "CORRUPT  %s: %s\n", r.Key, r.Problem)
					case !r.OK:
						fmt.Fprintf(w, "%-8s %s: %s\n", r.Code, r.Key, r.Problem)
					case len(r.Recovery) > 0:
						fmt.Fprintf(w, "ok       %s (revision %d; recoverable crash state)\n", r.Key, r.Revision)
						for _, what := range r.Recovery {
							fmt.Fprintf(w, "           %s\n", what)
						}
					default:
						auth := ""
						if r.Authenticated {
							auth = ", authenticated"
						}
						fmt.Fprintf(w, "ok       %s (revision %d%s)\n", r.Key, r.Revision, auth)
					}
				}
				if len(results) == 0 {
					fmt.Fprintln(w, "no documents")
				}
				return nil
			})
			if err != nil {
				return err
			}
			if bad > 0 {
				// Corruption first; otherwise what kept verify from
				// looking (a daemon holding the lock: 4).
				code := reason.ExitIntegrity
				for _, r := range results {
					if !r.OK && r.Code != string(reason.CorruptState) {
						code = reason.Code(r.Code).ExitCode()
					}
				}
				for _, r := range results {
					if !r.OK && r.Code == string(reason.CorruptState) {
						code = reason.ExitIntegrity
					}
				}
				return &ExitError{Code: code}
			}
			return nil
		},
	}
}

func newRepairCmd(app *App) *cobra.Command {
	var keep, why, actor string
	cmd := &cobra.Command{
		Use:   "repair KEY --keep journal|snapshot --reason TEXT",
		Short: "Settle a document whose journal lost records, is missing or was rewritten (what recovery refuses to guess)",
		Long: `Every command refuses, with CORRUPT_STATE (exit 5) and changing nothing, a
document whose journal and snapshot disagree in a way only a person can
settle: the journal ends before the revision its anchor (.head) says was
committed (records lost), the journal is missing beside a snapshot that was
journaled, a record is not the one the anchor names (history rewritten), or,
with a journal key, the anchor or a record is not authenticated by it.

  --keep journal   the journal, as it is, is the document's history: the
                   anchor is set to its head (with the key, authenticated),
                   and a snapshot that is no revision of it is moved aside
  --keep snapshot  the same, then the snapshot's value is committed as a new
                   revision by --actor (it must pass the document's
                   validator); a snapshot whose journal is gone starts a new
                   journal at revision 1

Every file replaced is moved aside (.repaired-<time>, .unjournaled-<time>),
never deleted. Run it with the daemon stopped.`,
		Example: `  custodian repair .asdd/state/manifest.json --keep snapshot --reason "journal restored from backup lacked the last commit"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(why) == "" {
				return reason.Usage("repair needs --reason")
			}
			fs, err := app.OpenFileStore()
			if err != nil {
				return err
			}
			defer fs.Close()
			res, err := fs.Repair(app.Context(cmd), args[0], file.RepairKeep(keep), Actor(actor), why)
			if err != nil {
				return err
			}
			return app.Render(res, func(w io.Writer) error {
				for _, a := range res.Aside {
					fmt.Fprintf(w, "kept aside: %s\n", a)
				}
				if res.Committed {
					_, err := fmt.Fprintf(w, "%s repaired: the snapshot's value committed as revision %d\n", res.Key, res.Revision)
					return err
				}
				_, err := fmt.Fprintf(w, "%s repaired: the journal is its history, at revision %d\n", res.Key, res.Revision)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&keep, "keep", "", "what to keep: journal or snapshot (required)")
	cmd.Flags().StringVar(&why, "reason", "", "why (required; recorded in the journal)")
	cmd.Flags().StringVar(&actor, "actor", "", "who is repairing (default $CUSTODIAN_ACTOR or the OS user)")
	_ = cmd.MarkFlagRequired("keep")
	_ = cmd.MarkFlagRequired("reason")
	return cmd
}

// newDebugCmd holds hidden commands for tests and operations experiments.
func newDebugCmd(app *App) *cobra.Command {
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
