// Package mcptest is what tests of the MCP door share: a client session
// to a server over in-memory transports and the reading of tool results.
// Only tests import it (internal/architecture checks that the binary does
// not link it).
package mcptest

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/mcp"
	"github.com/custodian-dev/custodian/reason"
)

// Connect returns a client session to s over in-memory transports, closed
// when the test ends.
func Connect(t testing.TB, s *mcp.Server, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	ct, st := sdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// Call calls a tool; a protocol error fails the test.
func Call(t testing.TB, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// Text is a result's first text content.
func Text(res *sdk.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

// ErrorCode is the reason code an error result's text starts with ("" for
// a result that is not an error).
func ErrorCode(res *sdk.CallToolResult) reason.Code {
	if !res.IsError {
		return ""
	}
	code, _, _ := strings.Cut(Text(res), ": ")
	return reason.Code(code)
}
