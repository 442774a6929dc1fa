package tasks

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
)

func NewCmd(app *cmdutil.App) *cobra.Command {
	cmd := &cobra.Command{Use: "tasks", Short: "A slice's plan: tasks in waves with dependencies"}
	var wave int
	var deps []string
	var title, by, req string
	add := &cobra.Command{
		Use:   "add SLICE TASK --wave N [--depends-on T]...",
		Short: "Add a task to a slice's plan",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.AddTask{Slice: args[0], ID: args[1], Title: title, Wave: wave, DependsOn: deps, Requirement: req, By: by})
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	add.Flags().IntVar(&wave, "wave", 1, "the wave (1, 2, …): wave N starts after wave N-1 is done")
	add.Flags().StringArrayVar(&deps, "depends-on", nil, "a task this one depends on (repeatable)")
	add.Flags().StringVar(&title, "title", "", "what the task is")
	add.Flags().StringVar(&by, "by", "", "the planning agent")
	add.Flags().StringVar(&req, "req", "", "the requirement (REQ-NNN) the task's sub-agent verifies against")

	ready := &cobra.Command{
		Use:   "ready SLICE",
		Short: "List the tasks that may start now",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := cmdutil.LoadManifest(app.Context(cmd), app)
			if err != nil {
				return err
			}
			s, err := m.Find(args[0])
			if err != nil {
				return err
			}
			list := asdd.Ready(s)
			if list == nil {
				list = []asdd.Task{}
			}
			return app.Render(list, func(w io.Writer) error {
				for _, t := range list {
					fmt.Fprintf(w, "%s\twave %d\t%s\n", t.ID, t.Wave, t.Title)
				}
				return nil
			})
		},
	}
	var agent string
	done := &cobra.Command{
		Use:        "done SLICE TASK",
		SuggestFor: []string{"complete", "finish"},
		Short:      "Mark a ready task done",
		Args:       cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.CompleteTask{Slice: args[0], ID: args[1], Agent: agent})
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	done.Flags().StringVar(&agent, "agent", "implementation", "the agent that did it (its claimer, if it was claimed)")
	var claimer string
	claim := &cobra.Command{
		Use:   "claim SLICE TASK --agent A",
		Short: "Claim a ready task for an agent: of concurrent claims one wins, the others get CONFLICT (exit 4)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.Required("agent", claimer); err != nil {
				return err
			}
			out, r, err := cmdutil.ApplyOp(app.Context(cmd), app, asdd.ClaimTask{Slice: args[0], ID: args[1], Agent: claimer})
			if err != nil {
				return err
			}
			cmdutil.SliceResult(out, r, args[0])
			return cmdutil.Finish(app, r, nil)
		},
	}
	claim.Flags().StringVar(&claimer, "agent", "", "the claiming agent (a name of its own, e.g. implementation-3)")
	cmd.AddCommand(add, ready, claim, done)
	return cmd
}
