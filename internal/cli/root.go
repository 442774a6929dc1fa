package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custodian-dev/custodian/app"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/internal/projectroot"
	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// App is what every command gets: the global flags, injected IO and the
// lazily opened store.
type App struct {
	Dir  string // -C: the project root
	JSON bool   // --json: machine-readable output
	// StoreURL is --store (or $CUSTODIAN_STORE): which backend holds the
	// state, e.g. etcd://host:2379/prefix; empty means the embedded file
	// store (or the project config's store: setting).
	StoreURL string
	// ServerURL is --server (or $CUSTODIAN_SERVER): a running daemon to send
	// operations to; empty means look for the project's socket.
	ServerURL string
	In        io.Reader
	Out       io.Writer
	Err       io.Writer
	// IsTTY reports whether Out is a terminal (colour, tables).
	IsTTY bool
	// Now is the clock; tests replace it.
	Now func() time.Time

	mu      sync.Mutex
	store   store.Store
	svc     app.Service
	rootMu  sync.Mutex         // Store holds mu while it calls Root
	root    projectroot.Result // findRoot's answer for rootFor
	rootFor string
}

// Root returns the absolute project root: found from the current directory
// (or -C DIR) as git finds a repository — the nearest directory up holding
// .asdd, .impl, .agents/tmp or .workflow/.cycle, else the git top level —
// and, inside a linked git worktree, in the main checkout, so that every
// worktree of a repository shares one state (package projectroot).
func (a *App) Root() (string, error) {
	r, err := a.findRoot()
	return r.Root, err
}

// WorkRoot is Root as seen from the current work tree: inside a linked git
// worktree, the same place in the worktree rather than in the main checkout.
// Files that belong to the checked-out tree (Claude Code's project settings,
// the generated command docs) are written there; state never is.
func (a *App) WorkRoot() (string, error) {
	r, err := a.findRoot()
	return r.WorkRoot, err
}

func (a *App) findRoot() (projectroot.Result, error) {
	dir := a.Dir
	if dir == "" {
		dir = "."
	}
	a.rootMu.Lock()
	defer a.rootMu.Unlock()
	if a.root.Root != "" && a.rootFor == dir {
		return a.root, nil
	}
	r, err := projectroot.Find(dir)
	if err != nil {
		return r, fmt.Errorf("project root: %w", err)
	}
	a.root, a.rootFor = r, dir
	return r, nil
}

// StoreOpener may open the store a command uses instead of the embedded
// file store: a running daemon's remote store, an etcd backend. It returns
// ok false when it does not apply to this invocation.
type StoreOpener func(app *App) (s store.Store, ok bool, err error)

var (
	openersMu sync.Mutex
	openers   []namedOpener
)

type namedOpener struct {
	name  string
	order int
	open  StoreOpener
}

// RegisterStoreOpener adds an opener; openers are tried in ascending order
// (then by name) and the first that applies wins. The embedded file store
// is the fallback.
func RegisterStoreOpener(name string, order int, open StoreOpener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers = append(openers, namedOpener{name, order, open})
	sort.Slice(openers, func(i, j int) bool {
		if openers[i].order != openers[j].order {
			return openers[i].order < openers[j].order
		}
		return openers[i].name < openers[j].name
	})
}

// Store opens (once) the store the command works on: the first registered
// opener that applies (a running daemon, --store etcd://…), else the
// embedded file store under the project root.
func (a *App) Store() (store.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store != nil {
		return a.store, nil
	}
	openersMu.Lock()
	list := append([]namedOpener(nil), openers...)
	openersMu.Unlock()
	for _, o := range list {
		s, ok, err := o.open(a)
		if err != nil {
			return nil, fmt.Errorf("open store (%s): %w", o.name, err)
		}
		if ok {
			a.store = s
			return s, nil
		}
	}
	s, err := a.OpenFileStore()
	if err != nil {
		return nil, err
	}
	a.store = s
	return s, nil
}

