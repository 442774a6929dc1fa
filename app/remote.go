package app

import (
	"context"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// Remote is the application layer of a project whose daemon runs: every
// operation is sent to the daemon, which runs it through its Local. Reads
// go to the daemon too, so they see every acknowledged commit.
type Remote struct {
	c     *client.Client
	reads // Doc, DocAt, History, Keys, Watch, Verify: the daemon's API
}

var _ Service = (*Remote)(nil)

// NewRemote returns the application layer behind the daemon c talks to.
func NewRemote(c *client.Client) *Remote { return &Remote{c: c, reads: reads{c}} }

// VerifyKeys lists what the daemon's verification of every document
// checks. files is false: the daemon, not this process, reads the files.
func (r *Remote) VerifyKeys(ctx context.Context) (keys []string, files bool, err error) {
	keys, err = r.c.VerifyKeys(ctx)
	return keys, false, err
}

// Client returns the daemon client.
func (r *Remote) Client() *client.Client { return r.c }

// Close closes the client's idle connections.
func (r *Remote) Close() error { return r.c.Close() }

// Manifest reads the manifest from the daemon.
func (r *Remote) Manifest(ctx context.Context) (*asdd.Manifest, error) {
	doc, err := r.Doc(ctx, asdd.Key)
	if err != nil {
		return nil, err
	}
	if !doc.Exists() {
		return nil, errNoManifest
	}
	return manifestOf(doc)
}

// ASDD runs op in the daemon. Artifacts are sent by name and path only:
// the daemon hashes them and observes the slice's files itself.
func (r *Remote) ASDD(ctx context.Context, op asdd.Op) (*wire.OpResponse, error) {
	name, ok := wire.ASDDOpName(op)
	if !ok {
		return nil, reason.New(reason.InvalidInput, "operation %T has no daemon operation", op)
	}
	// Only the custodian observes files: nothing a caller computed
	// travels (the daemon ignores it anyway).
	if o, ok := op.(asdd.Observing); ok {
		op = o.Unobserved()
	}
	return r.c.Op(ctx, name, op)
}

// ImplManifest reads the task manifest from the daemon.
func (r *Remote) ImplManifest(ctx context.Context) (*impl.Manifest, uint64, error) {
	doc, err := r.Doc(ctx, impl.Key)
	if err != nil {
		return nil, 0, err
	}
	if !doc.Exists() {
		return nil, 0, ErrNoImplManifest
	}
	m, err := impl.Decode(doc.Value)
	return m, doc.Revision, err
}

// Impl runs a change of the task manifest in the daemon.
func (r *Remote) Impl(ctx context.Context, req wire.ImplRequest) (*wire.ImplResponse, error) {
	return r.c.Impl(ctx, req)
}

// State reads the state-manager's state from the daemon.
func (r *Remote) State(ctx context.Context) (agentstate.Object, uint64, error) {
	doc, err := r.Doc(ctx, agentstate.Key)
	if err != nil {
		return nil, 0, err
	}
	if !doc.Exists() {
		return nil, 0, ErrNoState
	}
	st, err := agentstate.Decode(doc.Value)
	return st, doc.Revision, err
}

// UpdateState runs a change of the state in the daemon.
func (r *Remote) UpdateState(ctx context.Context, req wire.StateRequest) (*wire.StateResponse, error) {
	return r.c.State(ctx, req)
}

// Cycle reads a cycle from the daemon.
func (r *Remote) Cycle(ctx context.Context, id string) (cycle.State, uint64, error) {
	if err := cycle.CheckID(id); err != nil {
		return cycle.State{}, 0, err
	}
	doc, err := r.Doc(ctx, cycle.Key(id))
	if err != nil {
		return cycle.State{}, 0, err
	}
	if !doc.Exists() {
		return cycle.State{}, 0, NoCycle(id)
	}
	st, err := DecodeCycle(id, doc.Value)
	return st, doc.Revision, err
}

// UpdateCycle runs a cycle operation in the daemon.
func (r *Remote) UpdateCycle(ctx context.Context, req wire.CycleRequest) (*wire.CycleResponse, error) {
	return r.c.Cycle(ctx, req)
}
