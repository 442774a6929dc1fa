package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/custodian-dev/custodian/reason"
)

// DiffRevisions returns the RFC 6902 patch from the document at revision a
// to the document at revision b.
func DiffRevisions(ctx context.Context, s Store, key string, a, b uint64) (json.RawMessage, error) {
	da, err := s.GetAt(ctx, key, a)
	if err != nil {
		return nil, err
	}
	db, err := s.GetAt(ctx, key, b)
	if err != nil {
		return nil, err
	}
	return Diff(da.Value, db.Value)
}

// Rollback commits, as a new revision, the value the document had at
// revision rev, if validate (nil: none) accepts it. History is never
// rewritten.
func Rollback(ctx context.Context, s Store, key string, rev uint64, actor, why string, validate Validator) (Result, error) {
	if why == "" {
		return Result{}, reason.New(reason.InvalidInput, "a rollback needs a reason")
	}
	old, err := s.GetAt(ctx, key, rev)
	if err != nil {
		return Result{}, err
	}
	if old.Value, err = old.Bytes(); err != nil {
		return Result{}, err
	}
	if old.Value == nil {
		return Result{}, reason.New(reason.InvalidInput, "%s had no value at revision %d", key, rev)
	}
	return s.Update(ctx, key, func(cur Document) (Change, error) {
		if validate != nil {
			prev, err := cur.Bytes()
			if err != nil {
				return Change{}, err
			}
			if err := validate(key, prev, old.Value); err != nil {
				return Change{}, err
			}
		}
		return Change{
			Value:  old.Value,
			Actor:  actor,
			Reason: fmt.Sprintf("rollback to revision %d: %s", rev, why),
			Events: []Event{{Type: "rollback", Data: json.RawMessage(fmt.Sprintf(`{"to":%d}`, rev))}},
		}, nil
	})
}
