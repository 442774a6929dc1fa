package app

import (
	"context"
	"github.com/custodian-dev/custodian/managed"
	"iter"
	"strings"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Reader reads any managed document as stored: its latest value, its
// journal and the stream of its commits. Doors that show documents as
// they are (the MCP server's resources and history) read through it; what
// they change still goes through Service. Local and Remote implement it.
type Reader interface {
	// Doc returns the latest committed version of key (Value nil when it
	// was never committed).
	Doc(ctx context.Context, key string) (store.Document, error)
	// History returns key's journal records with from <= rev <= to (to 0:
	// up to the latest).
	History(ctx context.Context, key string, from, to uint64) ([]store.Record, error)
	// Keys lists the documents that exist.
	Keys(ctx context.Context) ([]string, error)
	// Watch yields every commit of key after revision from, in order.
	Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error]
}

// DocumentKey refuses a key that is not one of the custodian's documents
// (INVALID_INPUT): the ASDD manifest, the task manifest, the
// state-manager's state and the dev cycles; never another project file.
func DocumentKey(key string) error {
	if managed.IsDocument(key) {
		if _, isCycle := cycle.IDFromKey(key); isCycle || !strings.HasPrefix(key, cycle.Dir+"/") {
			return nil
		}
	}
	return reason.New(reason.InvalidInput, "%q is not a custodian document (%s, %s, %s or %s)", key, asdd.Key, impl.Key, agentstate.Key, cycle.Key("<id>"))
}

var (
	_ Reader = (*Local)(nil)
	_ Reader = (*Remote)(nil)
)

// Doc returns the latest committed version of a managed document.
func (l *Local) Doc(ctx context.Context, key string) (store.Document, error) {
	if err := DocumentKey(key); err != nil {
		return store.Document{}, err
	}
	doc, err := l.o.Store.Get(ctx, key)
	if reason.CodeOf(err) == reason.NotFound {
		return store.Document{Key: key}, nil
	}
	if err == nil {
		doc.Value, err = doc.Bytes() // made from the model the store holds, if need be
	}
	if err != nil {
		return store.Document{}, err
	}
	return doc, nil
}

// History returns a managed document's journal records.
func (l *Local) History(ctx context.Context, key string, from, to uint64) ([]store.Record, error) {
	if err := DocumentKey(key); err != nil {
		return nil, err
	}
	return l.o.Store.History(ctx, key, from, to)
}

// Keys lists the managed documents that exist.
func (l *Local) Keys(ctx context.Context) ([]string, error) { return managedKeys(l.o.Store.Keys(ctx)) }

// Watch yields the commits of a managed document after revision from.
func (l *Local) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return watchKey(ctx, l.o.Store, key, from)
}

// Doc reads a managed document from the daemon.
func (r *Remote) Doc(ctx context.Context, key string) (store.Document, error) {
	if err := DocumentKey(key); err != nil {
		return store.Document{}, err
	}
	doc, err := r.c.Get(ctx, key)
	if reason.CodeOf(err) == reason.NotFound {
		return store.Document{Key: key}, nil
	}
	return doc, err
}

// History reads a managed document's journal from the daemon.
func (r *Remote) History(ctx context.Context, key string, from, to uint64) ([]store.Record, error) {
	if err := DocumentKey(key); err != nil {
		return nil, err
	}
	return r.c.History(ctx, key, from, to)
}

// Keys lists the managed documents the daemon holds.
func (r *Remote) Keys(ctx context.Context) ([]string, error) { return managedKeys(r.c.Keys(ctx)) }

// Watch follows a managed document's commits through the daemon's watch
// stream.
func (r *Remote) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return watchKey(ctx, r.c, key, from)
}

func managedKeys(keys []string, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if DocumentKey(k) == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

func watchKey(ctx context.Context, st store.Store, key string, from uint64) iter.Seq2[store.Commit, error] {
	if err := DocumentKey(key); err != nil {
		return func(yield func(store.Commit, error) bool) { yield(store.Commit{}, err) }
	}
	return st.Watch(ctx, key, from)
}
