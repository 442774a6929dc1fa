package app

import (
	"context"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// Rollback commits, as a new revision, the value document key had at
// revision to (a human's decision: UNAUTHORIZED to an agent). The
// document's rules apply to the restored value (the store's validators),
// and its derived files follow it (a cycle's progress files).
func (l *Local) Rollback(ctx context.Context, req wire.RollbackRequest) (*wire.PutResponse, error) {
	if CallerOf(ctx) == Agent {
		return nil, errHuman("a rollback")
	}
	res, err := store.Rollback(ctx, l.o.Store, req.Key, req.To, req.Actor, req.Reason, l.o.Rules.Validate)
	if err != nil {
		return nil, err
	}
	if id, ok := cycle.IDFromKey(req.Key); ok && res.Changed {
		l.syncCycle(ctx, id, 0, cycle.State{})
	}
	return &wire.PutResponse{Document: res.Document, Changed: res.Changed, Record: res.Record}, nil
}

// Rollback asks the daemon to roll a document back.
func (r *Remote) Rollback(ctx context.Context, req wire.RollbackRequest) (*wire.PutResponse, error) {
	return r.c.Rollback(ctx, req)
}
