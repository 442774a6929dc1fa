package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// custodian state: the subagents state-manager's .agents/tmp/state.json
// (seed 002), schema v2, every change a store commit.

func init() { Register("state", newStateCmd) }

// stateMaxInput bounds what a command reads from stdin or a file.
const stateMaxInput = 16 << 20

func newStateCmd(app *App) *cobra.Command {
	var actor string
	cmd := &cobra.Command{
		Use:   "state",
		Short: "The workflow state in .agents/tmp/state.json (state-manager, schema v2)",
		Long: `Read and change the subagents workflow state (.agents/tmp/state.json, schema v2).
Every change is validated (status, stage and phase values; no stage outside
EXPLORE, PLAN, IMPLEMENT, TEST, FINAL) and committed atomically with
updatedAt set; a rejected change leaves the file as it was. The commands
print the resulting state as JSON.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return reason.Usage("unknown command %q for custodian state (init, read, update, record-output, record-failure, compact)", args[0])
		},
	}
	cmd.PersistentFlags().StringVar(&actor, "actor", "", "who makes the change (default $CUSTODIAN_ACTOR or the OS user)")
	s := &stateCmd{app: app, actor: &actor}
	cmd.AddCommand(s.initCmd(), s.readCmd(), s.updateCmd(), s.recordOutputCmd(), s.recordFailureCmd(), s.compactCmd())
	return cmd
}

type stateCmd struct {
	app   *App
	actor *string
}

// errNoState is returned by every command but init when there is no state.
var errNoState = reason.New(reason.NotFound, "no workflow state at %s: run custodian state init first", agentstate.Key)

func (s *stateCmd) initCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init TASK",
		Short: "Start a workflow: write the initial state (status in_progress, startedAt now)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			now := s.app.Now()
			st, err := agentstate.Init(args[0], now)
			if err != nil {
				return err
			}
			return s.commit(cmd, "init: "+args[0], func(cur agentstate.Object, exists bool) (agentstate.Object, error) {
				if exists && !force {
					task, _ := cur.Get("task")
					status, _ := cur.Get("status")
					return nil, reason.New(reason.InvalidInput, "a workflow state already exists at %s (task %q, status %v): use --force to start over", agentstate.Key, task, status)
				}
				return st, nil
			})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing state (its history stays in the journal)")
	return cmd
}

func (s *stateCmd) readCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "read [FIELD]",
		Short: "Print the state (null when there is none), or one field by dotted path",
		Example: `  custodian state read
  custodian state read currentPhase
  custodian state read stages.PLAN.status`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := s.load(s.app.Context(cmd))
			if errors.Is(err, errNoState) && len(args) == 0 {
				_, err = io.WriteString(s.app.Out, "null\n")
				return err
			}
			if err != nil {
				return err
			}
			var v any = st
			if len(args) == 1 {
				if v, err = agentstate.Lookup(st, args[0]); err != nil {
					return err
				}
				if str, ok := v.(string); ok && !s.app.JSON {
					_, err = fmt.Fprintln(s.app.Out, str)
					return err
				}
			}
			return s.print(v)
		},
	}
}

func (s *stateCmd) updateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "update [JSON|-]",
		Short: "Deep-merge a JSON object into the state (from the argument, or stdin) and set updatedAt",
		Example: `  custodian state update '{"currentStage":"PLAN","currentPhase":"1.1"}'
  echo '{"stages":{"PLAN":{"status":"in_progress"}}}' | custodian state update`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var raw []byte
			var err error
			if len(args) == 1 && args[0] != "-" {
				raw = []byte(args[0])
			} else if raw, err = readLimited(s.app.In, "stdin"); err != nil {
				return err
			}
			if strings.TrimSpace(string(raw)) == "" {
				return reason.New(reason.InvalidInput, "update needs a JSON object, as the argument or on stdin")
			}
			if err := safetext.CheckJSON("update", raw); err != nil {
				return err
			}
			patch, err := agentstate.DecodeObject(raw)
			if err != nil {
				return reason.New(reason.InvalidInput, "update: %w", err)
			}
			now := s.app.Now()
			return s.commit(cmd, "update "+patchKeys(patch), func(cur agentstate.Object, exists bool) (agentstate.Object, error) {
				if !exists {
					return nil, errNoState
				}
				return agentstate.Update(cur, patch, now)
			})
		},
	}
}

func patchKeys(o agentstate.Object) string {
	keys := make([]string, len(o))
	for i, f := range o {
		keys[i] = f.Key
	}
	return strings.Join(keys, ", ")
}

func (s *stateCmd) recordOutputCmd() *cobra.Command {
	var ext string
	cmd := &cobra.Command{
		Use:   "record-output PHASE [FILE|-]",
		Short: "Write a phase's output to .agents/tmp/phases/{phase}-output.{ext} and record it in files",
		Example: `  custodian state record-output 1.1 plan.md
  agent run | custodian state record-output 2.1 --ext json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			phase := args[0]
			rel, err := agentstate.OutputPath(phase, ext)
			if err != nil {
				return err
			}
			var content []byte
			if len(args) == 2 && args[1] != "-" {
				f, err := os.Open(args[1])
				if err != nil {
					return reason.New(reason.InvalidInput, "phase output: %w", err)
				}
				content, err = readLimited(f, args[1])
				f.Close()
				if err != nil {
					return err
				}
			} else if content, err = readLimited(s.app.In, "stdin"); err != nil {
				return err
			}
			if ext == "json" && !json.Valid(content) {
				return reason.New(reason.InvalidInput, "phase %s output is not valid JSON (--ext json)", phase)
			}
			ctx := s.app.Context(cmd)
			// The state must exist before anything is written.
			if _, err := s.load(ctx); err != nil {
				return err
			}
			root, err := s.app.Root()
			if err != nil {
				return err
			}
			if err := writeFileAtomic(root, rel, content); err != nil {
				return err
			}
			now := s.app.Now()
			return s.commit(cmd, "record-output "+phase, func(cur agentstate.Object, exists bool) (agentstate.Object, error) {
				if !exists {
					return nil, errNoState
				}
				return agentstate.RecordOutput(cur, phase, rel, now)
			})
		},
	}
	cmd.Flags().StringVar(&ext, "ext", "md", "file extension of the output")
	return cmd
}

