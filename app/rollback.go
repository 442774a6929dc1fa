package app

import (
	"context"
	"strings"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Rollback restores a managed document's value at revision rev, as a new
// commit by actor (history is never rewritten). It is a human decision:
// refused to an agent (UNAUTHORIZED).
func (l *Local) Rollback(ctx context.Context, key string, rev uint64, actor, why string) (store.Result, error) {
	if err := checkRollback(ctx, key, why); err != nil {
		return store.Result{}, err
	}
	return store.Rollback(ctx, l.o.Store, key, rev, actor, why)
}

// Rollback asks the daemon to restore a managed document's value at
// revision rev (the daemon checks the admin token).
func (r *Remote) Rollback(ctx context.Context, key string, rev uint64, actor, why string) (store.Result, error) {
	if err := checkRollback(ctx, key, why); err != nil {
		return store.Result{}, err
	}
	return store.Rollback(ctx, r.c, key, rev, actor, why)
}

func checkRollback(ctx context.Context, key, why string) error {
	if CallerOf(ctx) == Agent {
		return errHuman("a rollback")
	}
	if err := DocumentKey(key); err != nil {
		return err
	}
	if strings.TrimSpace(why) == "" {
		return reason.New(reason.InvalidInput, "a rollback needs a reason")
	}
	return nil
}
