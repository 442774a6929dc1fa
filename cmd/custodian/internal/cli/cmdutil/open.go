package cmdutil

// Opening what a command works on: the store (a running daemon, --store,
// else the embedded file store) and the application layer over it.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"syscall"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/directedit"
	"github.com/custodian-dev/custodian/internal/projectroot"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/wire"
)

// ASDDConfig reads .asdd/config.yaml (app.ReadConfig); a missing file
// means the defaults.
func ASDDConfig(a *App) (*asdd.Config, error) {
	root, err := a.Root()
	if err != nil {
		return nil, err
	}
	return app.ReadConfig(root)
}

// withDirectEdits sets a file store's direct-edit policy and report for
// the project at root (package directedit); reports go to out.
func withDirectEdits(opts *file.Options, root string, out io.Writer) error {
	return directedit.Configure(opts, root, out)
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
	// What the store did on its own (a direct edit adopted or kept aside)
	// is a notice: stderr, whatever the command prints on stdout.
	if err := withDirectEdits(&opts, root, a.Err); err != nil {
		return nil, err
	}
	if opts.Witness, err = projectroot.WitnessDir(root); err != nil {
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

// DefaultSocket is where `custodian serve` listens and where the CLI looks
// for a running daemon, relative to the project root.
const DefaultSocket = wire.DefaultSocket

// Service returns (once) the application layer the commands go through:
// the daemon's (app.Remote) while one runs, else a Local one over the
// command's store and the project's files. Commands never commit to the
// store themselves.
func (a *App) Service() (app.Service, error) {
	st, err := a.Store()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.svc != nil {
		return a.svc, nil
	}
	if c, ok := st.(*client.Client); ok {
		a.svc = app.NewRemote(c)
		return a.svc, nil
	}
	root, err := a.Root()
	if err != nil {
		return nil, err
	}
	a.svc = app.NewLocal(app.Options{
		Store:  st,
		Root:   root,
		Config: func() (*asdd.Config, error) { return ASDDConfig(a) },
		Now:    a.Now,
		// check --read-only writes no file, not even a validity mark.
		ReadOnly: a.ReadOnly,
		// Warnings reach the user through Warn, on stderr.
		Logger: slog.New(slog.DiscardHandler),
		Warn: func(msg string) {
			if a.Err != nil {
				fmt.Fprintf(a.Err, "custodian: warning: %s\n", msg)
			}
		},
	})
	return a.svc, nil
}

// LocalService returns the Local application layer, or an error naming the
// daemon when one runs (for what only the owner of the files may do).
func (a *App) LocalService() (*app.Local, error) {
	svc, err := a.Service()
	if err != nil {
		return nil, err
	}
	if l, ok := svc.(*app.Local); ok {
		return l, nil
	}
	return nil, fmt.Errorf("a daemon serves this project: stop it (custodian serve) to run this command")
}

// AppRemote is the application layer of a running daemon.
type AppRemote = app.Remote

// ReadOnlyHint adds to an error of writing the state files that were
// read-only (EROFS, EACCES, EPERM: an agent's CLI inside its sandbox, with
// no daemon to send the change to) what to do.
func ReadOnlyHint(err error) error {
	if err == nil || !(errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission)) {
		return err
	}
	return fmt.Errorf("%w\n  the state files cannot be written here (inside the agent's sandbox they are read-only), so changes go through the daemon, and none answers on %s: a new Claude Code session starts it (the SessionStart hook), or the human runs custodian serve", err, DefaultSocket)
}
