package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/store"
)

// Options configure a Server. The zero value serves the store with the
// defaults below and no token.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer <token>".
	Token string
	// AdminToken, when set, is required (as the bearer token) by the human
	// actions over TCP: POST /v1/asdd/resolve, approve and clear-review
	// (see AdminOps); it is accepted wherever Token is.
	AdminToken string
	// MaxBodyBytes caps request bodies; 1 MiB by default. The Go client
	// sends a patch instead of a whole value that would not fit.
	MaxBodyBytes int64
	// MaxDepth caps the JSON nesting of request bodies; 64 by default.
	MaxDepth int
	// ReadTimeout, WriteTimeout and IdleTimeout bound every connection
	// (10 s, 2 min, 2 min by default: a commit may queue behind many
	// others). The watch stream renews its write deadline per event.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// DrainTimeout bounds how long Serve waits for in-flight requests on
	// shutdown; 10 s by default.
	DrainTimeout time.Duration
	// WatchKeepAlive is the interval of the comment lines that keep an idle
	// watch stream open through proxies; 15 s by default.
	WatchKeepAlive time.Duration
	// MaxWatchers caps the watch streams open at once; one more is
	// refused with 503 Service Unavailable and Retry-After.
	// DefaultMaxWatchers by default.
	MaxWatchers int
	// Logger receives one structured line per request and the server's
	// notices; slog.Default() by default.
	Logger *slog.Logger
	// Now is the clock of the ASDD rules; time.Now by default.
	Now func() time.Time
	// Root is the project root, for the file side effects of ASDD
	// operations (notices, failure log, halt markers) and for hashing the
	// artifacts a proposal names. Empty: no file access.
	Root string
	// ASDDConfig returns the ASDD configuration (.asdd/config.yaml) for
	// each operation; it should cache; nil: the defaults. The rules never
	// change the *Config they are given.
	ASDDConfig func() (*asdd.Config, error)
	// Metrics receives the counters; nil: a fresh registry served at
	// /metrics.
	Metrics *Metrics
	// UI, when set, is served at / (the web dashboard).
	UI http.Handler
	// Documents, when set, refuses the keys the document API (GET and
	// PUT /v1/doc, /v1/history) must not serve (DocumentKey: only the
	// custodian's documents).
	Documents func(key string) error
	// TCPNeedsToken, when Token is empty, still refuses TCP requests that
	// change something without a bearer token (then only the admin token
	// opens them): the safe default of custodian serve, so that other
	// local users cannot change the owner's state and files over loopback.
	TCPNeedsToken bool
	// App is the application layer the operations go through (nil: one
	// over the server's store, Root, ASDDConfig, Now and Logger).
	App *app.Local
	// MCP, when set, makes the handler served at /mcp (the Model Context
	// Protocol door, package mcp) over the server's application layer. It
	// gets the token checks of every route; a request without the admin
	// token (where one is set) reaches it marked as an agent's
	// (app.CallerOf).
	MCP func(svc *app.Local) http.Handler
}

func (o *Options) defaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = 64
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 10 * time.Second
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 2 * time.Minute
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 10 * time.Second
	}
	if o.WatchKeepAlive <= 0 {
		o.WatchKeepAlive = 15 * time.Second
	}
	if o.MaxWatchers <= 0 {
		o.MaxWatchers = DefaultMaxWatchers
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ASDDConfig == nil {
		def := asdd.DefaultConfig()
		o.ASDDConfig = func() (*asdd.Config, error) { return def, nil }
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics()
	}
}

// Server serves one project's application layer over HTTP: its
// operations, and its documents as stored (the reads of app.Reader).
type Server struct {
	o   Options
	mux *http.ServeMux
	h   http.Handler
	m   *Metrics
	app *app.Local

	watches watchHubs // the watch streams' fan-out (watchhub.go)

	stopOnce sync.Once
	stopping chan struct{} // closed when Serve begins to shut down
	onStop   []func()      // run by Stop
}

// New returns a server of o.App, or (nil) of an application layer over st.
// The caller keeps ownership of st.
func New(st store.Store, o Options) *Server {
	o.defaults()
	s := &Server{o: o, mux: http.NewServeMux(), m: o.Metrics, stopping: make(chan struct{}), app: o.App}
	if s.app == nil {
		s.app = app.NewLocal(app.Options{Store: st, Root: o.Root, Config: o.ASDDConfig, Now: o.Now, Logger: o.Logger})
	}
	s.routes()
	s.h = s.middleware(s.mux)
	return s
}

// Handler returns the server's HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.h }

// route registers a pattern; routePatterns is what the OpenAPI test checks.
func (s *Server) route(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	routesMu.Lock()
	defer routesMu.Unlock()
	if !slices.Contains(routePatterns, pattern) {
		routePatterns = append(routePatterns, pattern)
	}
}

