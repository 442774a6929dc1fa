package tasks

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// AddOptions is what `custodian tasks add` was asked to do.
type AddOptions struct {
	App         *cmdutil.App
	Slice, Task string
	Wave        int
	DependsOn   []string
	Title       string
	By          string // the planning agent
	Requirement string // REQ-NNN
}

// ReadyOptions is what `custodian tasks ready` was asked to do.
type ReadyOptions struct {
	App   *cmdutil.App
	Slice string
}

// DoneOptions is what `custodian tasks done` and `custodian tasks claim`
// were asked to do.
type DoneOptions struct {
	App         *cmdutil.App
	Slice, Task string
	Agent       string // who did it, or who claims it
}

// Runs are the functions the subcommands call with their options; a nil
// one runs the command.
type Runs struct {
	Add   func(context.Context, *AddOptions) error
	Ready func(context.Context, *ReadyOptions) error
	Done  func(context.Context, *DoneOptions) error
	Claim func(context.Context, *DoneOptions) error
}

// NewCmd returns `custodian tasks` and its subcommands add, ready, claim
// and done; each parses its command line into options and calls its
// function in runs (nil: the command's own).
func NewCmd(app *cmdutil.App, runs *Runs) *cobra.Command {
	r := Runs{Add: runAdd, Ready: runReady, Done: runDone, Claim: runClaim}
	if runs != nil {
		r = *runs
	}
	cmd := &cobra.Command{Use: "tasks", Short: "A slice's plan: tasks in waves with dependencies"}

	addOpts := &AddOptions{App: app}
	add := &cobra.Command{
		Use:   "add SLICE TASK --wave N [--depends-on T]...",
		Short: "Add a task to a slice's plan",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			addOpts.Slice, addOpts.Task = args[0], args[1]
			return r.Add(app.Context(cmd), addOpts)
		},
	}
	add.Flags().IntVar(&addOpts.Wave, "wave", 1, "the wave (1, 2, …): wave N starts after wave N-1 is done")
	add.Flags().StringArrayVar(&addOpts.DependsOn, "depends-on", nil, "a task this one depends on (repeatable)")
	add.Flags().StringVar(&addOpts.Title, "title", "", "what the task is")
	add.Flags().StringVar(&addOpts.By, "by", "", "the planning agent")
	add.Flags().StringVar(&addOpts.Requirement, "req", "", "the requirement (REQ-NNN) the task's sub-agent verifies against")

	readyOpts := &ReadyOptions{App: app}
	ready := &cobra.Command{
		Use:   "ready SLICE",
		Short: "List the tasks that may start now",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			readyOpts.Slice = args[0]
			return r.Ready(app.Context(cmd), readyOpts)
		},
	}

	doneOpts := &DoneOptions{App: app}
	done := &cobra.Command{
		Use:        "done SLICE TASK",
		SuggestFor: []string{"complete", "finish"},
		Short:      "Mark a ready task done",
		Args:       cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			doneOpts.Slice, doneOpts.Task = args[0], args[1]
			return r.Done(app.Context(cmd), doneOpts)
		},
	}
	done.Flags().StringVar(&doneOpts.Agent, "agent", "implementation", "the agent that did it (its claimer, if it was claimed)")

	claimOpts := &DoneOptions{App: app}
	claim := &cobra.Command{
		Use:   "claim SLICE TASK --agent A",
		Short: "Claim a ready task for an agent: of concurrent claims one wins, the others get CONFLICT (exit 4)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("agent", claimOpts.Agent); err != nil {
				return err
			}
			claimOpts.Slice, claimOpts.Task = args[0], args[1]
			return r.Claim(app.Context(cmd), claimOpts)
		},
	}
	claim.Flags().StringVar(&claimOpts.Agent, "agent", "", "the claiming agent (a name of its own, e.g. implementation-3)")
	cmd.AddCommand(add, ready, claim, done)
	return cmd
}

func runAdd(ctx context.Context, o *AddOptions) error {
	return commit(ctx, o.App, o.Slice, asdd.AddTask{Slice: o.Slice, ID: o.Task, Title: o.Title, Wave: o.Wave, DependsOn: o.DependsOn, Requirement: o.Requirement, By: o.By})
}

func runDone(ctx context.Context, o *DoneOptions) error {
	return commit(ctx, o.App, o.Slice, asdd.CompleteTask{Slice: o.Slice, ID: o.Task, Agent: o.Agent})
}

func runClaim(ctx context.Context, o *DoneOptions) error {
	return commit(ctx, o.App, o.Slice, asdd.ClaimTask{Slice: o.Slice, ID: o.Task, Agent: o.Agent})
}

// commit proposes op and reports the slice's committed state.
func commit(ctx context.Context, app *cmdutil.App, slice string, op asdd.Op) error {
	_, r, err := cmdutil.ApplyOp(ctx, app, op)
	if err != nil {
		return err
	}
	return cmdutil.Finish(app, r, nil)
}

// runReady lists the slice's tasks that may start now.
func runReady(ctx context.Context, o *ReadyOptions) error {
	m, err := cmdutil.LoadManifest(ctx, o.App)
	if err != nil {
		return err
	}
	s, err := m.Find(o.Slice)
	if err != nil {
		return err
	}
	list := asdd.Ready(s)
	if list == nil {
		list = []asdd.Task{}
	}
	return o.App.Render(list, func(w io.Writer) error {
		for _, t := range list {
			fmt.Fprintf(w, "%s\twave %d\t%s\n", t.ID, t.Wave, t.Title)
		}
		return nil
	})
}
