package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Default caps on the sessions of /mcp: a session costs the daemon about
// 20 KB (the SDK's state and the goroutine that forgets it) until it ends
// or stays idle for HTTPOptions.SessionTimeout.
const (
	DefaultMaxSessions          = 1000
	DefaultMaxSessionsPerCaller = 250
)

// HTTPOptions configure the streamable HTTP handler.
type HTTPOptions struct {
	// MaxBodyBytes caps a request body (413 beyond it), as the daemon's
	// API bodies are capped (0: the SDK's default, 4 MiB; negative: no
	// cap).
	MaxBodyBytes int64
	// SessionTimeout closes sessions idle this long (0: never).
	SessionTimeout time.Duration
	// MaxSessions caps the sessions open at once, MaxSessionsPerCaller
	// those opened with one bearer token (the unix socket's owner is one
	// caller): a new session beyond either cap is refused 503 with
	// Retry-After. 0: DefaultMaxSessions, DefaultMaxSessionsPerCaller.
	MaxSessions, MaxSessionsPerCaller int
	// Logger receives the transport's notices.
	Logger *slog.Logger
}

// HTTPHandler serves MCP over streamable HTTP: the go-sdk's handler, with
// each session bound to who opened it and the sessions counted.
type HTTPHandler struct {
	h            http.Handler
	agent, admin *Server
	isAdmin      func(*http.Request) bool
	o            HTTPOptions

	mu sync.Mutex
	// sessions binds each open session to who opened it: a session id
	// presented by another caller is refused, so that an agent that
	// learned an admin session's id cannot use its human tools.
	sessions map[string]caller
	open     map[caller]int // sessions open (or being opened) by caller
	total    int
}

// caller is who opens a session: admin or not, and the bearer token.
type caller struct {
	admin bool
	auth  string
}

// openedKey carries, in the context of a request that may open a session,
// what the server's middleware calls with the session an initialize
// opened.
type openedKey struct{}

// NewHTTPHandler serves MCP over streamable HTTP with stateful sessions
// (so that subscriptions work) and DNS-rebinding protection (a request
// that reached a loopback address with a Host that is not one is refused
// 403). A new session is served by admin when isAdmin says the request
// may make human decisions (admin nil: never), else by agent. The token
// check is the caller's (the daemon's middleware).
func NewHTTPHandler(agent, admin *Server, isAdmin func(*http.Request) bool, o HTTPOptions) *HTTPHandler {
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionsPerCaller <= 0 {
		o.MaxSessionsPerCaller = DefaultMaxSessionsPerCaller
	}
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if admin != nil && isAdmin != nil && isAdmin(r) {
			return admin.sdk
		}
		return agent.sdk
	}, &sdk.StreamableHTTPOptions{
		// A call's answer is one JSON body, not an event stream: the
		// tools send nothing before their result (notifications go
		// over the session's GET stream).
		JSONResponse:        true,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		SessionTimeout:      o.SessionTimeout,
		Logger:              o.Logger,
	})
	return &HTTPHandler{h: h, agent: agent, admin: admin, isAdmin: isAdmin, o: o,
		sessions: map[string]caller{}, open: map[caller]int{}}
}

// sessionHeader carries a streamable HTTP session's id.
const sessionHeader = "Mcp-Session-Id"

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := caller{admin: h.isAdmin != nil && h.isAdmin(r), auth: r.Header.Get("Authorization")}
	if id := r.Header.Get(sessionHeader); id != "" || r.Method != http.MethodPost {
		h.mu.Lock()
		owner, known := h.sessions[id]
		h.mu.Unlock()
		if known && owner.admin != c.admin {
			http.Error(w, "this session was opened by another caller (its token differs)", http.StatusForbidden)
			return
		}
		h.h.ServeHTTP(w, r)
		return
	}
	// A POST without a session may open one (an initialize does).
	if !h.reserve(c) {
		w.Header().Set("Retry-After", strconv.Itoa(h.retryAfter()))
		http.Error(w, "too many MCP sessions are open: close one (DELETE) or retry later", http.StatusServiceUnavailable)
		return
	}
	var once sync.Once
	opened := false
	r = r.WithContext(context.WithValue(r.Context(), openedKey{}, func(ss *sdk.ServerSession) {
		once.Do(func() {
			opened = true
			h.mu.Lock()
			h.sessions[ss.ID()] = c
			h.mu.Unlock()
			go func() {
				ss.Wait()
				h.mu.Lock()
				delete(h.sessions, ss.ID())
				h.mu.Unlock()
				h.release(c)
			}()
		})
	}))
	h.h.ServeHTTP(w, r)
	once.Do(func() {}) // a later initialize on the session opens nothing
	if !opened {
		h.release(c)
	}
}

// reserve counts a session c may open, unless a cap is reached.
func (h *HTTPHandler) reserve(c caller) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.total >= h.o.MaxSessions || h.open[c] >= h.o.MaxSessionsPerCaller {
		return false
	}
	h.total++
	h.open[c]++
	return true
}

func (h *HTTPHandler) release(c caller) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.total--
	if h.open[c]--; h.open[c] == 0 {
		delete(h.open, c)
	}
}

// retryAfter is the Retry-After of a refused session, in seconds: an idle
// session ends within SessionTimeout.
func (h *HTTPHandler) retryAfter() int {
	if t := h.o.SessionTimeout; t > 0 && t < time.Minute {
		return max(1, int(t.Seconds()))
	}
	return 60
}

// Sessions is how many sessions are open.
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// CloseSessions ends every session (and the streams it holds open), so
// that a daemon's shutdown can drain.
func (h *HTTPHandler) CloseSessions() {
	for _, s := range []*Server{h.agent, h.admin} {
		if s == nil {
			continue
		}
		for ss := range s.sdk.Sessions() {
			ss.Close()
		}
	}
}
