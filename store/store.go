package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
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
	// from fn commits nothing and is returned as is. An empty Change, a
	// value equal to the current one or a patch that changes nothing
	// commits nothing.
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
	Value    json.RawMessage `json:"value"` // nil when the document does not exist (revision 0), or when only Model is at hand
	// Model is the decoded value a proposer committed this revision with
	// (Change.Model), when the backend still holds it (store/file keeps
	// the latest one): the same value, so a proposer that finds its own
	// Model here knows its copy is the current revision's without decoding
	// anything. Value may then be nil (Hold mode makes the bytes only when
	// something needs them): read the bytes with Bytes. Not part of the
	// API's JSON.
	Model json.Marshaler `json:"-"`
}

// Exists reports whether the document has a value.
func (d Document) Exists() bool { return d.Value != nil || d.Model != nil }

// Bytes returns the document's value: Value, or the bytes of its Model
// (nil when the document does not exist). Every reader of a document a
// proposer may have committed with a Model reads it through Bytes.
func (d Document) Bytes() (json.RawMessage, error) {
	if d.Value != nil || d.Model == nil {
		return d.Value, nil
	}
	b, err := d.Model.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s: encode revision %d: %w", d.Key, d.Revision, err)
	}
	return b, nil
}

// Change is what an UpdateFunc proposes: one commit. The next value is
// given whole (Value) or as the RFC 6902 patch from the current value
// (Patch), never both; neither commits nothing. A change may also carry
// Model, the proposer's decoded copy of the next value (its MarshalJSON
// gives the value's bytes, equal to the patch applied to the current
// value): a backend that keeps documents in memory (store/file) keeps it
// as the value and makes its bytes only when a read, a snapshot or a
// watcher needs them; any backend may instead apply the patch to the
// current bytes, or make the bytes from Model at once. A patch that does
// not apply is INVALID_INPUT and commits nothing; one that changes
// nothing ("[]") commits nothing. The backend keeps Value, Patch and
// Model as they are: the proposer must not modify them afterwards.
type Change struct {
	Value  json.RawMessage // the complete next value
	Patch  json.RawMessage // or the RFC 6902 patch from the current value
	Model  json.Marshaler  // optional: the next value, decoded (see above)
	Actor  string          // who proposed it (an agent, a role, "custodian")
	Reason string          // why, in a sentence
	Events []Event         // domain events the change produced
}

// Empty reports whether the change commits nothing (no value, no patch).
func (c Change) Empty() bool { return c.Value == nil && c.Patch == nil }

// Resolve returns the change with its patch, if it has one, applied to
// cur (the current value, nil for none): a change that gives its value,
// for a backend that commits values. A patch that does not apply, or
// that removes the whole document, is INVALID_INPUT.
func (c Change) Resolve(cur []byte) (Change, error) {
	if err := c.Check(); err != nil || c.Patch == nil {
		return c, err
	}
	if string(bytes.TrimSpace(c.Patch)) == "[]" {
		c.Value, c.Patch = cur, nil // nothing changes (no value: nothing to commit)
		return c, nil
	}
	next, err := ApplyPatch(cur, c.Patch)
	if err != nil {
		return c, reason.New(reason.InvalidInput, "the change's patch does not apply: %v", err)
	}
	if next == nil {
		return c, reason.New(reason.InvalidInput, "a patch may not remove the whole document")
	}
	c.Value, c.Patch = next, nil
	return c, nil
}

// Check refuses a change that gives both a value and a patch.
func (c Change) Check() error {
	if c.Value != nil && c.Patch != nil {
		return reason.New(reason.InvalidInput, "a change gives either the next value or a patch, not both")
	}
	return nil
}

// Event is a domain event recorded with the commit that produced it.
type Event struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// AdoptedEvent is the type of the event recorded by the first commit of a
// document nobody journaled (written by a plugin, by hand, by an older
// tool), which adopts it: its data is {"found": the value as it was found}.
const AdoptedEvent = "document.adopted"

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
}

// IfRevision makes the update conditional on the current revision
// (compare-and-swap), as with HTTP If-Match.
func IfRevision(rev uint64) UpdateOption {
	return func(o *UpdateOptions) { o.IfRevision = &rev }
}

// Create lets the update create the document.
func Create() UpdateOption { return func(o *UpdateOptions) { o.Create = true } }

// ApplyOptions folds opts into an UpdateOptions.
func ApplyOptions(opts []UpdateOption) UpdateOptions {
	var o UpdateOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Limits bound what a document may be (MaxBytes 0: DefaultMaxBytes;
// MaxDepth 0: DefaultMaxDepth).
type Limits = jsonval.Limits

// Defaults for Limits.
const (
	DefaultMaxBytes = jsonval.DefaultMaxBytes
	DefaultMaxDepth = jsonval.DefaultMaxDepth
	// MaxRetries bounds how often Update re-runs its function on conflict.
	MaxRetries = 64
)
