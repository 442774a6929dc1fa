package store

import (
	"encoding/json"
	"strings"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// Replay rebuilds a document value by applying records in order to base (the
// value before the first record; nil for none), checking the sum of each
// record that has one (a record whose sum is empty — the daemon's — is
// checked through the next record that has one). It returns the value after
// the last record (nil when there is none), in canonical form (compact, keys
// sorted: the form of the records' sums), or base itself when there is no
// record.
//
// The cost is one decode of base, the patches themselves, one canonical
// hash per record with a sum (encoding only what changed since the last
// one; see jsonval.SumCache), and one encoding at the end: base is decoded
// once and each record's patch is applied to the decoded tree
// (jsonval.PatchTree), so the many records of a crash recovery or a verify
// do not each parse, re-encode and hash the whole document. A patch
// jsonval.PatchTree does not apply (operations other than add, replace and
// remove, or edge cases it refuses) goes through the byte-level
// jsonval.ApplyPatch for that record — slower, same result — and so does a
// base that does not decode.
func Replay(base []byte, recs []Record) ([]byte, error) {
	if len(recs) == 0 {
		return base, nil
	}
	var r Replayer
	if base != nil && !r.start(base) {
		// Not a value: the byte path fails where it always did (or a
		// whole-document replace makes the base irrelevant).
		return replayBytes(base, recs)
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
	r    replayer
	last uint64 // the last revision applied
}

// start makes base the value before the first record; false if it is not
// a JSON value.
func (p *Replayer) start(base []byte) bool {
	t, err := jsonval.Decode(base)
	if err != nil {
		return false
	}
	p.r.exists, p.r.tree = true, t
	return true
}

// Apply applies records in order, checking each sum as Replay does.
func (p *Replayer) Apply(recs []Record) error {
	for i := range recs {
		if err := p.r.apply(&recs[i]); err != nil {
			return err
		}
		p.last = recs[i].Rev
	}
	return nil
}

// Value returns the value after the records applied so far, as Replay
// would (nil when there is no document).
func (p *Replayer) Value() ([]byte, error) {
	out, err := p.r.bytes()
	if err != nil {
		return nil, reason.New(reason.CorruptState, "replay to revision %d: %v", p.last, err)
	}
	return out, nil
}

// replayLimits lets Replay apply to trees whatever the byte path would
// apply: what a journal holds was within the limits when it was written.
var replayLimits = jsonval.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30}

// replayer is the state of one Replay: the current tree.
type replayer struct {
	exists bool // false: no document (tree is nil)
	tree   any
	sums   jsonval.SumCache
}

// apply applies one record to the tree and checks its sum.
func (r *replayer) apply(rec *Record) error {
	applied := false
	if r.exists && exactOpKeys(rec.Patch) {
		if next, err := jsonval.PatchTree(r.tree, rec.Patch, replayLimits); err == nil {
			r.tree, applied = next, true
		}
	}
	if !applied {
		if op, ok := wholeDocument(rec.Patch); ok {
			if err := r.replaceAll(op); err != nil {
				return reason.New(reason.CorruptState, "replay revision %d: %v", rec.Rev, err)
			}
		} else if err := r.applyBytes(rec.Patch); err != nil {
			return reason.New(reason.CorruptState, "replay revision %d: %v", rec.Rev, err)
		}
	}
	if rec.Sum == "" {
		return nil
	}
	sum := ""
	if r.exists {
		var err error
		if sum, err = r.sums.Sum(r.tree); err != nil {
			return reason.New(reason.CorruptState, "replay revision %d: %v", rec.Rev, err)
		}
	}
	if sum != rec.Sum {
		return reason.New(reason.CorruptState, "replay of revision %d does not reproduce its recorded value", rec.Rev)
	}
	return nil
}

// wholeDocument returns the patch's operation when it is the single
// whole-document add, replace or remove that jsonval.ApplyPatch handles itself.
func wholeDocument(patch []byte) (jsonval.RootOp, bool) {
	var ops []jsonval.RootOp
	if err := json.Unmarshal(patch, &ops); err != nil || len(ops) != 1 || ops[0].Path != "" {
		return jsonval.RootOp{}, false
	}
	switch ops[0].Op {
	case "add", "replace", "remove":
		return ops[0], true
	}
	return jsonval.RootOp{}, false
}

// replaceAll applies a whole-document operation as jsonval.ApplyPatch does.
func (r *replayer) replaceAll(op jsonval.RootOp) error {
	if op.Op == "remove" || op.Value == nil || (string(op.Value) == "null" && !r.exists) {
		r.exists, r.tree = false, nil
		return nil
	}
	t, err := decodeValue(op.Value)
	if err != nil {
		return err
	}
	r.exists, r.tree = true, t
	return nil
}

// applyBytes applies a patch through the byte path: the tree's canonical
// form, jsonval.ApplyPatch, and a decode of the result.
func (r *replayer) applyBytes(patch []byte) error {
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
	if out == nil {
		r.exists, r.tree = false, nil
		return nil
	}
	t, err := decodeValue(out)
	if err != nil {
		return err
	}
	r.exists, r.tree = true, t
	return nil
}

// decodeValue decodes a value the byte path made, failing as jsonval.SumOf does.
func decodeValue(raw []byte) (any, error) {
	t, err := jsonval.Decode(raw)
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "malformed JSON: %v", err)
	}
	return t, nil
}

// bytes returns the final value in canonical form.
func (r *replayer) bytes() ([]byte, error) {
	if !r.exists {
		return nil, nil
	}
	return jsonval.CanonicalJSON(r.tree)
}

// exactOpKeys reports whether every member name of the patch's operations
// that encoding/json would take for op, path, value or from is spelled
// exactly so. jsonval.PatchTree's decoding matches them case-insensitively, the
// byte path's JSON patch library does not; a patch spelled otherwise goes
// through the byte path so that both replays agree.
func exactOpKeys(patch []byte) bool {
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(patch, &ops); err != nil {
		return true // jsonval.PatchTree refuses it too
	}
	for _, op := range ops {
		for k := range op {
			switch k {
			case "op", "path", "value", "from":
				continue
			}
			for _, name := range [...]string{"op", "path", "value", "from"} {
				if strings.EqualFold(k, name) {
					return false
				}
			}
		}
	}
	return true
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
