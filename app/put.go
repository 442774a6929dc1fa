package app

import (
	"context"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// PutDocument is a raw write of one document (PUT /v1/doc): a whole value,
// or an RFC 6902 patch against revision IfRevision.
type PutDocument struct {
	Key string
	wire.PutRequest
	// IfRevision, when set, makes the write a compare-and-swap.
	IfRevision *uint64
	// Create allows the document not to exist yet.
	Create bool
}

// Put commits a raw write (a human's decision: UNAUTHORIZED to an agent).
// It skips the operations' rules but not the document's own: its schema
// and its append-only history are checked on the result (Rules), as in a
// rollback, and a cycle's progress files follow it.
func (l *Local) Put(ctx context.Context, req PutDocument) (*wire.PutResponse, error) {
	if CallerOf(ctx) == Agent {
		return nil, errHuman("writing " + req.Key + " directly")
	}
	switch {
	case (req.Value == nil) == (req.Patch == nil):
		return nil, reason.New(reason.InvalidInput, "give exactly one of value and patch")
	case req.Patch != nil && req.IfRevision == nil:
		return nil, reason.New(reason.InvalidInput, "a patch needs If-Match: the revision it applies to")
	}
	var opts []store.UpdateOption
	if req.IfRevision != nil {
		opts = append(opts, store.IfRevision(*req.IfRevision))
	}
	if req.Create {
		opts = append(opts, store.Create())
	}
	res, err := l.o.Store.Update(ctx, req.Key, func(cur store.Document) (store.Change, error) {
		prev, err := cur.Bytes()
		if err != nil {
			return store.Change{}, err
		}
		v := []byte(req.Value)
		if req.Patch != nil {
			p, err := store.ApplyPatch(prev, req.Patch)
			if err != nil {
				return store.Change{}, reason.New(reason.InvalidInput, "%v", err)
			}
			if p == nil {
				return store.Change{}, reason.New(reason.InvalidInput, "a patch may not remove the whole document")
			}
			v = p
		}
		if err := l.o.Rules.Validate(req.Key, prev, v); err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: v, Actor: req.Actor, Reason: req.Reason, Events: req.Events}, nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	if id, ok := cycle.IDFromKey(req.Key); ok && res.Changed {
		l.syncCycle(ctx, id, 0, cycle.State{})
	}
	return &wire.PutResponse{Document: res.Document, Changed: res.Changed, Record: res.Record}, nil
}
