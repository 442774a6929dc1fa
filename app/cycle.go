package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/cycle/progress"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// NoCycle is the error of an operation on a cycle that does not exist.
func NoCycle(id string) error {
	return reason.New(reason.NotFound, "no cycle %s (%s does not exist; see custodian cycle list)", id, cycle.Key(id))
}

// DecodeCycle decodes a stored cycle and checks it against the rules.
func DecodeCycle(id string, raw []byte) (cycle.State, error) {
	st, err := cycle.Decode(raw)
	if err != nil {
		return cycle.State{}, reason.New(reason.CorruptState, "%s: %s; repair it, roll it back (custodian rollback) or rebuild it (custodian cycle rebuild)", cycle.Key(id), messageOf(err))
	}
	if err := cycle.Validate(st); err != nil {
		return cycle.State{}, reason.New(reason.CorruptState, "%s is not a valid cycle: %s; repair it, roll it back (custodian rollback) or rebuild it (custodian cycle rebuild)", cycle.Key(id), messageOf(err))
	}
	if st.CycleID != id {
		return cycle.State{}, reason.New(reason.CorruptState, "%s holds cycle %s, not %s", cycle.Key(id), st.CycleID, id)
	}
	return st, nil
}

func messageOf(err error) string {
	if e, ok := reason.As(err); ok {
		return e.Message
	}
	return err.Error()
}

// Cycle returns a cycle's state and revision.
func (l *Local) Cycle(ctx context.Context, id string) (cycle.State, uint64, error) {
	if err := cycle.CheckID(id); err != nil {
		return cycle.State{}, 0, err
	}
	doc, err := l.o.Store.Get(ctx, cycle.Key(id))
	if reason.CodeOf(err) == reason.NotFound || (err == nil && !doc.Exists()) {
		return cycle.State{}, 0, NoCycle(id)
	}
	if err != nil {
		return cycle.State{}, 0, err
	}
	st, err := DecodeCycle(id, doc.Value)
	return st, doc.Revision, err
}

// CycleRandom is the source of new cycle ids' random part.
var CycleRandom = rand.Reader

// UpdateCycle runs one cycle operation (or "create") and syncs the cycle's
// progress files.
func (l *Local) UpdateCycle(ctx context.Context, req wire.CycleRequest) (*wire.CycleResponse, error) {
	actor := req.Actor
	if actor == "" {
		actor = "custodian"
	}
	switch req.Op {
	case "create":
		return l.createCycle(ctx, req, actor)
	case "put":
		return l.putCycle(ctx, req, actor)
	case "rebuild":
		return l.rebuildCycle(ctx, req, actor)
	case "sync":
		return l.syncCycleOp(ctx, req)
	case "append":
		return l.appendCycleLog(ctx, req)
	}
	if err := cycle.CheckID(req.ID); err != nil {
		return nil, err
	}
	op, err := wire.DecodeCycleOp(req.Op, req.Args)
	if err != nil {
		return nil, err
	}
	now := l.o.Now()
	var ev cycle.Event
	var next cycle.State
	ran := false
	var opts []store.UpdateOption
	if req.IfRevision != nil {
		opts = append(opts, store.IfRevision(*req.IfRevision))
	}
	res, err := l.update(ctx, cycle.Key(req.ID), func(cur store.Document) (store.Change, error) {
		ran = true
		if !cur.Exists() {
			return store.Change{}, NoCycle(req.ID)
		}
		st, err := DecodeCycle(req.ID, cur.Value)
		if err != nil {
			return store.Change{}, err
		}
		next, ev, err = cycle.Apply(st, op, now)
		if err != nil {
			return store.Change{}, err
		}
		raw, err := cycle.Encode(next)
		if err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: raw, Actor: actor, Reason: ev.Summary, Events: CycleEvents(ev)}, nil
	}, opts...)
	if err != nil {
		if !ran && reason.CodeOf(err) == reason.NotFound {
			return nil, NoCycle(req.ID)
		}
		return nil, err
	}
	synced := l.syncCycle(ctx, req.ID, res.Revision, next)
	return &wire.CycleResponse{CycleID: req.ID, Revision: res.Revision, Event: ev.Type, Summary: ev.Summary, Cycle: next, Synced: synced}, nil
}

