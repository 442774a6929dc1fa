package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/storeopen"
	"github.com/custodian-dev/custodian/daemon"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
)

// Options are the flags of `custodian serve`.
type Options struct {
	App              *cmdutil.App
	Addr             string
	Socket           string
	Token            string
	AdminToken       string
	SnapshotInterval time.Duration
	MonitorEvery     time.Duration
	LogLevel         string
	// MaxWatchers caps the watch streams open at once (server.Options).
	MaxWatchers int
	// MemoryLimit is the Go runtime's soft memory limit ("160MB"; "0" for
	// none). $GOMEMLIMIT, when set, wins.
	MemoryLimit string
	// SegmentSize is the size past which a journal is sealed into a
	// segment ("64MB"; "" for $CUSTODIAN_JOURNAL_SEGMENT_BYTES or the
	// default).
	SegmentSize string
}

// NewCmd returns `custodian serve`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	o := &Options{App: app}
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7420] [--socket .asdd/state/custodian.sock]",
		Short: "Run the custodian daemon: one process that holds the state and commits every proposal",
		Long: `Runs the Knowledge Agent of seed 000 as a daemon. It takes the project's
state lock for its lifetime (a second daemon refuses to start and names the
holder's pid), keeps the state in memory, and serves the HTTP/JSON API on a
unix socket (.asdd/state/custodian.sock) and on a TCP address (loopback by
default; a non-loopback address needs --token or $CUSTODIAN_TOKEN).

Proposals that arrive together share one journal fsync (group commit); a
commit is acknowledged only once its journal line is synced. The readable
snapshot files are rewritten at most every --snapshot-interval (50ms) and on
shutdown, so a plugin reading manifest.json directly sees it at most that
much (plus one rewrite) behind; the API always answers from the latest
commit. The heartbeat monitor runs every --monitor-every.

The web dashboard is served at / (http://127.0.0.1:7420/ by default): the
board, live. Human decisions (init, resolve, approve, review, rollback, a
forced unlock, correct-assumption, raw writes of the manifest) need the
admin token on every door, the unix socket included: by default the
project's admin credential, $XDG_CONFIG_HOME/custodian/<project>/admin-token
(mode 0600, created by the first serve or init), which the CLI reads and
sends, so a person at the terminal notices nothing; an agent whose sandbox
hides that file gets agent rights (UNAUTHORIZED, exit 6, on a human
decision). --admin-token or $CUSTODIAN_ADMIN_TOKEN set another token.

While it runs, every custodian command in the project (or with --server /
$CUSTODIAN_SERVER) sends its reads and commits to it, with the same output
and exit codes as without it. SIGTERM or SIGINT stops it cleanly: no new
connections, in-flight requests finish, pending commits are synced, the
snapshots are rewritten, the socket is removed.

On etcd (--store etcd://…, $CUSTODIAN_STORE, or store: in .asdd/config.yaml)
the daemon serves the etcd store instead: there is no state lock, and
several daemons (on several machines, or in several directories) may serve
one prefix at once, etcd ordering their commits; the socket and the pid
file stay one per project directory. --snapshot-interval does not apply.
The daemon keeps this machine's read-only mirrors of the documents at their
usual paths current from the etcd watch, for plugins that read the files
(see custodian mirror).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Run(app, cmd, o, runF, run)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:7420", "TCP `address` to listen on (\"\" for the socket only)")
	f.StringVar(&o.Socket, "socket", cmdutil.DefaultSocket, "unix socket `path`, relative to the project root (\"\" for none)")
	f.StringVar(&o.Token, "token", os.Getenv("CUSTODIAN_TOKEN"), "bearer `token` of the agents over TCP (required off loopback); without it a change over TCP needs the admin token, and agents use the unix socket")
	f.StringVar(&o.AdminToken, "admin-token", os.Getenv("CUSTODIAN_ADMIN_TOKEN"), "bearer `token` for the human decisions on every door (resolve, approve, review, rollback, raw writes of the manifest); default: the project's admin credential file, created when missing")
	f.DurationVar(&o.SnapshotInterval, "snapshot-interval", 50*time.Millisecond, "least time between two rewrites of a snapshot file")
	f.DurationVar(&o.MonitorEvery, "monitor-every", time.Minute, "heartbeat monitor interval (0 disables it)")
	cmdutil.EnumFlag(cmd, f, &o.LogLevel, "log-level", "info", []string{"debug", "info", "warn", "error"}, "log level")
	f.IntVar(&o.MaxWatchers, "max-watchers", server.DefaultMaxWatchers, "most watch streams open at once; one more is refused with 503 and Retry-After")
	f.StringVar(&o.MemoryLimit, "memory-limit", "160MB", "soft memory `limit` for the daemon's garbage collector (0: none; $GOMEMLIMIT wins)")
	f.StringVar(&o.SegmentSize, "journal-segment-size", "", "`size` past which a journal is sealed into a segment file (default $CUSTODIAN_JOURNAL_SEGMENT_BYTES, else 64MB)")
	return cmd
}

// run runs the daemon (package daemon) that the flags describe until
// SIGTERM or SIGINT.
func run(ctx context.Context, o *Options) error {
	cfg, err := serveConfig(o.App, o)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = daemon.Run(ctx, cfg)
	if errors.Is(err, syscall.EADDRINUSE) && cfg.Addr != "" {
		return addrInUse(ctx, cfg.Addr, err)
	}
	return err
}

// addrInUse explains a TCP address another process listens on: which
// address, that --addr chooses another, and whether a custodian daemon
// answers there (its health check), with the project it names if it does.
func addrInUse(ctx context.Context, addr string, err error) error {
	who := "another process listens there"
	if project, ok := custodianAt(ctx, addr); ok {
		who = "a custodian daemon already answers there (GET /v1/health)"
		if project != "" {
			who = "a custodian daemon for " + project + " already answers there"
		}
	}
	msg := fmt.Sprintf("cannot listen on %s, the address is in use: %s; serve on another address with --addr 127.0.0.1:PORT, or on the unix socket only with --addr \"\"", addr, who)
	return &reason.Error{Code: reason.Conflict, Message: msg, Err: err}
}

// custodianAt reports whether a custodian daemon answers GET /v1/health at
// addr, and the project its answer names, if any.
func custodianAt(ctx context.Context, addr string) (project string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/health", nil)
	if err != nil {
		return "", false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	var health struct {
		OK      bool   `json:"ok"`
		Root    string `json:"root"`
		Project string `json:"project"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&health) != nil || !health.OK {
		return "", false
	}
	return cmp.Or(health.Project, health.Root), true
}

