package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// ErrNoState is the error of a state operation with no state.
var ErrNoState = reason.New(reason.NotFound, "no workflow state at %s: run custodian state init first", agentstate.Key)

// State returns the state-manager's state and its revision.
func (l *Local) State(ctx context.Context) (agentstate.Object, uint64, error) {
	doc, err := l.o.Store.Get(ctx, agentstate.Key)
	if errors.Is(err, reason.NotFound) || (err == nil && !doc.Exists()) {
		return nil, 0, ErrNoState
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := agentstate.Decode(doc.Value)
	if err != nil {
		return nil, 0, err
	}
	return st, doc.Revision, nil
}

// UpdateState runs one change of the state: the state-manager's rules
// (agentstate) inside a store update.
func (l *Local) UpdateState(ctx context.Context, req wire.StateRequest) (*wire.StateResponse, error) {
	now := l.o.Now()
	actor := req.Actor
	if actor == "" {
		actor = "custodian"
	}
	var why string
	var wrote string
	var f func(cur agentstate.Object, exists bool) (agentstate.Object, error)
	requireState := func(g func(cur agentstate.Object) (agentstate.Object, error)) func(agentstate.Object, bool) (agentstate.Object, error) {
		return func(cur agentstate.Object, exists bool) (agentstate.Object, error) {
			if !exists {
				return nil, ErrNoState
			}
			return g(cur)
		}
	}
	switch req.Op {
	case "init":
		st, err := agentstate.Init(req.Task, now)
		if err != nil {
			return nil, err
		}
		why = "init: " + req.Task
		f = func(cur agentstate.Object, exists bool) (agentstate.Object, error) {
			if exists && !req.Force {
				task, _ := cur.Get("task")
				status, _ := cur.Get("status")
				return nil, reason.New(reason.InvalidInput, "a workflow state already exists at %s (task %q, status %v): use --force to start over", agentstate.Key, task, status)
			}
			return st, nil
		}
	case "update":
		if len(strings.TrimSpace(string(req.Patch))) == 0 {
			return nil, reason.New(reason.InvalidInput, "update needs a JSON object")
		}
		patch, err := agentstate.DecodeObject(req.Patch)
		if err != nil {
			return nil, reason.New(reason.InvalidInput, "update: %w", err)
		}
		keys := make([]string, len(patch))
		for i, fl := range patch {
			keys[i] = fl.Key
		}
		why = "update " + strings.Join(keys, ", ")
		f = requireState(func(cur agentstate.Object) (agentstate.Object, error) { return agentstate.Update(cur, patch, now) })
	case "record-output":
		ext := req.Ext
		if ext == "" {
			ext = "md"
		}
		rel, err := agentstate.OutputPath(req.Phase, ext)
		if err != nil {
			return nil, err
		}
		if ext == "json" && !json.Valid(req.Content) {
			return nil, reason.New(reason.InvalidInput, "phase %s output is not valid JSON (--ext json)", req.Phase)
		}
		// The state must exist before anything is written.
		if _, _, err := l.State(ctx); err != nil {
			return nil, err
		}
		root, err := os.OpenRoot(l.o.Root)
		if err != nil {
			return nil, err
		}
		err = atomicfile.Write(root, rel, req.Content, 0o644)
		root.Close()
		if err != nil {
			return nil, err
		}
		wrote = rel
		why = "record-output " + req.Phase
		f = requireState(func(cur agentstate.Object) (agentstate.Object, error) {
			return agentstate.RecordOutput(cur, req.Phase, rel, now)
		})
	case "record-failure":
		fl := agentstate.Failure{Phase: req.Phase, Error: req.Error}
		if len(req.Context) > 0 {
			c, err := agentstate.DecodeObject(req.Context)
			if err != nil {
				return nil, reason.New(reason.InvalidInput, "--context: %w", err)
			}
			fl.Context = c
		}
		why = "record-failure " + req.Phase + ": " + req.Error
		f = requireState(func(cur agentstate.Object) (agentstate.Object, error) { return agentstate.RecordFailure(cur, fl, now) })
	case "compact":
		why = "compact"
		f = requireState(func(cur agentstate.Object) (agentstate.Object, error) {
			return agentstate.Compact(cur, req.Summary, now)
		})
	default:
		return nil, reason.New(reason.InvalidInput, "unknown state operation %q (init, update, record-output, record-failure, compact)", req.Op)
	}
	var next agentstate.Object
	res, err := l.update(ctx, agentstate.Key, func(cur store.Document) (store.Change, error) {
		var state agentstate.Object
		if cur.Exists() {
			var err error
			if state, err = agentstate.Decode(cur.Value); err != nil {
				return store.Change{}, err
			}
		}
		n, err := f(state, cur.Exists())
		if err != nil {
			return store.Change{}, err
		}
		v, err := agentstate.Encode(n)
		if err != nil {
			return store.Change{}, err
		}
		next = n
		return store.Change{Value: v, Actor: actor, Reason: why}, nil
	}, store.Create())
	if err != nil {
		return nil, err
	}
	return &wire.StateResponse{Revision: res.Revision, Summary: why, State: next, Wrote: wrote}, nil
}
