package app

import (
	"context"
	"iter"
	"strings"

	"github.com/custodian-dev/custodian/agentstate"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/managed"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Reader reads documents as stored: a version, the journal and the stream
// of commits. It reads any key the store holds: the doors that serve only
// the custodian's documents (the daemon's API, MCP) refuse other keys with
// DocumentKey and list them with Documents. Local and Remote implement it,
// as part of Service; what changes a document goes through Service's
// operations.
type Reader interface {
	// Doc returns the latest committed version of key (Value nil when it
	// was never committed).
	Doc(ctx context.Context, key string) (store.Document, error)
	// DocAt returns key as it was at revision rev (Value nil before its
	// first commit); NOT_FOUND past the latest.
	DocAt(ctx context.Context, key string, rev uint64) (store.Document, error)
	// History returns key's journal records with from <= rev <= to (to 0:
	// up to the latest).
	History(ctx context.Context, key string, from, to uint64) ([]store.Record, error)
	// Keys lists the documents that exist.
	Keys(ctx context.Context) ([]string, error)
	// VerifyKeys lists what a verification of every document checks:
	// Keys, and the custodian's documents a file store holds with no
	// journal (a snapshot whose journal was deleted is reported, not
	// skipped). files says the store keeps files under the project root.
	VerifyKeys(ctx context.Context) (keys []string, files bool, err error)
	// Watch yields every commit of key after revision from, in order.
	Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error]
	// Verify checks key's journal against its latest version
	// (CORRUPT_STATE naming what differs) and says what it found.
	Verify(ctx context.Context, key string) (store.VerifyReport, error)
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

// Documents returns the keys of keys that DocumentKey accepts.
func Documents(keys []string) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if DocumentKey(k) == nil {
			out = append(out, k)
		}
	}
	return out
}

// NoDocument is the error of a read of a document never committed.
func NoDocument(key string) error {
	return reason.New(reason.NotFound, "no document %s (nothing committed yet)", key)
}

// reads are the store's reads both implementations share: Local reads its
// store, Remote the daemon's API (the client is a store.Store).
type reads struct{ st store.Store }

// Doc returns the latest committed version of a document.
func (r reads) Doc(ctx context.Context, key string) (store.Document, error) {
	doc, err := r.st.Get(ctx, key)
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

// DocAt returns a document as it was at a revision.
func (r reads) DocAt(ctx context.Context, key string, rev uint64) (store.Document, error) {
	return r.st.GetAt(ctx, key, rev)
}

// History returns a document's journal records.
func (r reads) History(ctx context.Context, key string, from, to uint64) ([]store.Record, error) {
	return r.st.History(ctx, key, from, to)
}

// Keys lists the documents that exist.
func (r reads) Keys(ctx context.Context) ([]string, error) { return r.st.Keys(ctx) }

// Watch yields the commits of a document after revision from.
func (r reads) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return r.st.Watch(ctx, key, from)
}

// Verify checks a document's journal: the report of a store that gives
// one (store.ReportingVerifier: the file store's recovery notes, anchor
// and MACs), else the revision verified.
func (r reads) Verify(ctx context.Context, key string) (store.VerifyReport, error) {
	if v, ok := r.st.(store.ReportingVerifier); ok {
		return v.VerifyDocument(ctx, key)
	}
	rep := store.VerifyReport{Key: key}
	if err := r.st.Verify(ctx, key); err != nil {
		return rep, err
	}
	doc, err := r.st.Get(ctx, key)
	if err != nil && reason.CodeOf(err) != reason.NotFound {
		return rep, err
	}
	rep.Revision = doc.Revision
	return rep, nil
}

// reads are Local's reads (Remote embeds its own).
func (l *Local) reads() reads { return reads{l.o.Store} }

// Doc returns the latest committed version of a document.
func (l *Local) Doc(ctx context.Context, key string) (store.Document, error) {
	return l.reads().Doc(ctx, key)
}

// DocAt returns a document as it was at a revision.
func (l *Local) DocAt(ctx context.Context, key string, rev uint64) (store.Document, error) {
	return l.reads().DocAt(ctx, key, rev)
}

// History returns a document's journal records.
func (l *Local) History(ctx context.Context, key string, from, to uint64) ([]store.Record, error) {
	return l.reads().History(ctx, key, from, to)
}

// Keys lists the documents that exist.
func (l *Local) Keys(ctx context.Context) ([]string, error) { return l.reads().Keys(ctx) }

// Watch yields the commits of a document after revision from.
func (l *Local) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return l.reads().Watch(ctx, key, from)
}

// ManifestAt returns the ASDD manifest as it was right after revision rev
// (nil before its first commit), read through r: Service.Manifest's
// decoding, of a past version.
func ManifestAt(ctx context.Context, r Reader, rev uint64) (*asdd.Manifest, error) {
	doc, err := r.DocAt(ctx, asdd.Key, rev)
	if err != nil || !doc.Exists() {
		return nil, err
	}
	return manifestOf(doc)
}

// manifestOf decodes a stored ASDD manifest, checking it against its
// schema (CORRUPT_STATE when it does not match).
func manifestOf(doc store.Document) (*asdd.Manifest, error) {
	m, err := asdd.Decode(doc.Value)
	if err != nil {
		return nil, corrupt(err)
	}
	m.Revision = doc.Revision
	return m, nil
}
