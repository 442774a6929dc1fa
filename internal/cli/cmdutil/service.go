package cmdutil

import (
	"fmt"
	"log/slog"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
)

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
