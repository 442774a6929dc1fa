package cli

import (
	"context"
	"errors"
	"fmt"
	appl "github.com/custodian-dev/custodian/app"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/internal/unixsock"
	"github.com/custodian-dev/custodian/monitor"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/file"
)

func init() { Register("serve", newServeCmd) }

// DefaultSocket is where `custodian serve` listens and where the CLI looks
// for a running daemon, relative to the project root.
const DefaultSocket = ".asdd/state/custodian.sock"

// ServeOptions are the flags of `custodian serve`.
type ServeOptions struct {
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

func newServeCmd(app *App) *cobra.Command {
	o := ServeOptions{}
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
board, live. It is read-only; resolve, approve and review over TCP need the
admin token (--admin-token or $CUSTODIAN_ADMIN_TOKEN; when neither is given
one is generated and printed with the dashboard's address), and so does
any raw write of the ASDD manifest over TCP (init, rollback): its agents
change it only through the daemon's operations, which run the rules. The
CLI sends $CUSTODIAN_ADMIN_TOKEN when it is set.

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
			return runServe(app, cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Addr, "addr", "127.0.0.1:7420", "TCP `address` to listen on (\"\" for the socket only)")
	f.StringVar(&o.Socket, "socket", DefaultSocket, "unix socket `path`, relative to the project root (\"\" for none)")
	f.StringVar(&o.Token, "token", os.Getenv("CUSTODIAN_TOKEN"), "bearer `token` of the agents over TCP (required off loopback); without it a change over TCP needs the admin token, and agents use the unix socket")
	f.StringVar(&o.AdminToken, "admin-token", os.Getenv("CUSTODIAN_ADMIN_TOKEN"), "bearer `token` for the human actions over TCP (resolve, approve, review, raw writes of the manifest); generated and printed at start when empty")
	f.DurationVar(&o.SnapshotInterval, "snapshot-interval", 50*time.Millisecond, "least time between two rewrites of a snapshot file")
	f.DurationVar(&o.MonitorEvery, "monitor-every", time.Minute, "heartbeat monitor interval (0 disables it)")
	enumFlag(cmd, f, &o.LogLevel, "log-level", "info", []string{"debug", "info", "warn", "error"}, "log level")
	f.IntVar(&o.MaxWatchers, "max-watchers", server.DefaultMaxWatchers, "most watch streams open at once; one more is refused with 503 and Retry-After")
	f.StringVar(&o.MemoryLimit, "memory-limit", "160MB", "soft memory `limit` for the daemon's garbage collector (0: none; $GOMEMLIMIT wins)")
	f.StringVar(&o.SegmentSize, "journal-segment-size", "", "`size` past which a journal is sealed into a segment file (default $CUSTODIAN_JOURNAL_SEGMENT_BYTES, else 64MB)")
	return cmd
}

// UIHandler, when set (by the web dashboard's file in this package, from its
// init), returns the handler `custodian serve` mounts at /.
var UIHandler func(app *App) (http.Handler, error)

func runServe(app *App, cmd *cobra.Command, o ServeOptions) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return reason.Usage("--log-level %q: want debug, info, warn or error", o.LogLevel)
	}
	log := slog.New(slog.NewTextHandler(app.Err, &slog.HandlerOptions{Level: level}))
	if err := daemonRuntime(o.MemoryLimit); err != nil {
		return err
	}
	var segBytes int64 // 0: the environment's or the store's default
	if o.SegmentSize != "" {
		sizes, err := parseSizes(o.SegmentSize)
		if err != nil || len(sizes) != 1 {
			return reason.Usage("--journal-segment-size %q: want a size such as 64MB", o.SegmentSize)
		}
		segBytes = int64(sizes[0])
	}
	if o.Addr == "" && o.Socket == "" {
		return reason.Usage("nothing to listen on: give --addr or --socket")
	}
	if o.Addr != "" {
		if err := checkBind(o.Addr, o.Token); err != nil {
			return err
		}
	}
	root, err := app.Root()
	if err != nil {
		return err
	}
	metrics := server.NewMetrics(prometheus.NewRegistry())
	maxBytes := 0
	if v := os.Getenv("CUSTODIAN_MAX_DOCUMENT_BYTES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return reason.New(reason.InvalidInput, "CUSTODIAN_MAX_DOCUMENT_BYTES=%q is not a positive number of bytes", v)
		}
		maxBytes = n
	}
	storeURL, err := ConfiguredStoreURL(app)
	if err != nil {
		return err
	}
	var st servedStore
	if isEtcdURL(storeURL) {
		// Several daemons may serve one etcd prefix (on several
		// machines): etcd orders their commits. Only this directory's
		// socket and pid file are one daemon's.
		unlock, err := lockDaemonDir(root)
		if err != nil {
			return err
		}
		defer unlock()
		est, err := openEtcdWith(storeURL, etcd.Options{Now: app.Now, Limits: store.Limits{MaxBytes: maxBytes}})
		if err != nil {
			return err
		}
		st = est
		log.Info("custodian daemon on etcd", "store", redactURL(storeURL))
		stopMirrors, err := startMirrors(root, est, log, app.Now)
		if err != nil {
			est.Close()
			return err
		}
		defer stopMirrors()
	} else {
		if storeURL == "" {
			if err := refuseMirrors(app); err != nil {
				return err
			}
		}
		fopts := file.Options{Now: app.Now, Logger: log, Hold: true, SnapshotInterval: o.SnapshotInterval, OnSync: metrics.ObserveSync,
			SnapshotOnCommit: pluginReadDocument}
		fopts.Limits.MaxBytes = maxBytes
		fopts.SegmentBytes = segBytes
		fst, err := file.Open(root, fopts)
		if err != nil {
			return err
		}
		st = fst
	}
	// Commands run inside the daemon (the monitor) use the held store.
	app.mu.Lock()
	app.store = st
	app.mu.Unlock()

	var ls []net.Listener
	closeAll := func() {
		for _, l := range ls {
			l.Close()
		}
	}
	sockPath := ""
	if o.Socket != "" {
		sockPath = o.Socket
		if !filepath.IsAbs(sockPath) {
			sockPath = filepath.Join(root, filepath.FromSlash(sockPath))
		}
		// We hold the daemon lock: a socket file left here is stale.
		if err := os.Remove(sockPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove stale socket: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(sockPath), 0o755); err != nil {
			return fmt.Errorf("socket: %w", err)
		}
		l, err := unixsock.Listen(sockPath)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", sockPath, err)
		}
		if err := os.Chmod(sockPath, 0o600); err != nil {
			l.Close()
			return fmt.Errorf("socket: %w", err)
		}
		ls = append(ls, l)
		defer os.Remove(sockPath)
	}
	if o.Addr != "" {
		l, err := net.Listen("tcp", o.Addr)
		if err != nil {
			closeAll()
			return fmt.Errorf("listen on %s: %w", o.Addr, err)
		}
		ls = append(ls, l)
	}
	// One application layer for every door of the daemon: the API, the
	// dashboard, the monitor loop.
	cfg := cachedConfig(app, root)
	local := appl.NewLocal(appl.Options{Store: st, Root: root, Config: cfg, Now: app.Now, Logger: log})
	app.mu.Lock()
	app.svc = local
	app.mu.Unlock()
	sopts := server.Options{Token: o.Token, Logger: log, Now: app.Now, Root: root, Metrics: metrics,
		ASDDConfig: cfg, App: local, Documents: appl.DocumentKey, MaxWatchers: o.MaxWatchers}
	if UIHandler != nil {
		ui, err := UIHandler(app)
		if err != nil {
			closeAll()
			return err
		}
		sopts.UI = ui
	}
	adminToken, generated, err := serveAdminToken(o.AdminToken)
	if err != nil {
		closeAll()
		return err
	}
	sopts.AdminToken = adminToken
	// Loopback is shared by every local user: without --token, a change
	// over TCP needs the admin token (the dashboard's link carries it);
	// the owner's agents use the unix socket.
	sopts.TCPNeedsToken = true
	var closeMCP func()
	sopts.MCP, closeMCP = daemonMCP(app, log, sopts.ASDDConfig, 1<<20)
	defer closeMCP()
	srv := server.New(st, sopts)

	ctx, stop := signal.NotifyContext(app.Context(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mdone := make(chan struct{})
	go func() {
		defer close(mdone)
		if o.MonitorEvery <= 0 {
			return
		}
		_ = monitor.Loop(ctx, o.MonitorEvery, nil, func(context.Context) error {
			start := time.Now()
			res, err := monitorOnce(app, cmd)
			switch {
			case reason.CodeOf(err) == reason.NotFound:
				// No manifest yet: nothing to watch over.
			case err != nil:
				metrics.ObserveCommit(start, false, err)
				log.Warn("heartbeat monitor", "error", err)
			case len(res.Actions) > 0:
				metrics.ObserveCommit(start, true, nil)
				log.Info("heartbeat monitor acted", "revision", res.Revision, "actions", len(res.Actions))
			}
			return nil
		})
	}()
	attrs := []any{"pid", os.Getpid(), "root", root}
	for _, l := range ls {
		attrs = append(attrs, l.Addr().Network(), l.Addr().String())
	}
	log.Info("custodian daemon serving", attrs...)
	announceDashboard(app.Err, ls, adminToken, generated, sopts.UI != nil)
	err = srv.Serve(ctx, ls...)
	stop()
	<-mdone
	log.Info("custodian daemon stopping: flushing the state")
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	app.mu.Lock()
	app.store, app.svc = nil, nil
	app.mu.Unlock()
	if err == nil {
		log.Info("custodian daemon stopped cleanly")
	}
	return err
}

// checkBind refuses a TCP address off loopback unless a token is set.
func checkBind(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return reason.Usage("--addr %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		return nil
	}
	if token == "" {
		return reason.Usage("--addr %s is not a loopback address: set --token (or $CUSTODIAN_TOKEN) so that only agents with it can change the state", addr)
	}
	return nil
}

// cachedConfig returns the ASDD configuration, parsed again only when
// .asdd/config.yaml changed (by its size, time and inode), so the daemon
// follows edits without parsing YAML on every proposal. The file is looked
// at (a stat) at most once per configRecheck: proposals that arrive
// together share one look, and an edit is seen by every operation that
// starts configRecheck or more after it (a CLI process takes longer than
// that to start).
func cachedConfig(app *App, root string) func() (*asdd.Config, error) {
	type version struct {
		exists      bool
		size, mtime int64
		dev, ino    uint64
	}
	var (
		mu      sync.Mutex
		key     version
		last    *asdd.Config
		checked time.Time
	)
	path := filepath.Join(root, filepath.FromSlash(asdd.ConfigPath))
	return func() (*asdd.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if last != nil && now.Sub(checked) < configRecheck {
			return last, nil
		}
		var k version
		if fi, err := os.Stat(path); err == nil {
			k = version{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				k.dev, k.ino = uint64(st.Dev), st.Ino
			}
		}
		if last != nil && k == key {
			checked = now
			return last, nil
		}
		cfg, err := asddConfig(app)
		if err != nil {
			return nil, err
		}
		key, last, checked = k, cfg, now
		return cfg, nil
	}
}

// configRecheck is how long the daemon trusts its last look at the ASDD
// configuration file.
const configRecheck = time.Millisecond

// daemonRuntime sets the Go runtime up for a daemon: the memory limit (see
// setMemoryLimit) and one more P than the runtime's default (unless
// GOMAXPROCS is set). Each document's syncer spends much of its time in
// write and fsync system calls, and a P whose goroutine is in a system
// call is handed to other work only after the runtime's monitor notices,
// typically after the call has already returned: on a 2-core machine the
// daemon then leaves about a quarter of the CPU idle while requests queue
// on the blocked P (measured: 150% CPU at 64 clients; 170% and 15-30%
// more proposals/s with the spare P). The spare P is added once per
// process (tests and bench daemon start several daemons).
func daemonRuntime(memoryLimit string) error {
	if err := setMemoryLimit(memoryLimit); err != nil {
		return err
	}
	if os.Getenv("GOMAXPROCS") == "" {
		spareP.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1) })
	}
	return nil
}

