package file

import (
	"errors"
	"fmt"
	"io"
	"os"

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
		if err := d.load(); err != nil {
			return err
		}
		d.held.start()
		d.watchEdits()
		d.settleEdit()
		d.tellEdits()
		return nil
	}
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
	// Another process appended to the journal we know: replay the new tail.
	if d.loaded && d.j.id.exists && jid.exists && jid.dev == d.j.id.dev && jid.ino == d.j.id.ino && jid.size > d.j.id.size && !d.adopted {
		if ok, err := d.catchUp(jid, sid); ok || err != nil {
			return err
		}
	}
	if err := d.load(); err != nil {
		return err
	}
	d.settleEdit()
	d.tellEdits()
	return nil
}

// catchUp applies journal records appended after what this process read.
// It returns false when a full load is needed instead.
func (d *doc) catchUp(jid, sid fileID) (bool, error) {
	f, err := d.openRegular(d.p.journal, os.O_RDONLY, 0)
	if err != nil {
		return false, pathError(d.p.key, err)
	}
	defer f.Close()
	data := make([]byte, jid.size-d.j.id.size)
	if _, err := f.ReadAt(data, d.j.id.size); err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read journal %s: %w", d.p.journal, err)
	}
	pj, err := parseJournal(d.p.journal, data, d.j.id.size, d.last)
	if err != nil {
		return false, err
	}
	if pj.torn || len(pj.recs) == 0 {
		return false, nil // let the full load repair it
	}
	last := pj.recs[len(pj.recs)-1]
	// The committer rewrote the snapshot before it let go of the lock, so
	// reading it is one parse, where replaying is one per record.
	if snap, snapID, err := d.readFileID(d.p.snap); err == nil && snap != nil {
		if d.markFor(snap, func(rev uint64) (string, bool) { return last.Hash, rev == last.Rev }) >= 0 ||
			last.Sum != "" && canonicalSum(snap) == last.Sum {
			d.cur, d.sum = bytesValue(snap), last.Sum
			d.rev, d.last, d.j.id = last.Rev, &pj.recs[len(pj.recs)-1], jid
			d.snap.id = snapID
			return true, nil
		}
	}
	cur, err := d.bytes()
	if err != nil {
		return false, err
	}
	v, err := store.Replay(cur, pj.recs)
	if err != nil {
		return false, err
	}
	if err := d.setValue(v); err != nil {
		return false, err
	}
	d.rev = pj.recs[len(pj.recs)-1].Rev
	d.last = &pj.recs[len(pj.recs)-1]
	d.j.id = jid
	d.snap.id = sid
	return true, nil
}

func (d *doc) setValue(v []byte) error {
	d.cur, d.sum = nil, ""
	if v == nil {
		return nil
	}
	sum, err := store.SumOf(v)
	if err != nil {
		return reason.New(reason.CorruptState, "%s: %v", d.p.key, err)
	}
	d.cur, d.sum = bytesValue(v), sum
	return nil
}

// load reads the files from scratch, applying the recovery rules. It
// reads the live journal and the last record of the newest segment, and
// older records only as far back as it needs: to the snapshot's revision
// (found by its sum or mark), or all of them when the snapshot must be
// rebuilt from the journal (segment.go).
func (d *doc) load() error {
	d.loaded = false
	d.readOnly = nil
	if d.loadFast() {
		return nil
	}
	if err := d.recoverTmp(); err != nil {
		return err
	}
	h, err := d.loadHistory()
	if err != nil {
		return err
	}
	var last *store.Record
	if len(h.recs) > 0 {
		l := h.recs[len(h.recs)-1] // a copy: d.last must not keep the records alive
		last = &l
	}
	snap, snapID, err := d.readFileID(d.p.snap)
	if err != nil {
		return err
	}
	var anc *anchor
	if d.repair == nil {
		if anc, err = d.checkAnchor(h.recs, snap != nil); err != nil {
			return err
		}
	}
	d.snap.mark = ""
	r, err := d.recoverValue(h, snap, last)
	if err != nil {
		return err
	}
	if r.rewrite {
		if snap, snapID, err = d.rewriteSnapshot(r.value, last); err != nil {
			return err
		}
		r.value, r.parsed = snap, nil
	}
	if r.parsed != nil {
		d.cur, d.sum = bytesValue(r.value), r.parsed.Sum
	} else if err := d.setValue(r.value); err != nil {
		return err
	}
	d.rev = 0
	d.last = last
	if last != nil {
		d.rev = last.Rev
	}
	d.j.liveFirst = h.liveFirst
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
	if d.edit == nil && d.readOnly == nil && d.repair == nil && last != nil && h.lastOff >= 0 && h.liveLast == last.Rev {
		// Read whole: the next open need not (checkpoint.go).
		d.writeCheckpoint(last, h.lastOff, h.lastLen, snap, d.sum)
	}
	return nil
}

// recovered is the value load settles on.
type recovered struct {
	value   []byte
	parsed  *jsonval.Value // the snapshot's parse, when value is the snapshot
	adopted bool           // value is a snapshot with no journal
	rewrite bool           // the snapshot must be rewritten to hold value
}