func (l *Local) createCycle(ctx context.Context, req wire.CycleRequest, actor string) (*wire.CycleResponse, error) {
	var a wire.CycleCreate
	if len(req.Args) > 0 {
		if err := wire.DecodeStrict(req.Args, &a); err != nil {
			return nil, err
		}
	}
	maxIter := cycle.DefaultMaxIterations
	if a.MaxIterations != nil {
		maxIter = *a.MaxIterations
	}
	now := l.o.Now()
	given := req.ID != ""
	for attempt := 0; ; attempt++ {
		cid := req.ID
		var err error
		if !given {
			if cid, err = cycle.NewID(now, CycleRandom); err != nil {
				return nil, err
			}
		}
		st, err := cycle.New(cid, a.Task, a.Description, maxIter, now)
		if err != nil {
			return nil, err
		}
		raw, err := cycle.Encode(st)
		if err != nil {
			return nil, err
		}
		res, err := l.o.Store.Update(ctx, cycle.Key(cid), func(cur store.Document) (store.Change, error) {
			if cur.Exists() {
				return store.Change{}, reason.New(reason.Conflict, "cycle %s already exists", cid)
			}
			return store.Change{Value: raw, Actor: actor, Reason: "cycle created: " + st.Title,
				Events: CycleEvents(cycle.Event{Type: "cycle.create", Summary: st.Title})}, nil
		}, store.Create())
		if err != nil {
			if given || reason.CodeOf(err) != reason.Conflict || attempt == 4 {
				return nil, err
			}
			continue
		}
		synced := l.syncCycle(ctx, cid, res.Revision, st)
		return &wire.CycleResponse{CycleID: cid, Revision: res.Revision, Event: "cycle.create", Summary: st.Title, Cycle: st, Synced: synced}, nil
	}
}

// putCycle replaces a cycle as a whole if it is still at req.IfRevision
// (the orchestrator's read-modify-write of the whole file): the new
// document must be a valid cycle with that id and keep the cycle's rules
// against the current one (history only grows).
func (l *Local) putCycle(ctx context.Context, req wire.CycleRequest, actor string) (*wire.CycleResponse, error) {
	if err := cycle.CheckID(req.ID); err != nil {
		return nil, err
	}
	if req.IfRevision == nil {
		return nil, reason.New(reason.InvalidInput, "put replaces a whole cycle: it needs if_revision (0: the cycle does not exist yet)")
	}
	next, err := cycle.Decode(req.Args)
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "not a cycle document: %s", messageOf(err))
	}
	if next.CycleID != req.ID {
		return nil, reason.New(reason.InvalidInput, "the document is cycle %q, not %s", next.CycleID, req.ID)
	}
	raw, err := cycle.Encode(next)
	if err != nil {
		return nil, err
	}
	key := cycle.Key(req.ID)
	res, err := l.o.Store.Update(ctx, key, func(cur store.Document) (store.Change, error) {
		var prev []byte
		if cur.Exists() {
			prev = cur.Value
		}
		if err := l.o.Rules.Validate(key, prev, raw); err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: raw, Actor: actor, Reason: "put: whole document",
			Events: CycleEvents(cycle.Event{Type: "cycle.put", Summary: "whole document replaced"})}, nil
	}, store.Create(), store.IfRevision(*req.IfRevision))
	if err != nil {
		return nil, err
	}
	synced := l.syncCycle(ctx, req.ID, res.Revision, next)
	return &wire.CycleResponse{CycleID: req.ID, Revision: res.Revision, Event: "put", Summary: "whole document replaced", Cycle: next, Synced: synced}, nil
}

// CycleEvents are the journal events of a cycle event.
func CycleEvents(ev cycle.Event) []store.Event {
	data, _ := json.Marshal(map[string]string{"summary": ev.Summary})
	return []store.Event{{Type: ev.Type, Data: data}}
}

// SyncCycle writes the cycle's progress files (.progress/) from its
// latest committed state; it returns the files it wrote.
func (l *Local) SyncCycle(ctx context.Context, id string) ([]string, error) {
	return l.syncCycleFiles(ctx, id, 0, cycle.State{})
}

// syncCycle is SyncCycle after a commit of revision rev (whose state the
// caller holds): a failure is a warning, the commit stands.
func (l *Local) syncCycle(ctx context.Context, id string, rev uint64, st cycle.State) []string {
	wrote, err := l.syncCycleFiles(ctx, id, rev, st)
	if err != nil {
		l.warn(rev, fmt.Errorf("cycle %s: its progress files were not updated: %w (run custodian cycle sync %s)", id, err, id))
	}
	if wrote == nil {
		wrote = []string{}
	}
	return wrote
}

func (l *Local) syncCycleFiles(ctx context.Context, id string, knownRev uint64, known cycle.State) ([]string, error) {
	if !l.hasRoot() {
		return nil, nil
	}
	root, err := os.OpenRoot(l.o.Root)
	if err != nil {
		return nil, fmt.Errorf("project root: %w", err)
	}
	defer root.Close()
	l.fx.Lock()
	defer l.fx.Unlock()
	return progress.Sync(root, id, func() (uint64, cycle.State, error) {
		doc, err := l.o.Store.Get(ctx, cycle.Key(id))
		if err != nil {
			return 0, cycle.State{}, err
		}
		if knownRev != 0 && doc.Revision == knownRev {
			return knownRev, known, nil
		}
		st, err := DecodeCycle(id, doc.Value)
		return doc.Revision, st, err
	})
}
