package store

import (
	"context"
	"encoding/json"
	"iter"
	"time"
)

// Store is the contract every backend implements and the conformance suite
// (package storetest) checks.
type Store interface {
	// Get returns the latest committed document. A key that was never
	// committed returns a NOT_FOUND *reason.Error.
	Get(ctx context.Context, key string) (Document, error)
	// GetAt returns the document as it was right after revision rev.
	GetAt(ctx context.Context, key string, rev uint64) (Document, error)
	// Update runs fn against the latest committed value and commits the
	// value it returns, iff no other commit happened in between; otherwise
	// fn runs again on the new value, a bounded number of times. An error
	// from fn commits nothing and is returned as is. A Change with a nil
	// Value, or a value equal to the current one, commits nothing.
	Update(ctx context.Context, key string, fn UpdateFunc, opts ...UpdateOption) (Result, error)
	// History returns the journal records with from <= rev <= to (to == 0:
	// up to the latest).
	History(ctx context.Context, key string, from, to uint64) ([]Record, error)
	// Watch yields every commit after revision from, in order, with no gap,
	// until ctx is done or an error is yielded.
	Watch(ctx context.Context, key string, from uint64) iter.Seq2[Commit, error]
	// Keys lists the documents the store holds.
	Keys(ctx context.Context) ([]string, error)
	// Verify checks the document's journal hash chain and that replaying the
	// journal reproduces every recorded value and the current snapshot.
	Verify(ctx context.Context, key string) error
	// Close releases the store's resources.
	Close() error
}

// UpdateFunc computes the next value of a document from its current one. It
// must be a pure function of cur: it may run more than once.
type UpdateFunc func(cur Document) (Change, error)

// Document is one committed version of a document.
type Document struct {
	Key      string          `json:"key"`
	Revision uint64          `json:"revision"`
	Value    json.RawMessage `json:"value"` // nil when the document does not exist (revision 0)
	// Memo is, for an Update run WithMemo on a backend that keeps memos,
	// the Memo of the Change that made this version; Value is then nil
	// unless its bytes were already made. Never serialized.
	Memo any `json:"-"`
}

// Exists reports whether the document has a value.
func (d Document) Exists() bool { return d.Value != nil || d.Memo != nil }

// Change is what an UpdateFunc proposes.
type Change struct {
	Value json.RawMessage // the complete next value; nil (and no Lazy) commits nothing
	// Lazy, set instead of Value together with Patch, is the complete next
	// value made only when someone needs its bytes: a backend that applies
	// the patch to its own decoded copy (store/file in Hold mode) keeps it
	// unmade until a read, a snapshot or a watcher asks; any other backend
	// makes it at once (Change.Bytes).
	Lazy LazyValue
	// Memo is the proposer's own decoded form of the next value. A backend
	// that keeps memos (store/file in Hold mode) hands it back to the next
	// Update run WithMemo in Document.Memo, so the proposer neither parses
	// the value again nor has its bytes made. It must never be changed.
	Memo any
	// Patch, when set, is the RFC 6902 patch from the current value to
	// Value, as the proposer computed it (add, replace and remove of
	// members). A backend may apply it to its decoded current value
	// instead of parsing and diffing all of Value, and records it as the
	// commit's patch; the proposer vouches that it matches Value, and
	// must not modify Value afterwards (the backend may keep it as is).
	Patch  json.RawMessage
	Actor  string  // who proposed it (an agent, a role, "custodian")
	Reason string  // why, in a sentence
	Events []Event // domain events the change produced
}

// LazyValue is a complete document value whose bytes are made on demand.
type LazyValue interface {
	// Len is the length of the bytes, known without making them.
	Len() int
	// Bytes makes (once; later calls return the same slice) and returns
	// the value's JSON. Safe for concurrent use; the result must not be
	// modified.
	Bytes() []byte
}

// Bytes returns the change's complete next value: Value, or else Lazy's
// bytes (nil when neither is set: nothing to commit).
func (c Change) Bytes() json.RawMessage {
	if c.Value == nil && c.Lazy != nil {
		return c.Lazy.Bytes()
	}
	return c.Value
}

// Empty reports whether the change commits nothing (no value at all).
func (c Change) Empty() bool { return c.Value == nil && c.Lazy == nil }

// Size is the length of the complete next value.
func (c Change) Size() int {
	if c.Value == nil && c.Lazy != nil {
		return c.Lazy.Len()
	}
	return len(c.Value)
}

// Event is a domain event recorded with the commit that produced it.
type Event struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Result is the outcome of an Update.
type Result struct {
	Document         // the document after the update (the current one if nothing changed)
	Changed  bool    // false when the change was empty
	Record   *Record // the journal record of the commit, nil when nothing changed
}

// Record is one journal line: one commit.
type Record struct {
	Rev    uint64          `json:"rev"`
	Time   time.Time       `json:"time"`
	Actor  string          `json:"actor,omitempty"`
	Reason string          `json:"reason,omitempty"`
	Patch  json.RawMessage `json:"patch"`
	Events []Event         `json:"events,omitempty"`
	Sum    string          `json:"sum"`
	Prev   string          `json:"prev"`
	// MAC, present when the journal is kept with a key (file store:
	// $CUSTODIAN_JOURNAL_KEY), is "hmac-sha256:<hex>" of the record's
	// line with mac and hash empty, under that key: only a holder of the
	// key can make a record that passes CheckMAC.
	MAC  string `json:"mac,omitempty"`
	Hash string `json:"hash"`
}

// Commit is a record of a given document, as delivered by Watch.
type Commit struct {
	Key string `json:"key"`
	Record
}

// UpdateOption adjusts one Update.
type UpdateOption func(*UpdateOptions)

// UpdateOptions are the settings UpdateOption functions change.
type UpdateOptions struct {
	// IfRevision, when non-zero-valued (set), makes the update fail with
	// CONFLICT unless the current revision equals it.
	IfRevision *uint64
	// Create allows the update to create a document that does not exist yet.
	// Without it, updating a missing document is NOT_FOUND.
	Create bool
	// Memo lets the update function receive the current version as its
	// Memo (Document.Memo) with no bytes, when the backend kept one.
	Memo bool
}

// IfRevision makes the update conditional on the current revision
// (compare-and-swap), as with HTTP If-Match.
func IfRevision(rev uint64) UpdateOption {
	return func(o *UpdateOptions) { o.IfRevision = &rev }
}

// Create lets the update create the document.
func Create() UpdateOption { return func(o *UpdateOptions) { o.Create = true } }

// WithMemo lets the update function receive, for a version made by a
// Change with a Memo, that Memo in Document.Memo instead of the value's
// bytes (Value nil unless already made), on backends that keep memos; the
// function must accept either form. The Result then carries the new
// version's Memo, and its Value only if already made.
func WithMemo() UpdateOption { return func(o *UpdateOptions) { o.Memo = true } }

// ApplyOptions folds opts into an UpdateOptions.
func ApplyOptions(opts []UpdateOption) UpdateOptions {
	var o UpdateOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Limits bound what a document may be.
type Limits struct {
	MaxBytes int // 0: DefaultMaxBytes
	MaxDepth int // 0: DefaultMaxDepth
}

// Defaults for Limits.
const (
	DefaultMaxBytes = 64 << 20
	DefaultMaxDepth = 64
	// MaxRetries bounds how often Update re-runs its function on conflict.
	MaxRetries = 64
)

func (l Limits) maxBytes() int {
	if l.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return l.MaxBytes
}

func (l Limits) maxDepth() int {
	if l.MaxDepth <= 0 {
		return DefaultMaxDepth
	}
	return l.MaxDepth
}