// recoverValue settles the document's value from the snapshot snap and
// the journal whose last record is last: the snapshot as it is, the
// journal replayed whole (no snapshot, or one that does not parse: moved
// aside), or a snapshot behind the journal (recoverBehind).
func (d *doc) recoverValue(h *history, snap []byte, last *store.Record) (recovered, error) {
	switch {
	case snap == nil && last == nil:
		return recovered{}, nil // nothing committed yet
	case snap == nil:
		value, err := h.replayAll()
		if err != nil {
			return recovered{}, err
		}
		d.logf("snapshot missing: rebuilt from the journal", "revision", last.Rev)
		return recovered{value: value, rewrite: true}, nil
	}
	pv, perr := jsonval.ParseValue(snap, store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30})
	switch {
	case perr != nil && last == nil:
		return recovered{}, reason.New(reason.CorruptState, "%s does not parse and there is no journal to rebuild it from (the file is left as it is): %v", d.p.snap, perr)
	case perr != nil:
		recs, err := h.all()
		if err != nil {
			return recovered{}, err
		}
		aside, err := d.moveAside(d.p.snap, "corrupt")
		if err != nil {
			return recovered{}, err
		}
		d.logf("snapshot does not parse: moved aside and rebuilt from the journal", "aside", aside, "error", perr)
		d.edit = &capturedEdit{aside: aside, err: perr}
		value, err := store.Replay(nil, recs)
		if err != nil {
			return recovered{}, err
		}
		return recovered{value: value, rewrite: true}, nil
	case last == nil:
		if d.repair == nil {
			if err := d.checkUnjournaled(pv.Tree); err != nil {
				return recovered{}, err
			}
		}
		return recovered{value: snap, parsed: &pv, adopted: true}, nil
	case pv.Sum == last.Sum:
		return recovered{value: snap, parsed: &pv}, nil
	default:
		return d.recoverBehind(h, snap, &pv, last)
	}
}

// recoverBehind settles a snapshot that is not the journal's last
// revision: the records after the one it holds are replayed onto it. A
// snapshot no record or mark names is kept if it holds the journal's
// latest value, and otherwise is a direct edit: moved aside, and the
// journal replayed whole.
func (d *doc) recoverBehind(h *history, snap []byte, pv *jsonval.Value, last *store.Record) (recovered, error) {
	recs, k, err := d.findSnapshotRecord(h, snap, pv.Sum, last)
	if err != nil {
		return recovered{}, err
	}
	switch {
	case k == len(recs)-1:
		return recovered{value: snap, parsed: pv}, nil
	case k >= 0:
		value, err := store.Replay(snap, recs[k+1:])
		if err != nil {
			return recovered{}, err
		}
		d.logf("snapshot behind the journal: replayed", "from", recs[k].Rev, "to", last.Rev)
		return recovered{value: value, rewrite: true}, nil
	}
	// Rebuild from the journal; but a snapshot that holds the value it
	// rebuilds is good although nothing named it — the marks are local to
	// the machine, so a clone of the project has the daemon's snapshot but
	// not its mark — and stays (and gets a mark), unless a mark names
	// these very bytes as another journal's record.
	value, err := h.replayAll()
	if err != nil {
		return recovered{}, err
	}
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
		return recovered{value: snap, parsed: pv}, nil
	}
	aside, err := d.moveAside(d.p.snap, "unjournaled")
	if err != nil {
		return recovered{}, err
	}
	d.logf("snapshot was changed outside the custodian: moved aside and rebuilt from the journal", "aside", aside)
	d.edit = &capturedEdit{aside: aside, value: snap}
	return recovered{value: value, rewrite: true}, nil
}

// findSnapshotRecord finds the record the snapshot holds: the last whose
// sum is the snapshot's, or the one a mark names (a daemon's snapshot of a
// revision whose record carries no sum), searched from the newest record
// back, reading older segments only while it is not found. It returns the
// records read and the index of that record among them (-1: none).
func (d *doc) findSnapshotRecord(h *history, snap []byte, sum string, last *store.Record) ([]store.Record, int, error) {
	recs := h.recs
	for {
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].Sum == sum {
				return recs, i, nil
			}
		}
		k := d.markFor(snap, func(rev uint64) (string, bool) {
			if rev < recs[0].Rev || rev > last.Rev {
				return "", false
			}
			return recs[rev-recs[0].Rev].Hash, true
		})
		if k >= 0 {
			d.snap.mark = store.HashBytes(snap)
			return recs, k - int(recs[0].Rev-1), nil
		}
		more, err := h.older()
		if err != nil || !more {
			return recs, -1, err
		}
		recs = h.recs
	}
}

