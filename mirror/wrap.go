package mirror

import (
	"context"
	"errors"

	"github.com/custodian-dev/custodian/store"
)

// Store is a store whose reads and commits refresh the mirrors of the
// documents they touch: what a CLI command on etcd uses when no daemon
// keeps the mirrors current. A mirror that cannot be written is logged,
// never turned into the command's failure (the read or commit happened).
type Store struct {
	store.Store
	m *Mirror
}

// Wrap returns s with mirror refreshes after Get and Update. Close closes
// both s and m.
func Wrap(s store.Store, m *Mirror) *Store { return &Store{Store: s, m: m} }

// Unwrap returns the wrapped store.
func (s *Store) Unwrap() store.Store { return s.Store }

// Mirror returns the Mirror the store refreshes.
func (s *Store) Mirror() *Mirror { return s.m }

// Get reads the document and brings its mirror up to that version.
func (s *Store) Get(ctx context.Context, key string) (store.Document, error) {
	d, err := s.Store.Get(ctx, key)
	if err == nil {
		s.refresh(d)
	}
	return d, err
}

// Update commits and brings the document's mirror up to the version it
// leaves (also when it committed nothing: that is the latest version).
func (s *Store) Update(ctx context.Context, key string, fn store.UpdateFunc, opts ...store.UpdateOption) (store.Result, error) {
	res, err := s.Store.Update(ctx, key, fn, opts...)
	if err == nil {
		s.refresh(res.Document)
	}
	return res, err
}

func (s *Store) refresh(d store.Document) {
	if d.Value == nil {
		return
	}
	s.m.RemoveStaleTempsOnce(d.Key)
	if _, err := s.m.Write(d); err != nil {
		s.m.opts.Logger.Warn("mirror: could not write", "document", d.Key, "revision", d.Revision, "error", err)
	}
}

// Close closes the store and the mirror.
func (s *Store) Close() error {
	return errors.Join(s.Store.Close(), s.m.Close())
}