// serveConfig translates the flags, the environment and the project's
// store setting into the daemon's configuration.
func serveConfig(app *cmdutil.App, o *Options) (daemon.Config, error) {
	cfg := daemon.Config{Addr: o.Addr, Socket: o.Socket, Token: o.Token, AdminToken: o.AdminToken, AdminCredential: true,
		SnapshotInterval: o.SnapshotInterval, MonitorEvery: o.MonitorEvery, MaxWatchers: o.MaxWatchers,
		Board: true, MCP: true, Stdout: app.Out, Stderr: app.Err, Now: app.Now}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return cfg, reason.Usage("--log-level %q: want debug, info, warn or error", o.LogLevel)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(app.Err, &slog.HandlerOptions{Level: level}))
	var err error
	if cfg.MemoryLimit, err = memoryLimit(o.MemoryLimit); err != nil {
		return cfg, err
	}
	if cfg.SegmentBytes, err = optionalSize("--journal-segment-size", o.SegmentSize, "64MB"); err != nil {
		return cfg, err
	}
	if cfg.MaxDocumentBytes, err = maxDocumentBytes(); err != nil {
		return cfg, err
	}
	if cfg.Root, err = app.Root(); err != nil {
		return cfg, err
	}
	if cfg.Store, err = storeopen.ConfiguredStoreURL(app); err != nil {
		return cfg, err
	}
	if cfg.Store != "" {
		return cfg, nil // the state is on etcd; this directory may hold nothing yet
	}
	// The file store keeps the state here: a directory that is no project
	// gets the init hint and no pid file, as every other command refuses.
	if err := app.RequireProject(); err != nil {
		return cfg, err
	}
	return cfg, storeopen.RefuseMirrors(app)
}

// memoryLimit parses --memory-limit ("0" or "": none).
func memoryLimit(v string) (int64, error) {
	if v == "0" {
		return 0, nil
	}
	n, err := optionalSize("--memory-limit", v, "160MB, or 0")
	return n, err
}

// optionalSize parses a size flag ("": 0).
func optionalSize(flag, v, example string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	sizes, err := cmdutil.ParseSizes(v)
	if err != nil || len(sizes) != 1 {
		return 0, reason.Usage("%s %q: want a size such as %s", flag, v, example)
	}
	return int64(sizes[0]), nil
}

// maxDocumentBytes is $CUSTODIAN_MAX_DOCUMENT_BYTES (0 when unset).
func maxDocumentBytes() (int, error) {
	v := os.Getenv("CUSTODIAN_MAX_DOCUMENT_BYTES")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, reason.New(reason.InvalidInput, "CUSTODIAN_MAX_DOCUMENT_BYTES=%q is not a positive number of bytes", v)
	}
	return n, nil
}

// DaemonRuntime gives this process custodian serve's runtime settings
// (daemon.TuneRuntime) for a daemon the bench commands start in process.
func DaemonRuntime(limit string) error {
	n, err := memoryLimit(limit)
	if err != nil {
		return err
	}
	daemon.TuneRuntime(n)
	return nil
}
