package daemon

import (
	"context"
	"errors"
	"net"
	"os"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/server"
)

// Daemon is a running daemon (Start); Wait waits for it to stop.
type Daemon struct {
	cfg     Config
	metrics *server.Metrics
	st      servedStore
	local   *app.Local
	srv     *server.Server
	ls      []net.Listener
	sock    string
	admin   string
	// generated says the daemon made the admin token up.
	generated bool
	// What release undoes, each nil until acquired.
	closeMCP, stopMirrors, unlock func()
	// served is Serve's error once it returned; monitor is closed when
	// the monitor loop has stopped; stop cancels both (the server may
	// stop on its own, on a listener's failure).
	served  chan error
	monitor <-chan struct{}
	stop    context.CancelFunc
}

// Run assembles the daemon cfg describes and serves until ctx is
// cancelled, then shuts it down cleanly (see Wait).
func Run(ctx context.Context, cfg Config) error {
	d, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	return d.Wait()
}

// Start assembles the daemon and returns once it listens: the store
// opened and held, the listeners open, the server and the monitor loop
// running until ctx is cancelled. On error nothing is left behind.
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	TuneRuntime(cfg.MemoryLimit)
	d := &Daemon{cfg: cfg, metrics: server.NewMetrics(), served: make(chan error, 1)}
	if err := d.assemble(); err != nil {
		d.release()
		return nil, err
	}
	d.serve(ctx)
	return d, nil
}

// assemble opens the store, the listeners and the admin token, and builds
// the application layer and the server over them.
func (d *Daemon) assemble() error {
	if err := d.openStore(); err != nil {
		return err
	}
	if err := d.listen(); err != nil {
		return err
	}
	d.announce()
	// One application layer for every door of the daemon: the API, the
	// dashboard, the MCP door, the monitor loop.
	d.local = app.NewLocal(app.Options{Store: d.st, Root: d.cfg.Root, Config: d.cfg.ASDDConfig, Now: d.cfg.Now, Logger: d.cfg.Logger})
	var err error
	if d.admin, d.generated, err = d.adminToken(); err != nil {
		return err
	}
	d.srv = server.New(d.st, d.serverOptions())
	return nil
}

// serverOptions are the HTTP server's options.
func (d *Daemon) serverOptions() server.Options {
	return server.Options{Token: d.cfg.Token, AdminToken: d.admin, Logger: d.cfg.Logger, Now: d.cfg.Now,
		Root: d.cfg.Root, Metrics: d.metrics, ASDDConfig: d.cfg.ASDDConfig, App: d.local,
		Documents: app.DocumentKey, MaxWatchers: d.cfg.MaxWatchers, UI: d.dashboard(), MCP: d.mcpDoor(),
		// Loopback is shared by every local user: without a Token, a
		// change over TCP needs the admin token (the dashboard's link
		// carries it); the owner's agents use the unix socket.
		TCPNeedsToken: true}
}

// serve starts the server and the monitor loop.
func (d *Daemon) serve(ctx context.Context) {
	ctx, d.stop = context.WithCancel(ctx)
	attrs := []any{"pid", os.Getpid(), "root", d.cfg.Root}
	for _, l := range d.ls {
		attrs = append(attrs, l.Addr().Network(), l.Addr().String())
	}
	d.cfg.Logger.Info("custodian daemon serving", attrs...)
	d.announceDashboard()
	d.monitor = d.startMonitor(ctx)
	go func() { d.served <- d.srv.Serve(ctx, d.ls...) }()
}

// Wait waits until the daemon has stopped (its context cancelled, or the
// server failed) and returns why: nil for a clean stop. By then no new
// connection is taken, in-flight requests have finished, the monitor loop
// has stopped, pending commits are synced, the snapshots rewritten, the
// socket removed and the lock released. Call it once.
func (d *Daemon) Wait() error {
	err := <-d.served
	d.stop()
	<-d.monitor
	d.cfg.Logger.Info("custodian daemon stopping: flushing the state")
	err = errors.Join(err, d.release())
	if err == nil {
		d.cfg.Logger.Info("custodian daemon stopped cleanly")
	}
	return err
}

// Service returns the daemon's application layer.
func (d *Daemon) Service() *app.Local { return d.local }

// release undoes what assemble acquired, in this order: the listeners
// (Serve has closed them already), the MCP sessions, the mirrors, the
// store (pending commits synced, snapshots rewritten, the state lock
// released), the socket file, the etcd directory lock. It returns the
// store's closing error.
func (d *Daemon) release() error {
	for _, l := range d.ls {
		l.Close()
	}
	for _, f := range []func(){d.closeMCP, d.stopMirrors} {
		if f != nil {
			f()
		}
	}
	var err error
	if d.st != nil {
		err = d.st.Close()
	}
	if d.sock != "" {
		_ = os.Remove(d.sock)
	}
	if d.unlock != nil {
		d.unlock()
	}
	return err
}
