package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/apply"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/approve"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/assumption"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/bench"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/compat"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cycle"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/demo"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/doc"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/escalations"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/halt"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/heartbeat"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/hook"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/impl"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/initcmd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/integrity"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/lock"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/mcp"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/migrate"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/mirror"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/monitor"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/propose"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/quick"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/resolve"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/run"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/schema"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/serve"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/slice"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/state"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/status"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/storeopen"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/tasks"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/version"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/watch"
	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
)

// App is what every command gets (cmdutil.App): the global flags, injected
// IO, the clock and the store openers. Callers of Run build one.
type App = cmdutil.App

// NewRoot builds the root command for app, with every command.
func NewRoot(app *cmdutil.App) *cobra.Command {
	root := newBareRoot(app)
	for _, c := range rootCommands() {
		root.AddCommand(c.new(app))
	}
	finishRoot(app, root)
	return root
}

// newBareRoot is the root command without its commands.
func newBareRoot(app *cmdutil.App) *cobra.Command {
	root := &cobra.Command{
		Use:           "custodian",
		Short:         "The keeper of a multi-agent pipeline's state",
		Long:          "Custodian keeps a pipeline's state in one manifest that every agent reads and changes only through it: each proposed change is validated against the pipeline's rules and committed atomically and durably, or rejected with a reason and nothing changed.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&app.Dir, "dir", "C", "", "run as if started in `DIR` (the project is found from there, as git finds a repository)")
	root.PersistentFlags().BoolVar(&app.JSON, "json", false, "print machine-readable JSON")
	root.PersistentFlags().StringVar(&app.StoreURL, "store", os.Getenv("CUSTODIAN_STORE"), "state backend `URL` (etcd://host:2379[,host:2379]/prefix); default: the embedded file store")
	root.PersistentFlags().StringVar(&app.ServerURL, "server", os.Getenv("CUSTODIAN_SERVER"), "send operations to the daemon at `URL` (default: the project's socket, if a daemon runs)")
	root.SetIn(app.In)
	root.SetOut(app.Out)
	root.SetErr(app.Err)
	root.SetFlagErrorFunc(cmdutil.FlagError)
	return root
}

// finishRoot adds what every root has after its commands: version,
// completion and help, and the check of subcommand words.
func finishRoot(app *cmdutil.App, root *cobra.Command) {
	version.AddVersion(app, root)
	// cobra adds these when it executes; added now, completion gets the
	// same unknown-subcommand handling as every other command.
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	requireKnownSubcommands(root)
}

// rootCommands are the root's commands (version aside: version.AddVersion
// adds it with the root's --version), each with the name it has, so that a
// process that runs one builds only that one (newRootFor): building every
// command with its flags was 4 % of the CPU of custodian version.
// TestRootCommandNames holds the names to the commands.
type rootCommand struct {
	name string
	new  func(*cmdutil.App) *cobra.Command
}

func rootCommands() []rootCommand {
	return []rootCommand{
		// ASDD: the manifest of slices, agents and gates
		{"init", func(a *App) *cobra.Command { return initcmd.NewCmd(a, nil) }},
		{"schema", func(a *App) *cobra.Command { return schema.NewCmd(a, nil) }},
		{"status", func(a *App) *cobra.Command { return status.NewCmd(a, nil) }},
		{"slice", func(a *App) *cobra.Command { return slice.NewCmd(a, nil) }},
		{"propose", func(a *App) *cobra.Command { return propose.NewCmd(a, nil) }},
		{"quick", func(a *App) *cobra.Command { return quick.NewCmd(a, nil) }},
		{"lock", func(a *App) *cobra.Command { return lock.NewLockCmd(a, nil) }},
		{"unlock", func(a *App) *cobra.Command { return lock.NewUnlockCmd(a, nil) }},
		{"resolve", func(a *App) *cobra.Command { return resolve.NewCmd(a, nil) }},
		{"approve", func(a *App) *cobra.Command { return approve.NewCmd(a, nil) }},
		{"heartbeat", func(a *App) *cobra.Command { return heartbeat.NewCmd(a, nil) }},
		{"tasks", func(a *App) *cobra.Command { return tasks.NewCmd(a, nil) }},
		{"escalations", func(a *App) *cobra.Command { return escalations.NewCmd(a, nil) }},
		{"halt", func(a *App) *cobra.Command { return halt.NewCmd(a, nil) }},
		{"assumption", func(a *App) *cobra.Command { return assumption.NewCmd(a, nil) }},
		{"demo", func(a *App) *cobra.Command { return demo.NewDemoCmd(a, nil) }},
		{"demo-agent", func(a *App) *cobra.Command { return demo.NewDemoAgentCmd(a, nil) }},
		// the other documents
		{"impl", func(a *App) *cobra.Command { return impl.NewCmd(a, nil) }},
		{"state", func(a *App) *cobra.Command { return state.NewCmd(a, nil) }},
		{"cycle", func(a *App) *cobra.Command { return cycle.NewCmd(a, nil) }},
		{"apply", func(a *App) *cobra.Command { return apply.NewCmd(a, nil) }},
		// running agents and watching them
		{"run", func(a *App) *cobra.Command { return run.NewCmd(a, nil) }},
		{"watch", func(a *App) *cobra.Command { return watch.NewCmd(a, nil) }},
		{"monitor", func(a *App) *cobra.Command { return monitor.NewCmd(a, nil) }},
		{"serve", func(a *App) *cobra.Command { return serve.NewCmd(a, nil) }},
		// the store's documents and their history
		{"get", func(a *App) *cobra.Command { return doc.NewGetCmd(a, nil) }},
		{"history", func(a *App) *cobra.Command { return doc.NewHistoryCmd(a, nil) }},
		{"diff", func(a *App) *cobra.Command { return doc.NewDiffCmd(a, nil) }},
		{"rollback", func(a *App) *cobra.Command { return doc.NewRollbackCmd(a, nil) }},
		{"debug", func(a *App) *cobra.Command { return doc.NewDebugCmd(a, nil) }},
		// integrity
		{"check", func(a *App) *cobra.Command { return integrity.NewCheckCmd(a, nil) }},
		{"verify", func(a *App) *cobra.Command { return integrity.NewVerifyCmd(a, nil) }},
		{"repair", func(a *App) *cobra.Command { return integrity.NewRepairCmd(a, nil) }},
		{"rebuild", func(a *App) *cobra.Command { return integrity.NewRebuildCmd(a, nil) }},
		{"review", func(a *App) *cobra.Command { return integrity.NewReviewCmd(a, nil) }},
		// integration with agents and other tools
		{"hook", func(a *App) *cobra.Command { return hook.NewHookCmd(a, nil) }},
		{"plugin", func(a *App) *cobra.Command { return hook.NewPluginCmd(a, nil) }},
		{"mcp", func(a *App) *cobra.Command { return mcp.NewCmd(a, nil) }},
		{"mirror", func(a *App) *cobra.Command { return mirror.NewCmd(a, nil) }},
		{"migrate", func(a *App) *cobra.Command { return migrate.NewCmd(a, nil) }},
		{"compat", func(a *App) *cobra.Command { return compat.NewCmd(a, nil) }},
		{"bench", bench.NewCmd},
	}
}

// newRootFor is NewRoot for a process that runs args: when they name one
// of rootCommands, the root gets only that one (and version), which is
// all a run of it needs; anything else (help, completion, a word that is
// no command, flags cobra would read otherwise) gets the whole tree, as
// help, suggestions and completion list every command.
func newRootFor(app *cmdutil.App, args []string) *cobra.Command {
	try := func(name string, add func(*cmdutil.App) *cobra.Command) *cobra.Command {
		if !slices.Contains(args, name) {
			return nil
		}
		root := newBareRoot(app)
		if add != nil {
			root.AddCommand(add(app))
		}
		finishRoot(app, root)
		if found, _, err := root.Find(args); err == nil && found != root && rootChild(found).Name() == name {
			return root
		}
		return nil
	}
	if root := try("version", nil); root != nil {
		return root
	}
	for _, c := range rootCommands() {
		if root := try(c.name, c.new); root != nil {
			return root
		}
	}
	return NewRoot(app)
}

// rootChild returns the root's child that c is or is under.
func rootChild(c *cobra.Command) *cobra.Command {
	for c.HasParent() && c.Parent().HasParent() {
		c = c.Parent()
	}
	return c
}

// requireKnownSubcommands makes every command that has subcommands (the
// root included, recursively) reject what is not one of them: an unknown
// word is a usage error (exit 2) naming the command, a suggestion when one
// is close and the list of subcommands; a bare noun ("custodian tasks") is a
// usage error too, with its subcommands listed. A command that does
// something itself when run without a subcommand keeps its own RunE and
// only gets the check of its arguments.
func requireKnownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		requireKnownSubcommands(sub)
	}
	if !c.HasSubCommands() {
		return
	}
	runnable := c.Runnable()
	c.SuggestionsMinimumDistance = 2
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return unknownSubcommand(cmd, args[0])
	}
	if !runnable {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if !cmd.HasParent() {
				return cmd.Help() // bare "custodian": the overview
			}
			return reason.Usage("%s needs a subcommand: %s (see %s --help)", cmd.CommandPath(), strings.Join(subcommandNames(cmd), ", "), cmd.CommandPath())
		}
	}
}