// rewriteSnapshot writes value, indented, as the snapshot of revision
// last, and returns the bytes and the file written. A failed write leaves
// the document read-only (readOnly) but readable: the journal holds the
// value, and a later load rewrites it.
func (d *doc) rewriteSnapshot(value []byte, last *store.Record) ([]byte, fileID, error) {
	b, err := store.Indent(value)
	if err != nil {
		return nil, fileID{}, err
	}
	if err := d.writeSnapshotFor(b, last); err != nil {
		// The journal holds the value: reads go on (a full disk must
		// not stop them), writes wait for a load that rewrites it.
		d.logf("snapshot not rewritten; serving the journal's value, writes refused until it is", "error", err)
		d.readOnly = fmt.Errorf("%s could not be rewritten from the journal: %w", d.p.snap, err)
		id, _ := d.stat(d.p.snap)
		return b, id, nil
	}
	return b, d.snap.wrote, nil
}

// history is what load has read of a document's journal: recs, contiguous,
// end with the live journal's records; before them come the segments not
// read yet. At first the newest segment is represented by its last record
// alone (tail).
type history struct {
	d         *doc
	recs      []store.Record
	tail      bool      // recs[0] is the newest segment's last record, read alone
	unread    []segment // the segments not read in full, oldest first
	liveFirst uint64    // the first revision of the live journal (or of the next one)
	// lastOff and lastLen locate the live journal's last record, liveLast
	// (lastOff -1: the live journal holds none).
	lastOff, lastLen int64
	liveLast         uint64
}

// loadHistory reads the live journal (repairing a torn tail) and the last
// record of the newest segment, which the live journal must continue.
func (d *doc) loadHistory() (*history, error) {
	segs, err := d.segments()
	if err != nil {
		return nil, err
	}
	h := &history{d: d, unread: segs, liveFirst: 1}
	var tail *store.Record
	if len(segs) > 0 {
		r, err := d.readTail(segs[len(segs)-1])
		if err != nil {
			return nil, err
		}
		tail = &r
		h.recs, h.tail, h.liveFirst = []store.Record{r}, true, r.Rev+1
	}
	pj, err := d.readJournal(true, tail)
	if err != nil {
		return nil, err
	}
	h.recs = append(h.recs, pj.recs...)
	h.lastOff = pj.lastOff
	if n := len(pj.recs); n > 0 {
		h.lastLen, h.liveLast = pj.end-pj.lastOff, pj.recs[n-1].Rev
	}
	return h, nil
}

// older reads the newest unread segment in full and puts its records
// before the ones held; false when there is none left.
func (h *history) older() (bool, error) {
	if len(h.unread) == 0 {
		if len(h.recs) > 0 && h.recs[0].Rev != 1 {
			return false, reason.New(reason.CorruptState, "the journal of %s starts at revision %d: no segment holds the revisions before it", h.d.p.key, h.recs[0].Rev)
		}
		return false, nil
	}
	s := h.unread[len(h.unread)-1]
	h.unread = h.unread[:len(h.unread)-1]
	recs, err := h.d.parseSegment(s, nil)
	if err != nil {
		return false, err
	}
	next := h.recs
	if h.tail {
		// The segment's last record was read alone: it must be the same.
		if got := recs[len(recs)-1]; got.Hash != next[0].Hash {
			return false, corruptSegment(s.name, got.Rev, "its last record changed while it was read")
		}
		next, h.tail = next[1:], false
	}
	if len(next) > 0 {
		if err := store.Chain(&recs[len(recs)-1], next[0]); err != nil {
			return false, corruptSegment(s.name, s.to, "the next file does not continue it: %v", err)
		}
	}
	h.recs = append(recs, next...)
	return true, nil
}

// all reads every segment not read yet: the whole journal from revision 1.
func (h *history) all() ([]store.Record, error) {
	for {
		more, err := h.older()
		if err != nil {
			return nil, err
		}
		if !more {
			return h.recs, nil
		}
	}
}

// replayAll reads every record and replays them from nothing.
func (h *history) replayAll() ([]byte, error) {
	recs, err := h.all()
	if err != nil {
		return nil, err
	}
	return store.Replay(nil, recs)
}

// recoverTmp applies seed 002's rules to a leftover <snapshot>.tmp.
func (d *doc) recoverTmp() error {
	tmp, err := d.readFile(d.p.tmp)
	if err != nil || tmp == nil {
		return err
	}
	snap, err := d.readFile(d.p.snap)
	if err != nil {
		return err
	}
	_, tmpErr := store.SumOf(tmp)
	if snap != nil {
		if _, snapErr := store.SumOf(snap); snapErr == nil {
			// Interrupted write: the main file is intact.
			d.logf("removing interrupted write", "file", d.p.tmp)
			return d.s.root.Remove(d.p.tmp)
		}
		if tmpErr != nil {
			_, err := d.moveAside(d.p.tmp, "corrupt")
			return err
		}
		if _, err := d.moveAside(d.p.snap, "corrupt"); err != nil {
			return err
		}
	} else if tmpErr != nil {
		_, err := d.moveAside(d.p.tmp, "corrupt")
		return err
	}
	// Write completed but the rename did not: promote it.
	d.logf("promoting completed write", "file", d.p.tmp)
	if err := d.s.root.Rename(d.p.tmp, d.p.snap); err != nil {
		return fmt.Errorf("promote %s: %w", d.p.tmp, err)
	}
	return d.syncDir()
}
