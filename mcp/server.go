// Package mcp is the agents' own door: a Model Context Protocol server
// (github.com/modelcontextprotocol/go-sdk) whose tools run the custodian's
// operations through the application layer (package app), whose resources
// are the managed documents (custodian://doc/<key>, subscribable: a commit
// sends notifications/resources/updated, fed by the store's watch stream),
// and whose prompt and instructions state the protocol agents follow.
//
// It translates and never decides: every tool calls app.Service (or, for
// reads of documents as stored, app.Reader), and a rule's rejection comes
// back as a tool error whose text starts with the reason code. Nothing is
// cached per session: every call asks Options.Service for the application
// layer and reads the latest revision.
//
// `custodian mcp` serves it over stdio; `custodian serve` mounts it at /mcp
// (streamable HTTP, stateful sessions).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// URIPrefix is the prefix of a managed document's resource URI; the key
// (its path relative to the project root) follows.
const URIPrefix = "custodian://doc/"

// DefaultMaxArgBytes caps a tool call's arguments, as the daemon caps API
// bodies (1 MiB).
const DefaultMaxArgBytes = 1 << 20

// Options configure a Server.
type Options struct {
	// Service returns the application layer for one call. It is asked on
	// every call, never remembered: the CLI's answers a daemon's Remote
	// while one runs and a Local over the project's files otherwise.
	// Required. Its result must implement app.Reader for the resources and
	// the history tool.
	Service func(ctx context.Context) (app.Service, error)
	// Config returns the ASDD configuration in force (status, slice_show);
	// nil: the defaults of seed 004.
	Config func() (*asdd.Config, error)
	// Admin exposes the human decisions (resolve, approve, force_unlock,
	// rollback) as tools; without it they are not tools at all, and every
	// call is marked as an agent's (app.WithCaller).
	Admin bool
	// Actor is who the server commits as where a tool has no agent
	// argument (slice_add, the impl, state and cycle tools); "mcp" by
	// default.
	Actor string
	// Now is the clock of the status board; time.Now by default.
	Now func() time.Time
	// MaxArgBytes caps a tool call's arguments (DefaultMaxArgBytes by
	// default); larger ones are refused with INVALID_INPUT.
	MaxArgBytes int
	// Logger receives the server's notices (watch errors); nil: discarded.
	Logger *slog.Logger
	// Version is reported to clients as the server's version.
	Version string
	// ProtocolVersions, when set, narrows the MCP protocol versions the
	// server speaks (default: every version the SDK supports).
	ProtocolVersions []string
}

// Server is one MCP server over the application layer. Safe for
// concurrent use by any number of sessions.
type Server struct {
	o   Options
	sdk *sdk.Server
	// tools are the tools' handlers by name, for the HTTP fast path; set
	// by New only.
	tools map[string]toolFunc

	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	// watching holds the keys whose commits are watched for subscribers.
	watching map[string]bool
	wg       sync.WaitGroup
}

// New returns a server with every tool, the resources and the prompt.
func New(o Options) *Server {
	if o.Actor == "" {
		o.Actor = "mcp"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Config == nil {
		def := asdd.DefaultConfig()
		o.Config = func() (*asdd.Config, error) { return def, nil }
	}
	if o.MaxArgBytes <= 0 {
		o.MaxArgBytes = DefaultMaxArgBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{o: o, watching: map[string]bool{}, tools: map[string]toolFunc{}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "custodian", Title: "Custodian", Version: o.Version}, &sdk.ServerOptions{
		Instructions:              instructions(o.Admin),
		Logger:                    o.Logger,
		SubscribeHandler:          s.subscribe,
		SupportedProtocolVersions: o.ProtocolVersions,
		UnsubscribeHandler:        func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{},
			Resources: &sdk.ResourceCapabilities{Subscribe: true},
			Prompts:   &sdk.PromptCapabilities{},
		},
	})
	s.addTools()
	s.addResources()
	s.sdk.AddPrompt(&sdk.Prompt{
		Name:        PromptName,
		Title:       "The custodian's protocol",
		Description: "How agents must read and change the pipeline's state: through the custodian's tools, never by editing its files.",
	}, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{
			Description: "The custodian's protocol",
			Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: protocol(o.Admin)}}},
		}, nil
	})
	s.sdk.AddReceivingMiddleware(s.middleware)
	return s
}

// SDK returns the underlying go-sdk server.
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Run serves one session over t (stdio: &sdk.StdioTransport{}) until the
// client disconnects or ctx is done.
func (s *Server) Run(ctx context.Context, t sdk.Transport) error {
	return s.sdk.Run(ctx, t)
}

// Close stops the watches that feed subscriptions.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// service returns the application layer for one call and the context
// that marks who asks.
func (s *Server) service(ctx context.Context) (context.Context, app.Service, error) {
	if !s.o.Admin {
		ctx = app.WithCaller(ctx, app.Agent)
	}
	svc, err := s.o.Service(ctx)
	if err != nil {
		return ctx, nil, err
	}
	return ctx, svc, nil
}

// reader returns the document reader of the application layer.
func (s *Server) reader(ctx context.Context) (context.Context, app.Reader, error) {
	ctx, svc, err := s.service(ctx)
	if err != nil {
		return ctx, nil, err
	}
	r, ok := svc.(app.Reader)
	if !ok {
		return ctx, nil, fmt.Errorf("the application layer %T cannot read documents", svc)
	}
	return ctx, r, nil
}