// unknownSubcommand is the usage error for a word that is not one of cmd's
// subcommands.
func unknownSubcommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += fmt.Sprintf(": did you mean %q?", s[0])
		for _, o := range s[1:] {
			msg += fmt.Sprintf(" or %q?", o)
		}
	}
	if names := subcommandNames(cmd); len(names) <= 12 {
		msg += fmt.Sprintf(" (%s: %s)", cmd.CommandPath(), strings.Join(names, ", "))
	} else {
		msg += fmt.Sprintf(" (see %s --help)", cmd.CommandPath())
	}
	return reason.Usage("%s", msg)
}

// subcommandNames lists cmd's visible subcommands.
func subcommandNames(cmd *cobra.Command) []string {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return names
}

// StoreOpeners are the stores a command may work on besides the embedded
// file store, in the order they are tried: a running daemon (--server, or
// the project's socket), then etcd (--store, $CUSTODIAN_STORE or the
// project config's store: setting).
func StoreOpeners() []cmdutil.StoreOpener {
	return []cmdutil.StoreOpener{{Name: "daemon", Open: storeopen.OpenDaemonStore}, {Name: "etcd", Open: storeopen.OpenEtcdStore}}
}

// Main runs the CLI and returns the process exit code. Errors are printed
// here and nowhere else: "custodian: CODE: message" on stderr, or with
// --json an {"error":{…}} object on stdout.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &cmdutil.App{In: stdin, Out: stdout, Err: stderr, Now: monotonicClock(), IsTTY: cmdutil.IsTerminal(stdout), Openers: StoreOpeners()}
	return execute(app, args, true)
}