func (s *stateCmd) recordFailureCmd() *cobra.Command {
	var phase, msg, ctxJSON string
	cmd := &cobra.Command{
		Use:     "record-failure --phase PHASE --error TEXT [--context JSON]",
		Short:   "Set status failed and record the failure (phase, error, failedAt, context)",
		Example: `  custodian state record-failure --phase 2.1 --error "Task agent timeout on task-3" --context '{"failedTask":"task-3"}'`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f := agentstate.Failure{Phase: phase, Error: msg}
			if ctxJSON != "" {
				c, err := agentstate.DecodeObject([]byte(ctxJSON))
				if err != nil {
					return reason.New(reason.InvalidInput, "--context: %w", err)
				}
				f.Context = c
			}
			now := s.app.Now()
			return s.commit(cmd, "record-failure "+phase+": "+msg, func(cur agentstate.Object, exists bool) (agentstate.Object, error) {
				if !exists {
					return nil, errNoState
				}
				return agentstate.RecordFailure(cur, f, now)
			})
		},
	}
	cmd.Flags().StringVar(&phase, "phase", "", "the phase that failed (0, 1.1 … 4.3)")
	cmd.Flags().StringVar(&msg, "error", "", "what went wrong")
	cmd.Flags().StringVar(&ctxJSON, "context", "", "a JSON object: completedTasks, failedTask, pendingTasks, …")
	return cmd
}

func (s *stateCmd) compactCmd() *cobra.Command {
	var summary string
	cmd := &cobra.Command{
		Use:   "compact [--summary TEXT]",
		Short: "Record a context compaction in compaction.history (and lastCompactedAt)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			now := s.app.Now()
			return s.commit(cmd, "compact", func(cur agentstate.Object, exists bool) (agentstate.Object, error) {
				if !exists {
					return nil, errNoState
				}
				return agentstate.Compact(cur, summary, now)
			})
		},
	}
	cmd.Flags().StringVar(&summary, "summary", "", "what the compacted context held")
	return cmd
}

// load reads the state through the store (which applies the .tmp recovery
// rules of the seed) and checks its version.
func (s *stateCmd) load(ctx context.Context) (agentstate.Object, error) {
	st, err := s.app.Store()
	if err != nil {
		return nil, err
	}
	doc, err := st.Get(ctx, agentstate.Key)
	if err != nil {
		if errors.Is(err, reason.NotFound) {
			return nil, errNoState
		}
		return nil, err
	}
	return agentstate.Decode(doc.Value)
}

// commit runs f on the current state under the store's concurrency control,
// commits its result and prints it.
func (s *stateCmd) commit(cmd *cobra.Command, why string, f func(cur agentstate.Object, exists bool) (agentstate.Object, error)) error {
	st, err := s.app.Store()
	if err != nil {
		return err
	}
	actor := Actor(*s.actor)
	var next agentstate.Object
	_, err = st.Update(s.app.Context(cmd), agentstate.Key, func(cur store.Document) (store.Change, error) {
		var state agentstate.Object
		if cur.Exists() {
			var err error
			if state, err = agentstate.Decode(cur.Value); err != nil {
				return store.Change{}, err
			}
		}
		n, err := f(state, cur.Exists())
		if err != nil {
			return store.Change{}, err
		}
		v, err := agentstate.Encode(n)
		if err != nil {
			return store.Change{}, err
		}
		next = n
		return store.Change{Value: v, Actor: actor, Reason: why}, nil
	}, store.Create())
	if err != nil {
		return err
	}
	return s.print(next)
}

func (s *stateCmd) print(v any) error {
	b, err := agentstate.Encode(v)
	if err != nil {
		return err
	}
	if _, isObj := v.(agentstate.Object); isObj {
		if b, err = store.Indent(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = s.app.Out.Write(b)
	return err
}

func readLimited(r io.Reader, name string) ([]byte, error) {
	if r == nil {
		return nil, reason.New(reason.InvalidInput, "nothing to read on %s", name)
	}
	b, err := io.ReadAll(io.LimitReader(r, stateMaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > stateMaxInput {
		return nil, reason.New(reason.InvalidInput, "%s is over the limit of %d bytes", name, stateMaxInput)
	}
	if err := safetext.CheckString(name, string(b)); err != nil {
		return nil, err
	}
	return b, nil
}

// writeFileAtomic writes rel (a slash path inside root) durably: a temp
// file in the same directory, fsync, rename, fsync the directory. os.Root
// refuses paths that escape the project, symlinks included.
func writeFileAtomic(root, rel string, data []byte) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	defer r.Close()
	dir := path.Dir(rel)
	if err := r.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%d", rel, os.Getpid(), time.Now().UnixNano())
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = r.Rename(tmp, rel)
	}
	if werr != nil {
		_ = r.Remove(tmp)
		return fmt.Errorf("write %s: %w", rel, werr)
	}
	d, err := r.Open(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", rel, err)
	}
	return nil
}
