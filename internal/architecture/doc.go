// Package architecture holds no code: its test enforces the layering rules
// of docs/architecture.md ("Never") on the module's import graph.
package architecture
