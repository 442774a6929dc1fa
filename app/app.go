// Package app is the application layer: the one path from "an agent asks"
// to "a durable commit", whichever door the agent used (CLI, HTTP API, MCP,
// hook, runner, monitor). For each domain (asdd, impl, agentstate, cycle)
// it reads, runs the domain's rules, commits through the store and applies
// the file effects. What it needs to know about the project's files
// (artifact hashes, drift) it observes itself; it never takes them from a
// caller.
//
// Two implementations of Service: Local, over a store and the project's
// files (the CLI without a daemon, and the daemon itself), and Remote, over
// a running daemon's API (package wire), which runs Local. Outcomes, reason
// codes and file effects are the same either way.
package app

import (
	"context"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// Service is the application layer of one project.
type Service interface {
	// Reader reads documents as stored (a version, the journal, the
	// stream of commits), whichever door asks.
	Reader

	// Manifest returns the latest committed ASDD manifest
	// (.asdd/state/manifest.json); NOT_FOUND when there is none.
	Manifest(ctx context.Context) (*asdd.Manifest, error)
	// ASDD runs one ASDD operation: the rules, the commit and the file
	// effects. A committed halt comes back with Verdict set and a nil
	// error; a rejection is a *reason.Error and changes nothing.
	ASDD(ctx context.Context, op asdd.Op) (*wire.OpResponse, error)

	// ImplManifest returns the task manifest (.impl/manifest.json).
	ImplManifest(ctx context.Context) (*impl.Manifest, uint64, error)
	// Impl runs one change of the task manifest with task-manifest.sh's
	// arguments and rules.
	Impl(ctx context.Context, req wire.ImplRequest) (*wire.ImplResponse, error)

	// State returns the state-manager's state (.agents/tmp/state.json).
	State(ctx context.Context) (agentstate.Object, uint64, error)
	// UpdateState runs one change of the state-manager's state.
	UpdateState(ctx context.Context, req wire.StateRequest) (*wire.StateResponse, error)

	// Cycle returns a dev cycle's state (.workflow/.cycle/<id>.json).
	Cycle(ctx context.Context, id string) (cycle.State, uint64, error)
	// UpdateCycle runs one operation on a dev cycle, then syncs its
	// progress files.
	UpdateCycle(ctx context.Context, req wire.CycleRequest) (*wire.CycleResponse, error)

	// ApplyJQ runs a jq program on a document inside a commit.
	ApplyJQ(ctx context.Context, req wire.JQRequest) (*wire.JQResponse, error)

	// Rollback restores a document's value at a past revision as a new
	// commit (a human decision).
	Rollback(ctx context.Context, req wire.RollbackRequest) (*wire.PutResponse, error)

	// Rebuild recovers a lost or corrupt ASDD manifest from its journal,
	// else from a scan of the project's files (a human decision).
	Rebuild(ctx context.Context, req wire.RebuildRequest) (*wire.RebuildResponse, error)

	// Close releases what the service holds (not the store it was given).
	Close() error
}

// Caller is who asks, as far as the custodian can tell: a human with the
// admin credential (package admincred), or an agent without it.
type Caller int

const (
	// Owner is the default: a request with the admin token (over TCP or
	// the daemon's unix socket), the daemon's own monitor, the CLI
	// without a daemon when it can read the admin credential.
	Owner Caller = iota
	// Agent is a request without the admin token, on any door (TCP, the
	// unix socket, MCP), or the CLI without a daemon that cannot read the
	// admin credential: human decisions are refused (UNAUTHORIZED).
	Agent
)

type callerKey struct{}

// WithCaller returns ctx marking who asks.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf returns who asks in ctx (Owner when unmarked).
func CallerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// HumanDecision reports whether op is a human's decision (set up the
// project and its context, resolve, approve, clear a review, correct an
// assumption, break another holder's lease), which an agent may not make.
func HumanDecision(op asdd.Op) (string, bool) {
	what := op.HumanDecision()
	return what, what != ""
}

// ErrHuman is the error of a human decision asked by an agent.
func errHuman(what string) error {
	return reason.New(reason.Unauthorized, "%s is a human decision: it needs the admin token (the CLI sends the project's admin credential when it can read it: a human's terminal, outside the agent's sandbox; or $CUSTODIAN_ADMIN_TOKEN)", what)
}

// checkCaller refuses a human decision asked by an agent.
func checkCaller(ctx context.Context, op asdd.Op) error {
	if what, ok := HumanDecision(op); ok && CallerOf(ctx) == Agent {
		return errHuman(what)
	}
	return nil
}
