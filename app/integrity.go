package app

import (
	"context"
	"os"
	"path/filepath"
	"slices"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/managed"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Verify checks a document's journal and says what it found (Reader); the
// ASDD manifest is checked against the configuration it pins too
// (asdd.ConfigDrift): the configuration is state as well.
func (l *Local) Verify(ctx context.Context, key string) (store.VerifyReport, error) {
	rep, err := l.reads().Verify(ctx, key)
	if err != nil || key != asdd.Key {
		return rep, err
	}
	m, err := l.Manifest(ctx)
	if err != nil {
		return rep, nil // none yet: the journal's own problems were reported above
	}
	cfg, err := l.o.Config()
	if err != nil {
		return rep, err
	}
	return rep, asdd.ConfigDrift(m, cfg)
}

// VerifyKeys lists what a verification of every document checks: the
// documents the store lists and, when it keeps its files under the
// project root (store.ReportingVerifier), the custodian's documents found
// there without a journal, so that a snapshot whose journal was deleted
// is reported, not skipped. files says the store keeps files there.
func (l *Local) VerifyKeys(ctx context.Context) (keys []string, files bool, err error) {
	if keys, err = l.Keys(ctx); err != nil {
		return nil, false, err
	}
	if _, files = l.o.Store.(store.ReportingVerifier); !files || !l.hasRoot() {
		return keys, files, nil
	}
	for _, pattern := range managed.DocumentKeys {
		found, _ := filepath.Glob(filepath.Join(l.o.Root, filepath.FromSlash(pattern)))
		for _, p := range found {
			if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
				if rel, err := filepath.Rel(l.o.Root, p); err == nil {
					keys = append(keys, filepath.ToSlash(rel))
				}
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), true, nil
}

// Repair settles what a document's opens refuse with CORRUPT_STATE because
// only a person can choose (store.RepairKeep), with the document's writers
// stopped; keep is "journal" or "snapshot". A store that keeps no files to
// settle (etcd) has no repair.
func (l *Local) Repair(ctx context.Context, key, keep, actor, why string) (store.RepairResult, error) {
	r, ok := l.o.Store.(store.Repairer)
	if !ok {
		return store.RepairResult{}, reason.New(reason.InvalidInput, "this store has no repair: it is for the embedded file store's journals")
	}
	return r.Repair(ctx, key, store.RepairKeep(keep), actor, why)
}
