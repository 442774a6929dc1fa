// Package mcp is `custodian mcp`: the custodian served to agents over the
// Model Context Protocol on stdio.
package mcp
