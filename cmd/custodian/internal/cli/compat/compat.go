package compat

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/reason"
)

// custodian compat: drop-ins inside the plugins that wrote the state files
// themselves (package compat).

// Options is what `custodian compat install` or `custodian compat
// uninstall` was asked to do.
type Options struct {
	App       *cmdutil.App
	Dropin    string // its name
	PluginDir string
	Uninstall bool // restore the plugin's originals
}

// NewCmd returns `custodian compat` and its subcommands install and
// uninstall; each parses its command line into Options and calls runF with
// them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	if runF == nil {
		runF = run
	}
	cmd := &cobra.Command{
		Use:   "compat",
		Short: "Install drop-ins inside plugins so that their scripts change state through the custodian",
		Long: `Install drop-ins inside the plugins that write the pipeline's state files
themselves, so that they keep working unchanged with the custodian as the
only writer:

  principled     principled-implementation: every copy of task-manifest.sh
                 becomes the same one-line shim (exec custodian impl "$@"),
                 so the plugin's copy-drift check still passes
  state-manager  ken-cc-plugins subagents/minions: hooks/lib/state.sh gets
                 state_write, state_update and update_state redefined to run
                 custodian apply (the jq program inside a custodian commit)

The originals are kept under DIR/.custodian-compat/NAME and uninstall
restores them byte for byte. A directory that is not the plugin is refused
and nothing is changed.`,
	}
	names := make([]string, 0, len(compat.Dropins))
	for n := range compat.Dropins {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, remove := range []bool{false, true} {
		opts := &Options{App: app, Uninstall: remove}
		verb := "install"
		if remove {
			verb = "uninstall"
		}
		sub := &cobra.Command{
			Use:   verb + " " + strings.Join(names, "|") + " --plugin-dir DIR",
			Short: map[bool]string{false: "Install a drop-in into a plugin's directory", true: "Restore a plugin's original files byte for byte"}[remove],
			Args:  cmdutil.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if _, ok := compat.Dropins[args[0]]; !ok {
					return reason.Usage("unknown drop-in %q (%s)", args[0], strings.Join(names, ", "))
				}
				opts.Dropin = args[0]
				return runF(app.Context(cmd), opts)
			},
		}
		sub.Flags().StringVar(&opts.PluginDir, "plugin-dir", "", "the plugin's directory (required)")
		cmdutil.MarkRequired(sub, "plugin-dir")
		cmd.AddCommand(sub)
	}
	return cmd
}

// run installs or removes the drop-in.
func run(_ context.Context, opts *Options) error {
	remove, dir := opts.Uninstall, opts.PluginDir
	apply := compat.Install
	if remove {
		apply = compat.Uninstall
	}
	rep, err := apply(compat.Dropins[opts.Dropin], dir)
	if err != nil {
		return err
	}
	return opts.App.Render(rep, func(w io.Writer) error {
		done := map[bool]string{false: "replaced", true: "restored"}[remove]
		for _, f := range rep.Changed {
			fmt.Fprintf(w, "%s %s\n", done, f)
		}
		for _, f := range rep.Unchanged {
			fmt.Fprintf(w, "unchanged %s\n", f)
		}
		for _, f := range rep.Skipped {
			fmt.Fprintf(w, "left alone %s: changed since the install\n", f)
		}
		_, err := fmt.Fprintf(w, "%s %s in %s\n", opts.Dropin, map[bool]string{false: "drop-in installed", true: "drop-in removed"}[remove], dir)
		return err
	})
}
