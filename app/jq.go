package app

import (
	"context"
	"encoding/json"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// ApplyJQ runs a jq program on a document inside a commit (the
// state-manager plugins' state_update): on the latest committed value, again
// if another writer committed first, so no update is lost; the result must
// pass the document's rules (Rules), else nothing changes. A missing
// document starts as {}. The ASDD manifest and the task manifest change
// only through their operations.
func (l *Local) ApplyJQ(ctx context.Context, req wire.JQRequest) (*wire.JQResponse, error) {
	if err := store.CheckKey(req.Key); err != nil {
		return nil, err
	}
	if req.Key == asdd.Key || req.Key == impl.Key {
		return nil, reason.New(reason.InvalidInput, "%s changes only through its operations (custodian propose, custodian impl …), not a jq program", req.Key)
	}
	program, args, err := jqProgram(req, l.o.Now())
	if err != nil {
		return nil, err
	}
	actor := req.Actor
	if actor == "" {
		actor = "custodian"
	}
	opts := []store.UpdateOption{store.Create()}
	if req.IfRevision != nil {
		opts = append(opts, store.IfRevision(*req.IfRevision))
	}
	var value []byte
	res, err := l.update(ctx, req.Key, func(cur store.Document) (store.Change, error) {
		var prev []byte
		in := []byte("{}")
		if cur.Exists() {
			prev, in = cur.Value, cur.Value
		}
		next, err := compat.JQ(ctx, program, in, args)
		if err != nil {
			return store.Change{}, err
		}
		if err := l.o.Rules.Validate(req.Key, prev, next); err != nil {
			return store.Change{}, err
		}
		value = next
		return store.Change{Value: next, Actor: actor, Reason: "jq: " + req.Program}, nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	if id, ok := cycle.IDFromKey(req.Key); ok && res.Changed {
		l.syncCycle(ctx, id, 0, cycle.State{})
	}
	return &wire.JQResponse{Key: req.Key, Revision: res.Revision, Changed: res.Changed, Value: value}, nil
}

// jqProgram is the request's program and arguments: $ts is the commit
// time unless the caller names it, and --touch sets a field to it.
func jqProgram(req wire.JQRequest, now time.Time) (string, []compat.Arg, error) {
	stamp := now.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05Z")
	var args []compat.Arg
	hasTS := false
	for _, a := range req.Args {
		arg, err := compat.JSONArg(a.Name, string(a.Value))
		if err != nil {
			return "", nil, err
		}
		args = append(args, arg)
		hasTS = hasTS || a.Name == "ts"
	}
	if !hasTS {
		args = append(args, compat.StringArg("ts", stamp))
	}
	program := req.Program
	if req.Touch != "" {
		program = "(" + program + ") | .[$__custodian_touch] = $__custodian_now"
		args = append(args, compat.StringArg("__custodian_touch", req.Touch), compat.StringArg("__custodian_now", stamp))
	}
	return program, args, nil
}

// ApplyJQ asks the daemon to run a jq program on a document.
func (r *Remote) ApplyJQ(ctx context.Context, req wire.JQRequest) (*wire.JQResponse, error) {
	return r.c.ApplyJQ(ctx, req)
}

// StringArg is a jq --arg as the wire carries it.
func StringArg(name, value string) wire.JQArg {
	b, _ := json.Marshal(value)
	return wire.JQArg{Name: name, Value: b}
}
