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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
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
	// rollback) as tools; without it they are not tools at all (a call
	// is UNAUTHORIZED), and every call is marked as an agent's
	// (app.WithCaller).
	Admin bool
	// AgentCalls marks every call as an agent's even on an Admin server:
	// the stdio server's, whose calls a daemon checks by the token it was
	// sent (a Remote ignores the mark), and which must not make human
	// decisions on the files when no daemon runs.
	AgentCalls bool
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
	s := &Server{o: o, watching: map[string]bool{}}
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
	if !s.o.Admin || s.o.AgentCalls {
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
	return ctx, svc, nil
}

// humanTools are the human decisions: tools only on an Admin server.
var humanTools = []string{"resolve", "approve", "force_unlock", "rollback"}

// middleware checks a tool call before the SDK decodes its arguments (see
// checkCall), gives the SDK's refusal of arguments (the input schema's)
// the reason code INVALID_INPUT, lists the resources, and tells the HTTP
// handler of a session it opened (HTTPHandler).
func (s *Server) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		switch method {
		case "initialize":
			if opened, ok := ctx.Value(openedKey{}).(func(*sdk.ServerSession)); ok {
				if ss, ok := req.GetSession().(*sdk.ServerSession); ok {
					opened(ss)
				}
			}
		case "resources/list":
			return s.listResources(ctx)
		case "tools/call":
			r, ok := req.(*sdk.CallToolRequest)
			if !ok || r.Params == nil {
				break
			}
			if err := s.checkCall(r.Params.Name, r.Params.Arguments); err != nil {
				return toolError(err), nil
			}
			ran := new(bool)
			res, err := next(context.WithValue(ctx, handlerRan{}, ran), method, req)
			if tr, ok := res.(*sdk.CallToolResult); ok && tr != nil && tr.IsError && !*ran && tr.GetError() != nil {
				bad := tr.GetError()
				return toolError(&reason.Error{Code: reason.InvalidInput, Message: bad.Error(), Err: bad}), err
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// checkCall refuses, with the reason code, a human decision on a server
// without them (UNAUTHORIZED), arguments over the size cap (as the daemon
// refuses oversized API bodies) and arguments that are not valid UTF-8
// JSON (raw invalid bytes, a lone surrogate escape such as \ud800), which
// a decoder would turn into U+FFFD (INVALID_INPUT).
func (s *Server) checkCall(name string, args json.RawMessage) error {
	if !s.o.Admin && slices.Contains(humanTools, name) {
		return reason.New(reason.Unauthorized, "%s is a human decision: this session has an agent's rights (the human decisions need the admin token, checked by the daemon)", name)
	}
	if len(args) > s.o.MaxArgBytes {
		return reason.New(reason.InvalidInput, "the arguments of %s are %d bytes; the limit is %d", name, len(args), s.o.MaxArgBytes)
	}
	if len(args) > 0 {
		dec := jsontext.NewDecoder(bytes.NewReader(args), jsontext.AllowDuplicateNames(true))
		if _, err := dec.ReadValue(); err != nil {
			return reason.New(reason.InvalidInput, "the arguments of %s are not valid UTF-8 JSON: %v", name, err)
		}
	}
	return nil
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
