package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/internal/admincred"
	"github.com/custodian-dev/custodian/internal/projectroot"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
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
	// ReadOnly is set by a command that promises to write no file (check
	// --read-only) before it opens the service: reads record no validity
	// mark (app.Options.ReadOnly).
	ReadOnly bool

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

// ProjectPath turns a file path as the user typed it — relative to the
// current directory (or -C DIR), or absolute — into the path from the
// project root that the operations take, as git takes paths: intent.md
// typed in docs/ is docs/intent.md. Only the CLI knows the current
// directory, so the conversion happens here, in the door. A path that
// leads out of the project stays out of it ("../x"), for the application
// layer to refuse naming it.
func (a *App) ProjectPath(typed string) (string, error) {
	r, err := a.findRoot()
	if err != nil {
		return "", err
	}
	dir := a.Dir
	if dir == "" {
		dir = "."
	}
	cwd, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	p := filepath.FromSlash(typed)
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	// In a linked git worktree the current directory is in the worktree,
	// whose layout mirrors the project root's (WorkRoot).
	rel, err := filepath.Rel(r.WorkRoot, p)
	if err != nil {
		return typed, nil
	}
	if filepath.IsAbs(typed) && (rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
		return typed, nil // absolute and outside: refused as typed
	}
	return filepath.ToSlash(rel), nil
}

// RequireProject is NOT_FOUND, with the init hint, when no custodian
// project is found from the current directory (or -C DIR): none of the
// directories projectroot looks for is at or above it. Commands that would
// otherwise report "nothing there" and succeed (check, verify) or create
// files (serve) call it, so that a CI job or a daemon started in the wrong
// directory fails instead of passing.
func (a *App) RequireProject() error {
	r, err := a.findRoot()
	if err != nil || r.Marker != "" {
		return err
	}
	dir := a.Dir
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return reason.New(reason.NotFound, "no custodian project at or above %s (none of %s): run `custodian init` there, or name the project with -C DIR", dir, strings.Join(projectroot.Markers, ", "))
}

// Context returns the context commands run under, marked as an agent's
// (app.WithCaller) when this process cannot read the project's admin
// credential although it exists (package admincred): without a daemon,
// the application layer then refuses human decisions as the daemon would.
// Through a daemon the mark does not travel; the token the CLI attaches
// decides (storeopen.CLIToken).
func (a *App) Context(cmd *cobra.Command) context.Context {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if !a.CanDecide() {
		ctx = app.WithCaller(ctx, app.Agent)
	}
	return ctx
}

// CanDecide reports whether this process may make the human decisions
// without a daemon: it can read the project's admin credential, or none
// was ever made (a project set up before there was one; its first serve or
// init makes it), or there is no project here. Without a daemon the state
// files' own permissions are the boundary (the agent's sandbox makes them
// read-only): this check adds that whoever decides can read the credential.
func (a *App) CanDecide() bool {
	root, err := a.Root()
	if err != nil {
		return true
	}
	_, err = admincred.Read(root)
	return err == nil || errors.Is(err, fs.ErrNotExist)
}

// RequireHuman refuses (UNAUTHORIZED) a human decision the daemon does not
// check because it runs without one (repair), when this process cannot read
// the admin credential (CanDecide).
func (a *App) RequireHuman(what string) error {
	if a.CanDecide() {
		return nil
	}
	return reason.New(reason.Unauthorized, "%s is a human decision: it needs the admin credential, which this process cannot read (run it from the human's terminal, outside the agent's sandbox)", what)
}
