package mcp

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/mcp"
	"github.com/custodian-dev/custodian/reason"
)

// Options is what `custodian mcp` was asked to do.
type Options struct {
	App      *cmdutil.App
	LogLevel slog.Level // of the notices on stderr
}

// NewCmd returns `custodian mcp`; it parses the command line
// into Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	var logLevel string
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the custodian to agents over the Model Context Protocol (stdio)",
		Long: `Runs an MCP server on stdin/stdout for a coding agent (Claude Code, Codex…):
the custodian's operations as typed tools (status, slice_show, slice_add,
propose, heartbeat, lock, unlock, tasks_ready, task_claim, task_done,
escalations, impl_*, state_read, state_update, cycle_read, cycle_update,
history), the managed documents as resources custodian://doc/<key> (a commit
notifies subscribers), and the prompt custodian-protocol. stdout carries
only the protocol; notices go to stderr.

Every call goes through the same rules as the CLI and reads the latest
revision: through the project's daemon while one runs (its socket, or
--server), else through the project's files, decided again on every call.
The project is -C's (default: the working directory), never remembered from
a call. A rule's rejection is a tool error whose text starts with the
reason code.

The human decisions (resolve, approve, force_unlock, rollback) are tools
only when the project's daemon runs at start and accepts
$CUSTODIAN_ADMIN_TOKEN as its admin token; otherwise the server has an
agent's rights (a human decision is UNAUTHORIZED) and sends the daemon
$CUSTODIAN_TOKEN.`,
		Example: `  # .mcp.json for Claude Code:
  {"mcpServers": {"custodian": {"command": "custodian", "args": ["mcp"]}}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.LogLevel.UnmarshalText([]byte(logLevel)); err != nil {
				return reason.Usage("--log-level %q: want debug, info, warn or error", logLevel)
			}
			return cmdutil.Run(app, cmd, opts, runF, run)
		},
	}
	cmdutil.EnumFlag(cmd, cmd.Flags(), &logLevel, "log-level", "warn", []string{"debug", "info", "warn", "error"}, "log level on stderr")
	return cmd
}

// run serves MCP on stdin and stdout until the client closes it.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	srv, closeAll, err := newStdioMCP(ctx, app, opts.LogLevel)
	if err != nil {
		return err
	}
	defer closeAll()
	return srv.RunStdio(ctx, app.In, app.Out)
}

// newStdioMCP builds the stdio server of `custodian mcp`. It has the human
// decisions only when a daemon runs and accepts $CUSTODIAN_ADMIN_TOKEN
// (verifyAdmin); else it has an agent's rights, and its calls carry
// $CUSTODIAN_TOKEN.
func newStdioMCP(ctx context.Context, a *cmdutil.App, level slog.Level) (*mcp.Server, func(), error) {
	root, err := a.Root()
	if err != nil {
		return nil, nil, err
	}
	svcs := &mcpServices{app: a, root: root, token: os.Getenv("CUSTODIAN_TOKEN")}
	admin := false
	if tok := os.Getenv("CUSTODIAN_ADMIN_TOKEN"); tok != "" {
		admin = svcs.verifyAdmin(ctx, tok)
	}
	logger := slog.New(slog.NewTextHandler(a.Err, &slog.HandlerOptions{Level: level}))
	if !admin && os.Getenv("CUSTODIAN_ADMIN_TOKEN") != "" {
		logger.Warn("$CUSTODIAN_ADMIN_TOKEN is set but no running daemon accepts it: serving an agent's tools only")
	}
	srv := mcp.New(mcp.Options{
		Service:    svcs.get,
		Config:     func() (*asdd.Config, error) { return cmdutil.ASDDConfig(a) },
		Admin:      admin,
		AgentCalls: true,
		Actor:      cmdutil.Actor(""),
		Now:        a.Now,
		Logger:     logger,
	})
	return srv, func() { srv.Close(); svcs.close() }, nil
}

// verifyAdmin reports whether the project's daemon accepts token as its
// admin token, by asking it for a human decision that cannot commit (a
// forced unlock of a slice that does not exist): UNAUTHORIZED to an
// agent, NOT_FOUND to a human. Its calls then carry token.
func (m *mcpServices) verifyAdmin(ctx context.Context, token string) bool {
	saved := m.token
	m.token = token
	svc, err := m.get(ctx)
	if err == nil {
		if _, ok := svc.(*app.Remote); ok {
			_, err = svc.ASDD(ctx, asdd.UnlockSlice{Slice: "SLICE-CUSTODIAN-MCP-ADMIN-CHECK", Force: true, Role: "admin check"})
			if reason.CodeOf(err) == reason.NotFound {
				return true
			}
		}
	}
	m.close()
	m.mu.Lock()
	m.token, m.remote, m.local, m.closeFS, m.remoteOK = saved, nil, nil, nil, time.Time{}
	m.mu.Unlock()
	return false
}

// mcpServices answers, for each call of the stdio server, the project's
// application layer: the daemon's (Remote) while one runs, else a Local
// one over the project's files. Which one is decided again on every call
// (a daemon may start or stop while the agent's session lasts); only the
// connections are kept.
type mcpServices struct {
	app   *cmdutil.App
	root  string
	token string // the daemon's bearer token

	mu      sync.Mutex
	local   *app.Local
	closeFS func() error
	remote  *app.Remote
	// remoteOK is when the daemon last answered its health check.
	remoteOK time.Time
}

func (m *mcpServices) get(ctx context.Context) (app.Service, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.app.ServerURL != "" {
		if m.remote == nil {
			c, err := client.New(m.app.ServerURL, client.Options{Token: m.token})
			if err != nil {
				return nil, err
			}
			m.remote = app.NewRemote(c)
		}
		return m.remote, nil
	}
	sock := filepath.Join(m.root, filepath.FromSlash(cmdutil.DefaultSocket))
	if _, err := os.Stat(sock); err == nil {
		if m.remote == nil {
			c, err := client.New("unix://"+sock, client.Options{Token: m.token})
			if err != nil {
				return nil, err
			}
			m.remote = app.NewRemote(c)
		}
		if time.Since(m.remoteOK) < time.Second {
			return m.remote, nil
		}
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := m.remote.Client().Health(hctx)
		cancel()
		if err == nil {
			m.remoteOK = time.Now()
			return m.remote, nil
		}
		// A socket left by a daemon that died: the files serve.
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if m.local == nil {
		st, err := m.app.OpenFileStore()
		if err != nil {
			return nil, err
		}
		a := m.app
		m.closeFS = st.Close
		m.local = app.NewLocal(app.Options{
			Store:  st,
			Root:   m.root,
			Config: func() (*asdd.Config, error) { return cmdutil.ASDDConfig(a) },
			Now:    a.Now,
			Logger: slog.New(slog.NewTextHandler(a.Err, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
	}
	return m.local, nil
}

func (m *mcpServices) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.remote != nil {
		m.remote.Close()
	}
	if m.closeFS != nil {
		m.closeFS()
	}
}
