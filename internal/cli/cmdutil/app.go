package cmdutil

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/app"
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
	// Openers are tried in order before the embedded file store (the
	// fallback); the composition root hands them in (StoreOpeners).
	Openers []StoreOpener

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
// file store: a running daemon's remote store, an etcd backend. Open
// returns ok false when it does not apply to this invocation.
type StoreOpener struct {
	Name string
	Open func(app *App) (s store.Store, ok bool, err error)
}

// Store opens (once) the store the command works on: the first of
// Openers that applies (a running daemon, --store etcd://…), else the
// embedded file store under the project root.
func (a *App) Store() (store.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store != nil {
		return a.store, nil
	}
	for _, o := range a.Openers {
		s, ok, err := o.Open(a)
		if err != nil {
			return nil, fmt.Errorf("open store (%s): %w", o.Name, err)
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

// ExitError ends the command with a code and nothing more printed (the
// command has printed what it had to say).
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit %d", e.Code) }