// Run runs the CLI with app's IO and clock and returns the exit code; Main
// and in-process tests share it. An app without Openers gets
// StoreOpeners().
func Run(app *cmdutil.App, args []string) int { return execute(app, args, false) }

// execute is Run; process says that the command is the whole process
// (Main), whose garbage collector is then set for it (tuneGC).
func execute(app *cmdutil.App, args []string, process bool) int {
	if app.Openers == nil {
		app.Openers = StoreOpeners()
	}
	root := newRootFor(app, args)
	root.SetArgs(args)
	if process {
		tuneGC(root, args)
	}
	var ran *cobra.Command
	err := checkArgs(args)
	if err == nil {
		ran, err = root.ExecuteC()
	}
	if cerr := app.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if ran != nil && asddOperations[ran.CommandPath()] {
		err = cmdutil.Rejected(err) // refused before or by the rules: nothing changed
	}
	if err == nil {
		return reason.ExitOK
	}
	if !errors.As(err, new(*cmdutil.ExitError)) {
		printError(app, cmdutil.ReadOnlyHint(err))
	}
	return cmdutil.ExitCode(err)
}

// checkArgs refuses arguments that are not valid UTF-8 (INVALID_INPUT):
// they would be committed with U+FFFD in place of what was sent.
func checkArgs(args []string) error {
	for i, a := range args {
		if err := safetext.CheckString(fmt.Sprintf("argument %d", i+1), a); err != nil {
			return err
		}
	}
	return nil
}

// asddOperations are the commands that propose a change of the ASDD
// manifest: a refusal of theirs says that nothing changed.
var asddOperations = map[string]bool{
	"custodian propose": true, "custodian quick": true, "custodian halt": true, "custodian resolve": true,
	"custodian approve": true, "custodian lock": true, "custodian unlock": true, "custodian heartbeat": true,
	"custodian slice add": true, "custodian tasks add": true, "custodian tasks done": true,
	"custodian assumption correct": true, "custodian review": true,
}

func printError(app *cmdutil.App, err error) {
	var rej *cmdutil.RejectedError
	isRejection := errors.As(err, &rej)
	if app.JSON {
		e, ok := reason.As(err)
		if !ok {
			code := reason.Code("INTERNAL")
			if reason.ExitCode(err) == reason.ExitUsage {
				code = "USAGE"
			}
			e = &reason.Error{Code: code, Message: err.Error()}
		}
		body := map[string]any{"error": e}
		if isRejection { // an operation refused: say that nothing changed
			body["committed"], body["outcome"] = false, "rejected"
		}
		_ = cmdutil.WriteJSON(app.Out, body)
		return
	}
	if isRejection {
		fmt.Fprintf(app.Err, "custodian: rejected, nothing changed: %v\n", err)
		return
	}
	// An error may quote what a caller sent: no escape sequence of it
	// reaches the terminal.
	fmt.Fprintf(app.Err, "custodian: %s\n", safetext.TerminalText([]byte(err.Error())))
}

// monotonicClock is the wall clock read once, then advanced by the
// monotonic clock: a long-running process (the daemon) does not see the
// wall clock step back or forward (issue 18 item 10). Record times stay
// ordered across processes through the store (a commit's time is never
// earlier than its predecessor's).
func monotonicClock() func() time.Time {
	start := time.Now()
	return func() time.Time { return start.Add(time.Since(start)).Round(0) }
}
