package mcp

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddRawTool registers a tool with a handler on raw arguments, on both
// paths (the SDK's and the HTTP fast path's): the tests use one that
// holds a call in flight until they release it.
func (s *Server) AddRawTool(name string, fn func(ctx context.Context, args json.RawMessage) (*sdk.CallToolResult, error)) {
	s.tools[name] = fn
	s.sdk.AddTool(&sdk.Tool{Name: name, InputSchema: &jsonschema.Schema{Type: "object"}}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return fn(ctx, req.Params.Arguments)
	})
}
