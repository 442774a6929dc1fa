package store

import (
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// Replay rebuilds a document value by applying records in order to base (the
// value before the first record; nil for none), checking the sum of each
// record that has one (a record whose sum is empty — the app's — is
// checked through the next record that has one). It returns the value after
// the last record (nil when there is none), in canonical form (compact, keys
// sorted: the form of the records' sums), or base itself when there is no
// record.
//
// base is decoded once and each record's patch is applied to the decoded
// tree (jsonval.PatchTree), and a record's sum encodes only what changed
// since the last one (jsonval.SumCache), so the many records of a crash
// recovery or a verify do not each parse, re-encode and hash the whole
// document (BenchmarkReplay1000). A patch jsonval.PatchTree does not apply
// (operations other than add, replace and remove, whole-document
// operations, edge cases it refuses) goes through the byte-level
// jsonval.ApplyPatch for that record — slower, same result — and so does a
// base that does not decode.
func Replay(base []byte, recs []Record) ([]byte, error) {
	if len(recs) == 0 {
		return base, nil
	}
	var r Replayer
	if base != nil {
		t, err := jsonval.Decode(base)
		if err != nil {
			// Not a value: the byte path fails where it always did (or a
			// whole-document replace makes the base irrelevant).
			return replayBytes(base, recs)
		}
		r.exists, r.tree = true, t
	}
	if err := r.Apply(recs); err != nil {
		return nil, err
	}
	return r.Value()
}

// A Replayer is Replay taken a batch of records at a time, for a journal
// too long to hold in memory at once (a store reads it a file at a time).
// Its zero value starts from no document.
type Replayer struct {
	exists bool // false: no document (tree is nil)
	tree   any
	sums   jsonval.SumCache
	last   uint64 // the last revision applied
}

// Apply applies records in order, checking each sum as Replay does.
func (r *Replayer) Apply(recs []Record) error {
	for i := range recs {
		if err := r.apply(&recs[i]); err != nil {
			return err
		}
		r.last = recs[i].Rev
	}
	return nil
}

// Value returns the value after the records applied so far, as Replay
// would (nil when there is no document).
func (r *Replayer) Value() ([]byte, error) {
	if !r.exists {
		return nil, nil
	}
	out, err := jsonval.CanonicalJSON(r.tree)
	if err != nil {
		return nil, reason.New(reason.CorruptState, "replay to revision %d: %v", r.last, err)
	}
	return out, nil
}

// replayLimits lets Replay apply to trees whatever the byte path would
// apply: what a journal holds was within the limits when it was written.
var replayLimits = jsonval.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30}

// apply applies one record to the tree and checks its sum.
func (r *Replayer) apply(rec *Record) error {
	next, err := jsonval.PatchTree(r.tree, rec.Patch, replayLimits)
	if err == nil {
		r.tree = next
	} else if err := r.applyBytes(rec.Patch); err != nil {
		return reason.New(reason.CorruptState, "replay revision %d: %v", rec.Rev, err)
	}
	if rec.Sum == "" {
		return nil
	}
	sum := ""
	if r.exists {
		if sum, err = r.sums.Sum(r.tree); err != nil {
			return reason.New(reason.CorruptState, "replay revision %d: %v", rec.Rev, err)
		}
	}
	if sum != rec.Sum {
		return reason.New(reason.CorruptState, "replay of revision %d does not reproduce its recorded value", rec.Rev)
	}
	return nil
}

// applyBytes applies a patch through the byte path: the tree's canonical
// form, jsonval.ApplyPatch, and a decode of the result.
func (r *Replayer) applyBytes(patch []byte) error {
	var cur []byte
	if r.exists {
		var err error
		if cur, err = jsonval.CanonicalJSON(r.tree); err != nil {
			return err
		}
	}
	out, err := jsonval.ApplyPatch(cur, patch)
	if err != nil {
		return err
	}
	r.exists, r.tree = out != nil, nil
	if out != nil {
		if r.tree, err = jsonval.Decode(out); err != nil {
			return reason.New(reason.InvalidInput, "malformed JSON: %v", err) // as jsonval.SumOf fails
		}
	}
	return nil
}

// replayBytes is the record-by-record byte path: each patch applied to the
// bytes, each value decoded and checked. Replay uses it for a base that
// does not decode.
func replayBytes(base []byte, recs []Record) ([]byte, error) {
	v := base
	for _, r := range recs {
		next, err := jsonval.ApplyPatch(v, r.Patch)
		if err != nil {
			return nil, reason.New(reason.CorruptState, "replay revision %d: %v", r.Rev, err)
		}
		sum, err := jsonval.SumOf(next)
		if err != nil {
			return nil, reason.New(reason.CorruptState, "replay revision %d: %v", r.Rev, err)
		}
		if r.Sum != "" && sum != r.Sum {
			return nil, reason.New(reason.CorruptState, "replay of revision %d does not reproduce its recorded value", r.Rev)
		}
		v = next
	}
	return v, nil
}
