package file

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// commit journals and applies a change (nil: it commits nothing). A patch
// with the proposer's model (the application layer's operations) is
// journaled as given and the model becomes the value (commitModel). Any
// other change is made into bytes, checked against the limits, compared
// with the current value and journaled as the difference from it, with the
// new value's canonical sum.
func (d *doc) commit(ch store.Change) (*store.Record, error) {
	if ch.Patch != nil && bytes.Equal(bytes.TrimSpace(ch.Patch), []byte("[]")) {
		return nil, nil // nothing changes
	}
	if ch.Patch != nil && ch.Model != nil && d.has() && !d.adopted {
		return d.commitModel(ch)
	}
	cur, err := d.bytes()
	if err != nil {
		return nil, err
	}
	if ch.Patch != nil {
		if ch, err = ch.Resolve(cur); err != nil {
			return nil, fmt.Errorf("%s: %w", d.p.key, err)
		}
	}
	value, stamped := store.StampRevision(ch.Value, d.rev+1)
	curSum := ""
	if d.has() && !d.adopted {
		if d.sum == "" {
			d.sum = canonicalSum(cur)
		}
		curSum = d.sum
	}
	if stamped && curSum != "" {
		// A value that differs from the current one only by its revision
		// member (a rollback to the latest revision) changes nothing.
		if same, _ := store.StampRevision(ch.Value, d.rev); canonicalSum(same) == curSum {
			return nil, nil
		}
	}
	nv, err := jsonval.ParseValue(value, d.s.opts.Limits)
	if err != nil {
		return nil, err
	}
	if curSum != "" && nv.Sum == curSum {
		return nil, nil
	}
	var from any
	events, why := ch.Events, ch.Reason
	if d.adopted {
		why = strings.TrimPrefix(why+"; ", "; ") + "adopts " + d.p.key + " as found on disk"
		// The first commit of a document nobody journaled (written by a
		// plugin, by hand, by an older tool) adopts it: its record is the
		// whole new value, and says what was found (nothing is lost).
		found := append(append([]byte(`{"found":`), bytes.TrimSpace(cur)...), '}')
		events = append([]store.Event{{Type: store.AdoptedEvent, Data: found}}, events...)
	} else if cur != nil {
		if from, err = jsonval.Decode(cur); err != nil {
			return nil, reason.New(reason.CorruptState, "%s: %v", d.p.key, err)
		}
	}
	patch, err := jsonval.DiffTrees(from, nv.Tree)
	if err != nil {
		return nil, err
	}
	rec := &store.Record{Rev: d.rev + 1, Time: d.commitTime(), Actor: ch.Actor, Reason: why, Patch: patch, Events: events, Sum: nv.Sum}
	raw := bytes.TrimRight(nv.Raw, " \t\r\n")
	if d.held.isLocked() {
		raw = bytes.Clone(raw) // kept compact: the snapshot writer indents it
	} else if raw, err = store.Indent(raw); err != nil {
		return nil, reason.New(reason.InvalidInput, "%v", err)
	}
	return d.appendAndApply(rec, bytesValue(raw), nv.Sum)
}

// commitModel commits a patch with its model, the new value, whose bytes
// are made now outside Hold mode (the snapshot is written with the
// commit), in Hold mode only when something needs them. The record carries
// no canonical sum (at 1,000 slices, a quarter of a CLI commit): the
// checkpoint or, in Hold mode, a mark names the snapshot's revision.
func (d *doc) commitModel(ch store.Change) (*store.Record, error) {
	max := d.s.opts.Limits.MaxBytes
	if max <= 0 {
		max = store.DefaultMaxBytes
	}
	next := &value{model: ch.Model}
	var raw []byte
	if d.held.isLocked() {
		// A patch makes a value at most six times its own length longer
		// (each operation's value and path, with the punctuation around
		// them, are longer than what it adds, and a character escaped as
		// \u00XX is six bytes): the bytes are made, to look, only when
		// that bound passes the limit.
		if next.bound = d.cur.size() + 6*len(ch.Patch); next.bound > max {
			var err error
			if raw, err = next.bytes(); err != nil {
				return nil, fmt.Errorf("%s: %w", d.p.key, err)
			}
			next.bound = len(raw)
		}
	} else {
		var err error
		raw, err = ch.Model.MarshalJSON()
		if err == nil {
			next.raw, err = store.Indent(raw) // checks it is JSON
		}
		if err != nil {
			return nil, fmt.Errorf("%s: the model committed does not encode: %w", d.p.key, err)
		}
		next.bound = len(raw)
	}
	if len(raw) > max {
		return nil, reason.New(reason.InvalidInput, "document is %d bytes, over the limit of %d bytes", len(raw), max)
	}
	rec := &store.Record{Rev: d.rev + 1, Time: d.commitTime(), Actor: ch.Actor, Reason: ch.Reason, Patch: ch.Patch, Events: ch.Events}
	return d.appendAndApply(rec, next, "")
}

// canonicalSum is the canonical sum of v ("" when it does not parse).
func canonicalSum(v []byte) string {
	sum, err := store.SumOf(v)
	if err != nil {
		return ""
	}
	return sum
}

// appendAndApply journals rec (in Hold mode: queues it for the next group
// write) and makes v the current value; sum is its canonical sum ("":
// not known).
func (d *doc) appendAndApply(rec *store.Record, v *value, sum string) (*store.Record, error) {
	prev := ""
	if d.last != nil {
		prev = d.last.Hash
	}
	if d.held.isLocked() {
		return d.held.append(rec, prev, &version{val: v, sum: sum})
	}
	line, err := rec.SealMAC(nil, prev, d.s.key)
	if err != nil {
		return nil, err
	}
	at, err := d.appendJournal(line)
	if err != nil {
		return nil, err
	}
	// Committed: the journal holds it durably.
	d.writeAnchor(rec.Rev, rec.Hash)
	d.rev, d.last = rec.Rev, rec
	d.cur, d.sum, d.adopted = v, sum, false
	if d.j.id, err = d.stat(d.p.journal); err != nil {
		d.loaded = false
	}
	d.snap.wrote = fileID{}
	snap := v.raw // outside Hold mode the bytes are the snapshot's
	if err := d.writeSnapshot(snap, nil); err != nil {
		d.logf("snapshot not rewritten; the journal holds the commit and the next open replays it", "revision", rec.Rev, "error", err)
	} else if d.j.id.exists && d.loaded && d.sealPast(d.j.liveFirst, rec.Rev, d.j.id.size, &d.j.rotateAt) {
		// The snapshot holds every record of the live journal: sealed.
		d.j.id, d.j.liveFirst = fileID{}, rec.Rev+1
	} else if at >= 0 {
		d.writeCheckpoint(rec, at, int64(len(line)), snap, sum)
	}
	if d.snap.wrote.exists {
		d.snap.id = d.snap.wrote // as written, not as it may be by now
	} else if d.snap.id, err = d.stat(d.p.snap); err != nil {
		d.loaded = false
	}
	d.notify()
	return rec, nil
}
