package file

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// editBase finds the revision a direct edit was made on, and its value: a
// direct edit is adopted only as a three-way merge from there. The edit's
// "revision" member tells it, for a document that keeps one (the ASDD
// manifest: a read-modify-write carries the revision it read). Otherwise it
// is the revision, up to the newest the file can have held (e.base, or the
// latest), whose value is fewest operations from the edit (of equals, the
// older): what a writer read and changed a little is nearest to what it
// read. An older base than the true one is safe (at worst a conflict); the
// search widens until its best is not the oldest revision it looked at.
func (d *doc) editBase(e *capturedEdit) (uint64, []byte, error) {
	if !d.has() {
		return d.rev, nil, nil
	}
	prev, err := d.bytes()
	if err != nil {
		return 0, nil, err
	}
	if n, ok := revisionMember(e.value); ok && n >= 1 && n <= d.rev {
		if head, ok := revisionMember(prev); ok && head == d.rev {
			if n == d.rev {
				return n, prev, nil
			}
			v, err := d.replayTo(n)
			return n, v, err
		}
	}
	ub := d.rev
	if e.base > 0 && e.base < ub {
		ub = e.base
	}
	return d.closestRevision(e.value, ub, prev)
}

// revisionMember reads the top-level "revision" member of a JSON object.
func revisionMember(b []byte) (uint64, bool) {
	var v struct {
		Revision *json.Number `json:"revision"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if dec.Decode(&v) != nil || v.Revision == nil {
		return 0, false
	}
	n, err := strconv.ParseUint(v.Revision.String(), 10, 64)
	return n, err == nil
}

// closestRevision returns the revision up to ub whose value is closest to
// edit (the latest value, prev, is revision d.rev's).
func (d *doc) closestRevision(edit []byte, ub uint64, prev []byte) (uint64, []byte, error) {
	et, err := jsonval.Decode(edit)
	if err != nil {
		return 0, nil, err
	}
	distance := func(v []byte) int {
		t, err := jsonval.Decode(v)
		if err != nil {
			return int(^uint(0) >> 1)
		}
		p, err := jsonval.DiffTrees(t, et)
		if err != nil {
			return int(^uint(0) >> 1)
		}
		var ops []json.RawMessage
		_ = json.Unmarshal(p, &ops)
		return len(ops)
	}
	for span := uint64(16); ; span *= 4 {
		lo := uint64(1)
		if ub > span {
			lo = ub - span + 1
		}
		best, bestN := uint64(0), 0
		var bestV []byte
		consider := func(rev uint64, v []byte) {
			if n := distance(v); best == 0 || n < bestN {
				best, bestN, bestV = rev, n, v
			}
		}
		var r store.Replayer
		err := d.eachRecords(1, ub, func(recs []store.Record) error {
			for i := range recs {
				if err := r.Apply(recs[i : i+1]); err != nil {
					return err
				}
				if recs[i].Rev < lo {
					continue
				}
				v, err := r.Value()
				if err != nil {
					return err
				}
				consider(recs[i].Rev, v)
			}
			return nil
		})
		if err != nil {
			return 0, nil, err
		}
		if best == 0 {
			return d.rev, prev, nil // no journal (nothing committed yet)
		}
		if best > lo || lo == 1 {
			return best, bestV, nil
		}
	}
}
