package file

import (
	"fmt"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// refresh brings the in-memory view up to date with the files. It must run
// under the lock; it repairs what the recovery rules allow.
func (d *doc) refresh() error {
	if d.held.isLocked() {
		// Hold mode: nobody else writes while the lock is held, so the
		// files are read once.
		if d.loaded {
			return nil
		}
	} else {
		jid, err := d.stat(d.p.journal)
		if err != nil {
			return err
		}
		sid, err := d.stat(d.p.snap)
		if err != nil {
			return err
		}
		if d.loaded && jid == d.j.id && sid == d.snap.id {
			return nil
		}
		// Never read, or changed behind this process (another one
		// committed: its checkpoint makes the load cheap).
	}
	if err := d.load(); err != nil {
		return err
	}
	if d.held.isLocked() {
		d.held.start()
		d.watchEdits()
	}
	d.settleEdit()
	d.tellEdits()
	return nil
}

// load reads the files from scratch, applying the recovery rules: by the
// checkpoint when it holds (checkpoint.go), else the live journal and the
// newest segment's last record, and older records only when the snapshot
// is not among those (recoverValue).
func (d *doc) load() error {
	d.loaded = false
	d.readOnly = nil
	if d.loadFast() {
		return nil
	}
	if err := d.recoverTmp(); err != nil {
		return err
	}
	seg, tail, err := d.newestSegment()
	if err != nil {
		return err
	}
	pj, err := d.readJournal(tail)
	if err != nil {
		return err
	}
	recs := pj.recs
	d.j.liveFirst = 1
	if tail != nil {
		recs = append([]store.Record{*tail}, recs...)
		d.j.liveFirst = tail.Rev + 1
	}
	var last *store.Record
	if len(recs) > 0 {
		l := recs[len(recs)-1] // a copy: d.last must not keep the records alive
		last = &l
	}
	snap, snapID, err := d.readFileID(d.p.snap)
	if err != nil {
		return err
	}
	var anc *anchor
	if d.repair == nil {
		if anc, err = d.checkAnchor(recs, snap != nil); err != nil {
			return err
		}
	}
	d.snap.mark = ""
	r, err := d.recoverValue(recs, seg, snap, last)
	if err != nil {
		return err
	}
	if r.value != nil && r.sum == "" {
		if r.sum, err = store.SumOf(r.value); err != nil {
			return reason.New(reason.CorruptState, "%s: %v", d.p.key, err)
		}
	}
	if r.rewrite {
		if snap, err = store.Indent(r.value); err != nil {
			return err
		}
		r.value = snap
		if err := d.writeSnapshot(snap, last); err != nil {
			// The journal holds the value: reads go on (a full disk must
			// not stop them), writes wait for a load that rewrites it.
			d.logf("snapshot not rewritten; serving the journal's value, writes refused until it is", "error", err)
			d.readOnly = fmt.Errorf("%s could not be rewritten from the journal: %w", d.p.snap, err)
			snapID, _ = d.stat(d.p.snap)
		} else {
			snapID = d.snap.wrote
		}
	}
	d.cur, d.sum = nil, r.sum
	if r.value != nil {
		d.cur = bytesValue(r.value)
	}
	d.rev, d.last = 0, last
	if last != nil {
		d.rev = last.Rev
	}
	d.adopted = r.adopted
	if d.j.id, err = d.stat(d.p.journal); err != nil {
		return err
	}
	// The snapshot as read or written here, not as it is now: an edit
	// made since is seen as a change by the next look.
	d.snap.id = snapID
	d.snap.hash = ""
	if d.s.opts.Hold && snap != nil && d.snap.id.exists {
		d.snap.hash = store.HashBytes(snap)
	}
	d.loaded = true
	d.advanceAnchor(anc, last)
	if d.edit == nil && d.readOnly == nil && d.repair == nil && len(pj.recs) > 0 {
		// Read whole: the next open need not (checkpoint.go).
		d.writeCheckpoint(last, pj.lastOff, pj.end-pj.lastOff, snap, d.sum)
	}
	return nil
}

// recovered is the value load settles on.
type recovered struct {
	value   []byte
	sum     string // the value's canonical sum ("": to compute)
	adopted bool   // value is a snapshot with no journal
	rewrite bool   // the snapshot must be rewritten to hold value
}

// recoverValue settles the document's value from the snapshot snap and
// the journal's records recs (the newest segment's last record, seg's,
// and the live journal's; last is the last of them). A snapshot that a
// record's sum or a mark names is brought up to date by replaying the
// records after it; it is looked for in recs, then in seg and recs, then
// in the whole journal. A snapshot missing, one that does not parse
// (moved aside), or one nothing names is rebuilt from the whole journal;
// but one nothing names that holds the value rebuilt is kept (and gets a
// mark): the marks are local to the machine, so a clone of the project
// has the daemon's snapshot but not its mark. Otherwise it is a direct
// edit, moved aside.
func (d *doc) recoverValue(recs []store.Record, seg *segment, snap []byte, last *store.Record) (recovered, error) {
	if snap == nil && last == nil {
		return recovered{}, nil // nothing committed yet
	}
	var pv jsonval.Value
	perr := error(nil)
	if snap != nil {
		pv, perr = jsonval.ParseValue(snap, store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30})
	}
	switch {
	case perr != nil && last == nil:
		return recovered{}, reason.New(reason.CorruptState, "%s does not parse and there is no journal to rebuild it from (the file is left as it is): %v", d.p.snap, perr)
	case last == nil:
		if d.repair == nil {
			if n, err := d.checkUnjournaled(pv.Tree); err != nil {
				return recovered{}, err
			} else if n != "" {
				d.logf("snapshot names a revision but has no journal: adopted as found (custodian verify reports it)", "revision", n)
			}
		}
		return recovered{value: snap, sum: pv.Sum, adopted: true}, nil
	case snap != nil && perr == nil && pv.Sum == last.Sum:
		return recovered{value: snap, sum: pv.Sum}, nil
	}
	froms := []uint64{recs[0].Rev, 1}
	if seg != nil && snap != nil && perr == nil {
		froms = []uint64{recs[0].Rev, seg.from, 1}
	}
	for _, from := range froms {
		if from < recs[0].Rev {
			var err error
			if recs, err = d.readRecords(from, last.Rev); err != nil {
				return recovered{}, err
			}
		}
		if snap == nil || perr != nil {
			continue
		}
		// The record the snapshot holds: the last whose sum is the
		// snapshot's, or the one a mark names (its record has no sum).
		k := len(recs) - 1
		for k >= 0 && recs[k].Sum != pv.Sum {
			k--
		}
		if k < 0 {
			if rev := d.markFor(snap, hashesOf(recs)); rev > 0 {
				k, d.snap.mark = int(rev-recs[0].Rev), store.HashBytes(snap)
			}
		}
		if k == len(recs)-1 {
			return recovered{value: snap, sum: pv.Sum}, nil
		} else if k >= 0 {
			value, err := store.Replay(snap, recs[k+1:])
			if err != nil {
				return recovered{}, err
			}
			d.logf("snapshot behind the journal: replayed", "from", recs[k].Rev, "to", last.Rev)
			return recovered{value: value, rewrite: true}, nil
		}
		if recs[0].Rev == 1 {
			break
		}
	}
	value, err := store.Replay(nil, recs)
	if err != nil {
		return recovered{}, err
	}
	kind := "unjournaled"
	switch {
	case snap == nil:
		d.logf("snapshot missing: rebuilt from the journal", "revision", last.Rev)
		return recovered{value: value, rewrite: true}, nil
	case perr != nil:
		kind = "corrupt"
	default:
		if sum, err := store.SumOf(value); err == nil && sum == pv.Sum {
			d.logf("snapshot named by no record or mark holds the journal's latest value: kept", "revision", last.Rev)
			if last.Sum == "" {
				m := mark{Rev: last.Rev, Hash: last.Hash, File: store.HashBytes(snap)}
				if err := d.writeMark(m); err != nil {
					d.logf("mark not written; the next open replays the journal again", "error", err)
				} else {
					d.snap.mark = m.File
				}
			}
			return recovered{value: snap, sum: pv.Sum}, nil
		}
	}
	aside, err := d.moveAside(d.p.snap, kind)
	if err != nil {
		return recovered{}, err
	}
	if perr != nil {
		d.logf("snapshot does not parse: moved aside and rebuilt from the journal", "aside", aside, "error", perr)
		d.edit = &capturedEdit{aside: aside, err: perr}
	} else {
		d.logf("snapshot was changed outside the custodian: moved aside and rebuilt from the journal", "aside", aside)
		d.edit = &capturedEdit{aside: aside, value: snap}
	}
	return recovered{value: value, rewrite: true}, nil
}

// recoverTmp applies seed 002's rules to a leftover <snapshot>.tmp: removed
// when the snapshot parses (an interrupted write), promoted when the
// snapshot is missing or does not parse (moved aside) and it parses (a
// rename cut short), moved aside otherwise.
func (d *doc) recoverTmp() error {
	tmp, err := d.readFile(d.p.tmp)
	if err != nil || tmp == nil {
		return err
	}
	snap, err := d.readFile(d.p.snap)
	if err != nil {
		return err
	}
	if snap != nil {
		if _, err := store.SumOf(snap); err == nil {
			d.logf("removing interrupted write", "file", d.p.tmp)
			return d.s.root.Remove(d.p.tmp)
		}
	}
	if _, err := store.SumOf(tmp); err != nil {
		_, err := d.moveAside(d.p.tmp, "corrupt")
		return err
	}
	if snap != nil {
		if _, err := d.moveAside(d.p.snap, "corrupt"); err != nil {
			return err
		}
	}
	d.logf("promoting completed write", "file", d.p.tmp)
	if err := d.s.root.Rename(d.p.tmp, d.p.snap); err != nil {
		return fmt.Errorf("promote %s: %w", d.p.tmp, err)
	}
	return d.syncDir()
}
