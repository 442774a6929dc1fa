package storeopen

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/admincred"
	"github.com/custodian-dev/custodian/store"
)

// While a daemon runs, the CLI sends its reads and commits to it: the
// remote store (package client) implements store.Store, and every command
// written against store.Store works unchanged, with the same output and
// exit codes. The daemon is found through --server / $CUSTODIAN_SERVER, or
// the project's socket.

// DaemonToken is the bearer token from the environment:
// $CUSTODIAN_ADMIN_TOKEN when set, else $CUSTODIAN_TOKEN. It never reads
// the admin credential file: `custodian mcp`, an agent's door that Claude
// Code starts outside the sandbox, uses it.
func DaemonToken() string {
	if t := os.Getenv("CUSTODIAN_ADMIN_TOKEN"); t != "" {
		return t
	}
	return os.Getenv("CUSTODIAN_TOKEN")
}

// CLIToken is the bearer token the CLI sends to the daemon of the project
// at root: $CUSTODIAN_ADMIN_TOKEN when set, else the project's admin
// credential when this process can read it (package admincred: a human's
// terminal can, an agent in its sandbox cannot), else $CUSTODIAN_TOKEN. A
// daemon accepts the admin token wherever it accepts the agents' token, and
// the human decisions need it on every door, the unix socket included.
func CLIToken(root string) string {
	if t := os.Getenv("CUSTODIAN_ADMIN_TOKEN"); t != "" {
		return t
	}
	if root != "" {
		if t, err := admincred.Read(root); err == nil {
			return t
		}
	}
	return os.Getenv("CUSTODIAN_TOKEN")
}

// OpenDaemonStore opens the remote store of a daemon: the one --server
// names, else the one listening on the project's socket. ok is false when
// no daemon serves the project (a stale socket is ignored).
func OpenDaemonStore(app *cmdutil.App) (store.Store, bool, error) {
	root, _ := app.Root()
	opts := client.Options{Token: CLIToken(root)}
	if app.ServerURL != "" {
		c, err := client.New(app.ServerURL, opts)
		if err != nil {
			return nil, false, err
		}
		return c, true, nil
	}
	root, err := app.Root()
	if err != nil {
		return nil, false, err
	}
	sock := filepath.Join(root, filepath.FromSlash(cmdutil.DefaultSocket))
	if _, err := os.Stat(sock); errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	c, err := client.New("unix://"+sock, opts)
	if err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Health(ctx); err != nil {
		// A socket left by a daemon that died: the state lock is free
		// again, so the embedded store serves.
		c.Close()
		if app.Err != nil && os.Getenv("CUSTODIAN_DEBUG") != "" {
			fmt.Fprintf(app.Err, "custodian: ignoring stale daemon socket %s: %v\n", sock, err)
		}
		return nil, false, nil
	}
	return c, true, nil
}
