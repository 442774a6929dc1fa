// Package hook is `custodian hook` (the git pre-commit hook, the Claude Code
// hooks) and `custodian plugin` (the Claude Code plugin packaging).
package hook
