package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/custodian-dev/custodian/app"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// custodian state: the subagents state-manager's .agents/tmp/state.json
// (seed 002), schema v2, every change a store commit.

// Runs are the functions state's subcommands call once their command
// lines are parsed; a nil one runs the command. The changing subcommands
// build the request they send (a wire.StateRequest: the operation and its
// arguments, the actor) and call Send with it (nil: commit it through the
// application layer and print the state); read calls Read with its options.
type Runs struct {
	Send func(context.Context, *wire.StateRequest) error
	Read func(context.Context, *ReadOptions) error
}

// NewCmd returns `custodian state` and its subcommands.
func NewCmd(app *cmdutil.App, runs *Runs) *cobra.Command {
	var actor string
	cmd := &cobra.Command{
		Use:   "state",
		Short: "The workflow state in .agents/tmp/state.json (state-manager, schema v2)",
		Long: `Read and change the subagents workflow state (.agents/tmp/state.json, schema v2).
Every change is validated (status, stage and phase values; no stage outside
EXPLORE, PLAN, IMPLEMENT, TEST, FINAL) and committed atomically with
updatedAt set; a rejected change leaves the file as it was. The commands
print the resulting state as JSON.`,
	}
	cmd.PersistentFlags().StringVar(&actor, "actor", "", "who makes the change (default $CUSTODIAN_ACTOR or the OS user)")
	s := &stateCmd{app: app, actor: &actor}
	var read func(context.Context, *ReadOptions) error
	if runs != nil {
		s.commitF, read = runs.Send, runs.Read
	}
	if s.commitF == nil {
		s.commitF = s.commit
	}
	if read == nil {
		read = runRead
	}
	cmd.AddCommand(s.initCmd(), newReadCmd(app, read), s.updateCmd(), s.recordOutputCmd(), s.recordFailureCmd(), s.compactCmd())
	return cmd
}

type stateCmd struct {
	app     *cmdutil.App
	actor   *string
	commitF func(context.Context, *wire.StateRequest) error
}

// errNoState is returned by every command but init when there is no state.
var errNoState = app.ErrNoState

func (s *stateCmd) initCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "init TASK",
		Short: "Start a workflow: write the initial state (status in_progress, startedAt now)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return s.send(cmd, wire.StateRequest{Op: "init", Task: args[0], Force: force})
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing state (its history stays in the journal)")
	return cmd
}

// ReadOptions is what `custodian state read` was asked to do.
type ReadOptions struct {
	App   *cmdutil.App
	Field string // a dotted path into the state ("": the whole state)
}

func newReadCmd(app *cmdutil.App, runF func(context.Context, *ReadOptions) error) *cobra.Command {
	opts := &ReadOptions{App: app}
	return &cobra.Command{
		Use:   "read [FIELD]",
		Short: "Print the state (null when there is none), or one field by dotted path",
		Example: `  custodian state read
  custodian state read currentPhase
  custodian state read stages.PLAN.status`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Field = ""
			if len(args) == 1 {
				opts.Field = args[0]
			}
			return runF(app.Context(cmd), opts)
		},
	}
}

// runRead prints the state, or one field of it.
func runRead(ctx context.Context, opts *ReadOptions) error {
	app := opts.App
	st, err := load(ctx, app)
	if errors.Is(err, errNoState) && opts.Field == "" {
		_, err = io.WriteString(app.Out, "null\n")
		return err
	}
	if err != nil {
		return err
	}
	var v any = st
	if opts.Field != "" {
		if v, err = agentstate.Lookup(st, opts.Field); err != nil {
			return err
		}
		if str, ok := v.(string); ok && !app.JSON {
			_, err = fmt.Fprintln(app.Out, str)
			return err
		}
	}
	return printState(app, v)
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
			} else if raw, err = cmdutil.ReadInput(s.app.In, "stdin"); err != nil {
				return err
			}
			if strings.TrimSpace(string(raw)) == "" {
				return reason.New(reason.InvalidInput, "update needs a JSON object, as the argument or on stdin")
			}
			if err := safetext.CheckJSON("update", raw); err != nil {
				return err
			}
			if _, err := agentstate.DecodeObject(raw); err != nil {
				return reason.New(reason.InvalidInput, "update: %w", err)
			}
			return s.send(cmd, wire.StateRequest{Op: "update", Patch: raw})
		},
	}
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
			if _, err := agentstate.OutputPath(phase, ext); err != nil {
				return err
			}
			var content []byte
			var err error
			if len(args) == 2 && args[1] != "-" {
				f, err := os.Open(args[1])
				if err != nil {
					return reason.New(reason.InvalidInput, "phase output: %w", err)
				}
				content, err = cmdutil.ReadInput(f, args[1])
				f.Close()
				if err != nil {
					return err
				}
			} else if content, err = cmdutil.ReadInput(s.app.In, "stdin"); err != nil {
				return err
			}
			if ext == "json" && !json.Valid(content) {
				return reason.New(reason.InvalidInput, "phase %s output is not valid JSON (--ext json)", phase)
			}
			return s.send(cmd, wire.StateRequest{Op: "record-output", Phase: phase, Ext: ext, Content: content})
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
			if ctxJSON != "" {
				if _, err := agentstate.DecodeObject([]byte(ctxJSON)); err != nil {
					return reason.New(reason.InvalidInput, "--context: %w", err)
				}
			}
			return s.send(cmd, wire.StateRequest{Op: "record-failure", Phase: phase, Error: msg, Context: json.RawMessage(ctxJSON)})
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
			return s.send(cmd, wire.StateRequest{Op: "compact", Summary: summary})
		},
	}
	cmd.Flags().StringVar(&summary, "summary", "", "what the compacted context held")
	return cmd
}

// load reads the state through the application layer (the store applies
// the .tmp recovery rules of the seed).
func load(ctx context.Context, app *cmdutil.App) (agentstate.Object, error) {
	svc, err := app.Service()
	if err != nil {
		return nil, err
	}
	st, _, err := svc.State(ctx)
	return st, err
}

// send completes req with the actor and hands it to commitF.
func (s *stateCmd) send(cmd *cobra.Command, req wire.StateRequest) error {
	req.Actor = cmdutil.Actor(*s.actor)
	return s.commitF(s.app.Context(cmd), &req)
}

// commit runs req through the application layer and prints the state it
// committed.
func (s *stateCmd) commit(ctx context.Context, req *wire.StateRequest) error {
	svc, err := s.app.Service()
	if err != nil {
		return err
	}
	resp, err := svc.UpdateState(ctx, *req)
	if err != nil {
		return err
	}
	return printState(s.app, resp.State)
}

func printState(app *cmdutil.App, v any) error {
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
	_, err = app.Out.Write(b)
	return err
}
