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
// revision rev. History is never rewritten.
func Rollback(ctx context.Context, s Store, key string, rev uint64, actor, why string) (Result, error) {
	if why == "" {
		return Result{}, reason.New(reason.InvalidInput, "a rollback needs a reason")
	}
	old, err := s.GetAt(ctx, key, rev)
	if err != nil {
		return Result{}, err
	}
	if old.Value == nil {
		return Result{}, reason.New(reason.InvalidInput, "%s had no value at revision %d", key, rev)
	}
	return s.Update(ctx, key, func(cur Document) (Change, error) {
		if err := Validate(key, cur.Value, old.Value); err != nil {
			return Change{}, err
		}
		return Change{
			Value:  old.Value,
			Actor:  actor,
			Reason: fmt.Sprintf("rollback to revision %d: %s", rev, why),
			Events: []Event{{Type: "rollback", Data: json.RawMessage(fmt.Sprintf(`{"to":%d}`, rev))}},
		}, nil
	})
}

// Replay rebuilds a document value by applying records in order to base (the
// value before the first record; nil for none), checking each record's sum
// (a record whose sum is empty — all but the last of a daemon's group write
// — is checked through the next record that has one). It returns the value
// after the last record.
func Replay(base []byte, recs []Record) ([]byte, error) {
	v := base
	for _, r := range recs {
		next, err := ApplyPatch(v, r.Patch)
		if err != nil {
			return nil, reason.New(reason.CorruptState, "replay revision %d: %v", r.Rev, err)
		}
		if r.Sum == "" {
			if _, err := SumOf(next); err != nil {
				return nil, reason.New(reason.CorruptState, "replay revision %d: %v", r.Rev, err)
			}
			v = next
			continue
		}
		sum, err := SumOf(next)
		if err != nil {
			return nil, reason.New(reason.CorruptState, "replay revision %d: %v", r.Rev, err)
		}
		if sum != r.Sum {
			return nil, reason.New(reason.CorruptState, "replay of revision %d does not reproduce its recorded value", r.Rev)
		}
		v = next
	}
	return v, nil
}
