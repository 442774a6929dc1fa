package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"runtime"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// ApplyJQ runs a jq program on a document and commits its result (the
// state-manager plugins' state_update). The program runs outside the
// commit, on the latest committed value, so a slow program never holds
// the document: other writers go on while it runs. Its result is then
// committed only if the document is still at the revision it read; if
// another writer committed first, the program runs again on the new value
// (up to jqAttempts times, then CONFLICT), so no update is lost. The
// result must pass the document's rules (Rules), else nothing changes. A
// missing document starts as {}. Only the documents on JQKey's list.
//
// Programs are budgeted (compat.JQ: time and memory), at most jqSlots of
// them run at once, and one actor's programs run one after another in
// their own lane, so a caller sending many slow programs delays only
// itself.
func (l *Local) ApplyJQ(ctx context.Context, req wire.JQRequest) (*wire.JQResponse, error) {
	if err := JQKey(req.Key); err != nil {
		return nil, err
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
	release, err := jqTurn(ctx, actor)
	if err != nil {
		return nil, err
	}
	defer release()
	for attempt := 1; ; attempt++ {
		cur, err := l.o.Store.Get(ctx, req.Key)
		if reason.CodeOf(err) == reason.NotFound {
			cur, err = store.Document{Key: req.Key}, nil
		}
		if err != nil {
			return nil, err
		}
		if req.IfRevision != nil && cur.Revision != *req.IfRevision {
			return nil, reason.New(reason.Conflict, "%s is at revision %d, not %d", req.Key, cur.Revision, *req.IfRevision)
		}
		var prev []byte
		in := []byte("{}")
		if cur.Exists() {
			if prev, err = cur.Bytes(); err != nil {
				return nil, err
			}
			in = prev
		}
		started := time.Now()
		next, err := compat.JQ(ctx, program, in, args)
		if err != nil {
			return nil, err
		}
		took := time.Since(started)
		if err := l.o.Rules.Validate(req.Key, prev, next); err != nil {
			return nil, err
		}
		res, err := l.update(ctx, req.Key, func(now store.Document) (store.Change, error) {
			if now.Revision != cur.Revision {
				return store.Change{}, errJQStale
			}
			return store.Change{Value: next, Actor: actor, Reason: "jq: " + req.Program}, nil
		}, opts...)
		if errors.Is(err, errJQStale) {
			switch {
			case attempt < jqAttempts:
				continue
			case took < jqHeldBudget/2:
				// Busy document, quick program: run it once more inside
				// the commit, on a short budget, so that it cannot hold
				// the document for long.
				res, next, err = l.applyJQHeld(ctx, req.Key, program, args, actor, "jq: "+req.Program, opts)
			default:
				return nil, reason.New(reason.Conflict, "%s changed %d times while the jq program ran on it; nothing committed, try again", req.Key, jqAttempts)
			}
		}
		if err != nil {
			return nil, err
		}
		if id, ok := cycle.IDFromKey(req.Key); ok && res.Changed {
			l.syncCycle(ctx, id, 0, cycle.State{})
		}
		return &wire.JQResponse{Key: req.Key, Revision: res.Revision, Changed: res.Changed, Value: next}, nil
	}
}

// jqAttempts bounds the runs of one program outside the commit on a
// document other writers keep changing; then a program that ran in less
// than half of jqHeldBudget runs once more inside the commit, stopped at
// jqHeldBudget (the longest it may hold the document), and a slower one is
// CONFLICT.
const (
	jqAttempts   = 5
	jqHeldBudget = 100 * time.Millisecond
)

// applyJQHeld runs the program inside the document's commit, on the
// latest value, within jqHeldBudget.
func (l *Local) applyJQHeld(ctx context.Context, key, program string, args []compat.Arg, actor, why string, opts []store.UpdateOption) (store.Result, []byte, error) {
	var value []byte
	res, err := l.update(ctx, key, func(cur store.Document) (store.Change, error) {
		var prev []byte
		in := []byte("{}")
		if cur.Exists() {
			var err error
			if prev, err = cur.Bytes(); err != nil {
				return store.Change{}, err
			}
			in = prev
		}
		jctx, cancel := context.WithTimeout(ctx, jqHeldBudget)
		defer cancel()
		next, err := compat.JQ(jctx, program, in, args)
		if err != nil {
			return store.Change{}, err
		}
		if err := l.o.Rules.Validate(key, prev, next); err != nil {
			return store.Change{}, err
		}
		value = next
		return store.Change{Value: next, Actor: actor, Reason: why}, nil
	}, opts...)
	return res, value, err
}

// errJQStale is a commit refused because the document changed after the
// program read it: the program runs again.
var errJQStale = errors.New("the document changed while the jq program ran")

// jqSlots holds a token for each jq program running in this process (each
// may use a CPU for up to compat.JQTimeout); jqLanes serializes the
// programs of one actor (hashed into a lane), so that one caller's queue of
// slow programs holds at most one slot.
var (
	jqSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	jqLanes = func() (l [64]chan struct{}) {
		for i := range l {
			l[i] = make(chan struct{}, 1)
		}
		return l
	}()
)

// jqTurn waits for actor's lane, then for a slot, and returns their
// release; it gives up when ctx ends.
func jqTurn(ctx context.Context, actor string) (func(), error) {
	h := fnv.New32a()
	h.Write([]byte(actor))
	lane := jqLanes[h.Sum32()%uint32(len(jqLanes))]
	select {
	case lane <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for this caller's earlier jq programs: %w", ctx.Err())
	}
	select {
	case jqSlots <- struct{}{}:
	case <-ctx.Done():
		<-lane
		return nil, fmt.Errorf("waiting for a jq slot: %w", ctx.Err())
	}
	return func() { <-jqSlots; <-lane }, nil
}

// JQKey refuses a key a jq program may not change (INVALID_INPUT): the
// one list of documents `apply` touches, whichever door asks (direct, the
// daemon, MCP): the state-manager's state and the dev cycles. The ASDD
// manifest and the task manifest change only through their operations; no
// other project file is the custodian's to write.
func JQKey(key string) error {
	if err := store.CheckKey(key); err != nil {
		return err
	}
	if err := DocumentKey(key); err != nil {
		return err
	}
	switch key {
	case asdd.Key:
		return reason.New(reason.InvalidInput, "%s changes only through its operations (custodian slice add, propose, lock, approve …: custodian --help lists them), not a jq program", key)
	case impl.Key:
		return reason.New(reason.InvalidInput, "%s changes only through its operations (custodian impl --init, --add-task, --update-status …: custodian impl --help), not a jq program", key)
	}
	return nil
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