// middleware refuses oversized tool arguments before they are decoded,
// as the daemon refuses oversized API bodies.
func (s *Server) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "tools/call":
			if r, ok := req.(*sdk.CallToolRequest); ok && r.Params != nil {
				if res := s.argsTooBig(r.Params.Name, r.Params.Arguments); res != nil {
					return res, nil
				}
			}
		case "resources/list":
			return s.listResources(ctx)
		}
		return next(ctx, method, req)
	}
}

// HTTPOptions configure the streamable HTTP handler.
type HTTPOptions struct {
	// MaxBodyBytes caps a request body (413 beyond it), as the daemon's
	// API bodies are capped (0: the SDK's default, 4 MiB; negative: no
	// cap).
	MaxBodyBytes int64
	// SessionTimeout closes sessions idle this long (0: never).
	SessionTimeout time.Duration
	// Logger receives the transport's notices.
	Logger *slog.Logger
}

// HTTPHandler serves MCP over streamable HTTP.
type HTTPHandler struct {
	h            http.Handler
	agent, admin *Server
	isAdmin      func(*http.Request) bool
	o            HTTPOptions
	// sessions binds each session to who opened it (admin or agent): a
	// session id presented by another caller is refused, so that an agent
	// that learned an admin session's id cannot use its human tools. It
	// also serves the fast path (fast.go) and the idle timeout.
	mu        sync.Mutex
	sessions  map[string]*httpSession
	fastCalls atomic.Int64
}

// FastCalls is how many tool calls the fast path (fast.go) answered.
func (h *HTTPHandler) FastCalls() int64 { return h.fastCalls.Load() }

// NewHTTPHandler serves MCP over streamable HTTP with stateful sessions
// (so that subscriptions work) and DNS-rebinding protection (a request
// that reached a loopback address with a Host that is not one is refused
// 403). A new session is served by admin when isAdmin says the request
// may make human decisions (admin nil: never), else by agent. The token
// check is the caller's (the daemon's middleware). A tool call on an
// established session takes the fast path (fast.go); everything else is
// the go-sdk's streamable HTTP handler's.
func NewHTTPHandler(agent, admin *Server, isAdmin func(*http.Request) bool, o HTTPOptions) *HTTPHandler {
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if admin != nil && isAdmin != nil && isAdmin(r) {
			return admin.sdk
		}
		return agent.sdk
	}, &sdk.StreamableHTTPOptions{
		// A call's answer is one JSON body, not an event stream: the
		// tools send nothing before their result (notifications go
		// over the session's GET stream), and it halves the work of
		// a call for both ends.
		JSONResponse:        true,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		// The idle timeout is HTTPHandler's: the SDK does not see the
		// fast path's calls.
		Logger: o.Logger,
	})
	return &HTTPHandler{h: h, agent: agent, admin: admin, isAdmin: isAdmin, o: o, sessions: map[string]*httpSession{}}
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	admin := h.isAdmin != nil && h.isAdmin(r)
	if id := r.Header.Get(sessionHeader); id != "" {
		h.mu.Lock()
		se, known := h.sessions[id]
		if known && r.Method == http.MethodDelete && se.admin == admin {
			delete(h.sessions, id)
		}
		h.mu.Unlock()
		if known && se.admin != admin {
			http.Error(w, "this session was opened by another caller (its token differs)", http.StatusForbidden)
			return
		}
		if known && r.Method == http.MethodDelete {
			se.markClosed()
		}
		// A closed session's POSTs are the SDK's: it answers them as
		// it answers a closing or unknown session.
		if known && r.Method == http.MethodPost && se.startPOST() {
			defer se.endPOST()
			done, release := h.post(w, r, se)
			if done {
				return
			}
			if release != nil {
				defer release()
			}
		}
		h.h.ServeHTTP(w, r)
		return
	}
	h.h.ServeHTTP(w, r)
	if id := w.Header().Get(sessionHeader); id != "" {
		h.register(id, admin)
	}
}

// sessionHeader carries a streamable HTTP session's id.
const sessionHeader = "Mcp-Session-Id"

// CloseSessions ends every session (and the streams it holds open), so
// that a daemon's shutdown can drain.
func (h *HTTPHandler) CloseSessions() {
	h.mu.Lock()
	for _, se := range h.sessions {
		se.markClosed()
	}
	h.mu.Unlock()
	for _, s := range []*Server{h.agent, h.admin} {
		if s == nil {
			continue
		}
		for ss := range s.sdk.Sessions() {
			ss.Close()
		}
	}
}

// keyOf returns the document key of a resource URI.
func keyOf(uri string) (string, error) {
	key, ok := strings.CutPrefix(uri, URIPrefix)
	if !ok {
		return "", sdk.ResourceNotFoundError(uri)
	}
	if err := app.DocumentKey(key); err != nil {
		return "", invalidParams(err)
	}
	return key, nil
}

// invalidParams is a protocol error (invalid params) whose message starts
// with the reason code.
func invalidParams(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
}

// protocolError turns an error of a resource handler into the protocol's
// error: invalid params for bad input, an internal error otherwise, with
// the reason's text as the message.
func protocolError(err error) error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return err
	}
	if reason.CodeOf(err) == reason.InvalidInput {
		return invalidParams(err)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}