// OpenFileStore opens the embedded file store under the project root,
// bypassing the openers (the daemon itself uses it).
func (a *App) OpenFileStore() (*file.Store, error) {
	root, err := a.Root()
	if err != nil {
		return nil, err
	}
	opts := file.Options{Now: a.Now}
	if v := os.Getenv("CUSTODIAN_MAX_DOCUMENT_BYTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, reason.New(reason.InvalidInput, "CUSTODIAN_MAX_DOCUMENT_BYTES=%q is not a positive number of bytes", v)
		}
		opts.Limits.MaxBytes = n
	}
	out := a.Out
	if a.JSON {
		out = a.Err // stdout holds one JSON document
	}
	if err := withDirectEdits(&opts, root, out); err != nil {
		return nil, err
	}
	return file.Open(root, opts)
}

// Close releases the store.
func (a *App) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store == nil {
		return nil
	}
	err := a.store.Close()
	a.store = nil
	return err
}

// Render writes v as indented JSON when --json is set, otherwise calls text.
func (a *App) Render(v any, text func(w io.Writer) error) error {
	if a.JSON {
		return WriteJSON(a.Out, v)
	}
	// Text from the state goes to a terminal: no escape sequence, control
	// character or bidirectional override in it is passed on
	// (safetext.TerminalText); the output's own newlines, tabs and colours
	// are.
	var buf bytes.Buffer
	err := text(&buf)
	if _, werr := a.Out.Write(safetext.TerminalText(buf.Bytes())); err == nil {
		err = werr
	}
	return err
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Context returns the context commands run under.
func (a *App) Context(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

var (
	regMu    sync.Mutex
	builders = map[string]func(*App) *cobra.Command{}
)

// Register adds a top-level command. name keeps registration deterministic.
func Register(name string, build func(*App) *cobra.Command) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := builders[name]; dup {
		panic("cli: command registered twice: " + name)
	}
	builders[name] = build
}

// NewRoot builds the root command for app.
func NewRoot(app *App) *cobra.Command {
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
	root.SetFlagErrorFunc(flagError)
	regMu.Lock()
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		root.AddCommand(builders[n](app))
	}
	regMu.Unlock()
	addVersion(app, root)
	// cobra adds these when it executes; added now, completion gets the
	// same unknown-subcommand handling as every other command.
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	requireKnownSubcommands(root)
	return root
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

// Main runs the CLI and returns the process exit code. Errors are printed
// here and nowhere else: "custodian: CODE: message" on stderr, or with
// --json an {"error":{…}} object on stdout.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := &App{In: stdin, Out: stdout, Err: stderr, Now: monotonicClock(), IsTTY: isTerminal(stdout)}
	return run(app, args, true)
}

// Run runs the CLI with app's IO and clock and returns the exit code; Main
// and in-process tests share it.
func Run(app *App, args []string) int { return run(app, args, false) }

// run is Run; process says that the command is the whole process (Main),
// whose garbage collector is then set for it (tuneGC).
func run(app *App, args []string, process bool) int {
	root := NewRoot(app)
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
		err = rejected(err) // refused before or by the rules: nothing changed
	}
	if err == nil {
		return reason.ExitOK
	}
	if !errors.As(err, new(*ExitError)) {
		printError(app, err)
	}
	return exitCode(err)
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

// exitCode is the process exit code for an error a command returned.
func exitCode(err error) int {
	var exit *ExitError
	if errors.As(err, &exit) {
		return exit.Code
	}
	if _, ok := reason.As(err); !ok && isCobraUsage(err) {
		return reason.ExitUsage
	}
	return reason.ExitCode(err)
}

// isCobraUsage recognises the command-line errors cobra itself returns.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "required flag(s)", "accepts ", "requires at least", "requires at most", "invalid argument", "flag needs an argument", "if any flags in the group"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, ": "+p) {
			return true
		}
	}
	return false
}

// ExitError ends the command with a code and nothing more printed (the
// command has printed what it had to say).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

func printError(app *App, err error) {
	var rej *rejectedError
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
		_ = WriteJSON(app.Out, body)
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
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