var (
	routesMu      sync.Mutex
	routePatterns []string
)

// Routes lists the method and path patterns the server registers.
func Routes() []string {
	New(nil, Options{}) // registers every route once
	routesMu.Lock()
	defer routesMu.Unlock()
	return append([]string(nil), routePatterns...)
}

func (s *Server) routes() {
	s.route("GET /v1/health", http.HandlerFunc(s.health))
	s.route("GET /v1/openapi.json", http.HandlerFunc(s.openapi))
	s.route("GET /v1/keys", http.HandlerFunc(s.keys))
	s.route("GET /v1/doc", http.HandlerFunc(s.getDoc))
	s.route("PUT /v1/doc", http.HandlerFunc(s.putDoc))
	s.route("GET /v1/history", http.HandlerFunc(s.history))
	s.route("POST /v1/verify", http.HandlerFunc(s.verify))
	s.route("GET /v1/watch", http.HandlerFunc(s.watch))
	s.route("POST /v1/asdd/{op}", http.HandlerFunc(s.asddOp))
	s.route("POST /v1/impl", http.HandlerFunc(s.implOp))
	s.route("POST /v1/state", http.HandlerFunc(s.stateOp))
	s.route("POST /v1/cycle", http.HandlerFunc(s.cycleOp))
	s.route("POST /v1/rollback", http.HandlerFunc(s.rollback))
	s.route("POST /v1/rebuild", http.HandlerFunc(s.rebuild))
	s.route("POST /v1/jq", http.HandlerFunc(s.applyJQ))
	s.route("GET /v1/asdd/slices/{id}", http.HandlerFunc(s.getSlice))
	s.route("GET /metrics", s.m.Handler())
	if s.o.MCP != nil {
		// Not a route of the JSON API (openapi.json): another protocol.
		h := s.o.MCP(s.app)
		s.mux.Handle("/mcp", h)
		if c, ok := h.(interface{ CloseSessions() }); ok {
			// Its sessions hold streams open: they end when Serve stops.
			s.onStop = append(s.onStop, c.CloseSessions)
		}
	}
	if s.o.UI != nil {
		s.mux.Handle("/", s.o.UI)
	}
}

// Serve serves on every listener until ctx is done, then stops accepting,
// ends watch streams, waits for in-flight requests (up to DrainTimeout) and
// returns. It does not close the store.
func (s *Server) Serve(ctx context.Context, ls ...net.Listener) error {
	hs := &http.Server{
		Handler:           s.h,
		ReadTimeout:       s.o.ReadTimeout,
		ReadHeaderTimeout: s.o.ReadTimeout,
		WriteTimeout:      s.o.WriteTimeout,
		IdleTimeout:       s.o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.o.Logger.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, len(ls))
	for _, l := range ls {
		go func() {
			err := hs.Serve(l)
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			errc <- err
		}()
	}
	var first error
	select {
	case <-ctx.Done():
	case first = <-errc:
	}
	s.Stop()
	dctx, cancel := context.WithTimeout(context.Background(), s.o.DrainTimeout)
	defer cancel()
	if err := hs.Shutdown(dctx); err != nil && first == nil {
		first = fmt.Errorf("drain: %w", err)
	}
	n := len(ls)
	if first != nil && !errors.Is(first, context.Canceled) {
		n-- // one already returned
	}
	for range n {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Stop ends watch streams and MCP sessions so that a shutdown can drain.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		close(s.stopping)
		for _, f := range s.onStop {
			f()
		}
	})
}

// middleware adds the token check, the request log and panic safety.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request log line (debug level) needs the status: the
		// writer is wrapped to see it only then.
		var sw *statusWriter
		rw := w
		if s.o.Logger.Enabled(r.Context(), slog.LevelDebug) {
			sw = &statusWriter{ResponseWriter: w, status: http.StatusOK, start: time.Now()}
			rw = sw
		}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.o.Logger.Error("panic in handler", "path", r.URL.Path, "panic", fmt.Sprint(p))
				writeError(rw, fmt.Errorf("internal error"))
			}
			if sw != nil {
				s.o.Logger.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(sw.start))
			}
		}()
		if s.needsToken(r) && !(s.o.Token != "" && tokenOK(r, s.o.Token)) && !s.adminOK(r) {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="custodian"`)
			writeErrorStatus(rw, http.StatusUnauthorized, "UNAUTHORIZED", "a bearer token is required")
			return
		}
		if s.needsAdmin(r) && !s.adminOK(r) {
			refuseAdmin(rw, r)
			return
		}
		if s.crossSiteGuard(rw, r) {
			return
		}
		if s.agentRequest(r) {
			// The agents' token: the application layer refuses human
			// decisions to it.
			r = r.WithContext(app.WithCaller(r.Context(), app.Agent))
		}
		next.ServeHTTP(rw, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	start  time.Time
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