var spareP sync.Once

// setMemoryLimit applies --memory-limit unless $GOMEMLIMIT is set. The
// daemon keeps the whole state in memory; without a limit the collector
// lets the heap grow to twice the live data before it runs. With a limit
// (and no $GOGC) the collector also runs less often below it (GOGC 400):
// a daemon's live data is small next to what a burst of commits allocates,
// and collecting at twice the live data would spend a fifth of the CPU on
// it; the limit still bounds the heap.
func setMemoryLimit(v string) error {
	if os.Getenv("GOMEMLIMIT") != "" || v == "0" || v == "" {
		return nil
	}
	sizes, err := parseSizes(v)
	if err != nil || len(sizes) != 1 {
		return reason.Usage("--memory-limit %q: want a size such as 160MB, or 0", v)
	}
	debug.SetMemoryLimit(int64(sizes[0]))
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	return nil
}

// pluginReadDocument reports whether plugins read a document from disk
// right after changing it (principled's hooks run jq on .impl/manifest.json,
// the state managers read .agents/tmp/state.json, the dev cycle its files):
// the daemon acknowledges commits of those once the file holds them.
func pluginReadDocument(key string) bool {
	if key == impl.Key || key == agentstate.Key {
		return true
	}
	_, ok := cycle.IDFromKey(key)
	return ok
}
