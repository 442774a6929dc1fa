package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// parsedJournal is the result of reading a journal file.
type parsedJournal struct {
	recs []store.Record
	end  int64 // offset just past the last complete, valid line
	// lastOff is the offset where the last record's line starts (-1: no
	// record).
	lastOff int64
	torn    bool // bytes after end that do not end with a newline
}

// parseJournal decodes journal bytes that start at offset base and continue
// the chain after prev (nil: from the beginning; loose: after a record in
// a file not read, whose hash is taken from the first line). A bad complete line is a
// CORRUPT_STATE error naming the revision; an unterminated tail is reported
// as torn, never as an error.
func parseJournal(name string, data []byte, base int64, prev *store.Record) (parsedJournal, error) {
	return parseJournalUpTo(name, data, base, prev, math.MaxUint64)
}

// parseJournalUpTo is parseJournal stopping after revision maxRev.
func parseJournalUpTo(name string, data []byte, base int64, prev *store.Record, maxRev uint64) (parsedJournal, error) {
	var pj parsedJournal
	pj.end, pj.lastOff = base, -1
	off := 0
	for off < len(data) {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			pj.torn = true
			break
		}
		line := data[off : off+nl]
		want := uint64(1)
		if prev != nil {
			want = prev.Rev + 1
		}
		r, err := store.DecodeRecord(line)
		if err != nil {
			return pj, reason.New(reason.CorruptState, "journal %s is corrupt at revision %d (byte %d): %v", name, want, base+int64(off), err)
		}
		if isLoose(prev) {
			// The record before is in a file not read: only the
			// revision can be checked.
			if r.Rev != want {
				return pj, reason.New(reason.CorruptState, "journal %s is corrupt at revision %d (byte %d): journal revision %d follows revision %d", name, want, base+int64(off), r.Rev, want-1)
			}
		} else if err := store.Chain(prev, r); err != nil {
			return pj, reason.New(reason.CorruptState, "journal %s is corrupt at revision %d (byte %d): %v", name, want, base+int64(off), err)
		}
		if r.Rev > maxRev {
			break
		}
		pj.recs = append(pj.recs, r)
		prev = &pj.recs[len(pj.recs)-1]
		pj.lastOff = base + int64(off)
		off += nl + 1
		pj.end = base + int64(off)
	}
	return pj, nil
}

// refresh brings the in-memory view up to date with the files. It must run
// under the lock; it repairs what the recovery rules allow.
func (d *doc) refresh() error {
	if d.held.locked {
		// Hold mode: nobody else writes while the lock is held, so the
		// files are read once.
		if d.loaded {
			return nil
		}
		if err := d.load(); err != nil {
			return err
		}
		d.heldInit()
		d.watchEdits()
		d.settleEdit()
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
	if d.loaded && jid == d.jID && sid == d.sID {
		return nil
	}
	// Another process appended to the journal we know: replay the new tail.
	if d.loaded && d.jID.exists && jid.exists && jid.dev == d.jID.dev && jid.ino == d.jID.ino && jid.size > d.jID.size && !d.adopted {
		if ok, err := d.catchUp(jid, sid); ok || err != nil {
			return err
		}
	}
	if err := d.load(); err != nil {
		return err
	}
	d.settleEdit()
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
	data := make([]byte, jid.size-d.jID.size)
	if _, err := f.ReadAt(data, d.jID.size); err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read journal %s: %w", d.p.journal, err)
	}
	pj, err := parseJournal(d.p.journal, data, d.jID.size, d.last)
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
		if pv, err := jsonval.ParseValue(snap, store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30}); err == nil && pv.Sum == last.Sum {
			d.value, d.lazy, d.tree, d.sum = snap, nil, pv.Tree, pv.Sum
			d.rev, d.last, d.jID = last.Rev, &pj.recs[len(pj.recs)-1], jid
			d.sID = snapID
			return true, nil
		}
	}
	v, err := store.Replay(d.value, pj.recs)
	if err != nil {
		return false, err
	}
	if err := d.setValue(v); err != nil {
		return false, err
	}
	d.rev = pj.recs[len(pj.recs)-1].Rev
	d.last = &pj.recs[len(pj.recs)-1]
	d.jID = jid
	d.sID = sid
	return true, nil
}

func (d *doc) setValue(v []byte) error {
	d.value, d.lazy = v, nil
	d.tree = nil
	d.sum = ""
	if v == nil {
		return nil
	}
	pv, err := jsonval.ParseValue(v, store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30})
	if err != nil {
		return reason.New(reason.CorruptState, "%s: %v", d.p.key, err)
	}
	d.tree, d.sum = pv.Tree, pv.Sum
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
	recs := h.recs
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
	d.snapMark = ""
	var value []byte
	var parsed *jsonval.Value // the snapshot's parse, when value is the snapshot
	adopted := false
	rewrite := false
	switch {
	case snap == nil && last == nil:
		// Nothing committed yet.
	case snap == nil:
		if recs, err = h.all(); err != nil {
			return err
		}
		if value, err = store.Replay(nil, recs); err != nil {
			return err
		}
		rewrite = true
		d.logf("snapshot missing: rebuilt from the journal", "revision", last.Rev)
	default:
		pv, perr := jsonval.ParseValue(snap, store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30})
		switch {
		case perr != nil && last == nil:
			return reason.New(reason.CorruptState, "%s does not parse and there is no journal to rebuild it from (the file is left as it is): %v", d.p.snap, perr)
		case perr != nil:
			if recs, err = h.all(); err != nil {
				return err
			}
			aside, err := d.moveAside(d.p.snap, "corrupt")
			if err != nil {
				return err
			}
			d.logf("snapshot does not parse: moved aside and rebuilt from the journal", "aside", aside, "error", perr)
			d.edit = &capturedEdit{aside: aside, err: perr}
			if value, err = store.Replay(nil, recs); err != nil {
				return err
			}
			rewrite = true
		case last == nil:
			if d.repair == nil {
				if err := d.checkUnjournaled(pv.Tree); err != nil {
					return err
				}
			}
			value, adopted, parsed = snap, true, &pv
		case pv.Sum == last.Sum:
			value, parsed = snap, &pv
		default:
			// The record the snapshot holds: the last whose sum is the
			// snapshot's, or the one a mark names (a daemon's snapshot of
			// a revision whose record carries no sum), searched from the
			// newest record back, reading older segments only while it
			// is not found.
			k := -1
			for {
				for i := len(recs) - 1; i >= 0; i-- {
					if recs[i].Sum == pv.Sum {
						k = i
						break
					}
				}
				if k < 0 {
					k = d.markFor(snap, func(rev uint64) (string, bool) {
						if rev < recs[0].Rev || rev > last.Rev {
							return "", false
						}
						return recs[rev-recs[0].Rev].Hash, true
					})
					if k >= 0 {
						k -= int(recs[0].Rev - 1)
						d.snapMark = store.HashBytes(snap)
					}
				}
				if k >= 0 {
					break
				}
				more, err := h.older()
				if err != nil {
					return err
				}
				if !more {
					break
				}
				recs = h.recs
			}
			if k == len(recs)-1 {
				value, parsed = snap, &pv
			} else if k >= 0 {
				if value, err = store.Replay(snap, recs[k+1:]); err != nil {
					return err
				}
				d.logf("snapshot behind the journal: replayed", "from", recs[k].Rev, "to", last.Rev)
			} else {
				// Rebuild from the journal; but a snapshot that holds the
				// value it rebuilds is good although nothing named it —
				// the marks are local to the machine, so a clone of the
				// project has the daemon's snapshot but not its mark — and
				// stays (and gets a mark), unless a mark names these very
				// bytes as another journal's record.
				if recs, err = h.all(); err != nil {
					return err
				}
				if value, err = store.Replay(nil, recs); err != nil {
					return err
				}
				if sum, err := store.SumOf(value); err == nil && sum == pv.Sum {
					value, k, parsed = snap, len(recs)-1, &pv
					d.logf("snapshot named by no record or mark holds the journal's latest value: kept", "revision", last.Rev)
					if last.Sum == "" {
						m := mark{Rev: last.Rev, Hash: last.Hash, File: store.HashBytes(snap)}
						if err := d.writeMark(m); err != nil {
							d.logf("mark not written; the next open replays the journal again", "error", err)
						} else {
							d.snapMark = m.File
						}
					}
				} else {
					aside, err := d.moveAside(d.p.snap, "unjournaled")
					if err != nil {
						return err
					}
					d.logf("snapshot was changed outside the custodian: moved aside and rebuilt from the journal", "aside", aside)
					d.edit = &capturedEdit{aside: aside, value: snap}
				}
			}
			rewrite = k != len(recs)-1
		}
	}
	if rewrite {
		b, err := store.Indent(value)
		if err != nil {
			return err
		}
		snap = b
		if err := d.writeSnapshotFor(b, last); err != nil {
			// The journal holds the value: reads go on (a full disk must
			// not stop them), writes wait for a load that rewrites it.
			d.logf("snapshot not rewritten; serving the journal's value, writes refused until it is", "error", err)
			d.readOnly = fmt.Errorf("%s could not be rewritten from the journal: %w", d.p.snap, err)
			snapID, _ = d.stat(d.p.snap)
		} else {
			snapID = d.wroteID
		}
		value, parsed = b, nil
	}
	if parsed != nil {
		d.value, d.lazy, d.tree, d.sum = value, nil, parsed.Tree, parsed.Sum
	} else if err := d.setValue(value); err != nil {
		return err
	}
	d.rev = 0
	d.last = last
	if last != nil {
		d.rev = last.Rev
	}
	d.liveFirst = h.liveFirst
	d.adopted = adopted
	if d.jID, err = d.stat(d.p.journal); err != nil {
		return err
	}
	// The snapshot as read or written here, not as it is now: an edit
	// made since is seen as a change by the next look.
	d.sID = snapID
	d.snapHash = ""
	if d.s.opts.Hold && snap != nil && d.sID.exists {
		d.snapHash = store.HashBytes(snap)
	}
	d.loaded = true
	d.advanceAnchor(anc, last)
	if d.edit == nil && d.readOnly == nil && d.repair == nil && last != nil && h.lastOff >= 0 && h.liveLast == last.Rev {
		// Read whole: the next open need not (checkpoint.go).
		d.writeCheckpoint(last, h.lastOff, h.lastLen, snap, d.sum)
	}
	return nil
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

// readJournal reads the live journal, whose first record follows prev
// (the newest segment's last record; nil when there is no segment). With
// repair (under the lock), a torn tail is cut off after the journal is
// copied aside to .broken-<time>.
func (d *doc) readJournal(repair bool, prev *store.Record) (parsedJournal, error) {
	data, err := d.readFile(d.p.journal)
	if err != nil {
		return parsedJournal{}, err
	}
	pj, err := parseJournal(d.p.journal, data, 0, prev)
	if err != nil {
		return pj, err
	}
	if pj.torn && repair {
		broken := d.p.journal + ".broken-" + stamp(d.s.opts.Now())
		if err := d.s.root.WriteFile(broken, data, 0o644); err != nil {
			// Reads go on without the torn tail; writes wait until it
			// can be cut off with its copy kept.
			_ = d.s.root.Remove(broken)
			d.logf("torn journal tail not cut off (its copy could not be kept); writes refused until it is", "error", err)
			d.readOnly = fmt.Errorf("the torn tail of %s could not be cut off: keep torn journal: %w", d.p.journal, err)
			return pj, nil
		}
		f, err := d.openRegular(d.p.journal, os.O_WRONLY, 0)
		if err != nil {
			return pj, fmt.Errorf("repair journal: %w", err)
		}
		err = f.Truncate(pj.end)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return pj, fmt.Errorf("repair journal %s: %w", d.p.journal, err)
		}
		if err := d.syncDir(); err != nil {
			return pj, err
		}
		d.logf("cut a torn journal tail (an unacknowledged commit)", "bytes", int64(len(data))-pj.end, "copy", broken)
		pj.torn = false
	}
	return pj, nil
}

// commit journals and applies a change. It returns nil when the change is
// empty.
func (d *doc) commit(ch store.Change) (*store.Record, error) {
	if ch.Patch != nil {
		if p := bytes.TrimSpace(ch.Patch); bytes.Equal(p, []byte("[]")) {
			return nil, nil // nothing changes
		}
		if rec, ok, err := d.commitPatch(ch); ok || err != nil {
			return rec, err
		}
		if rec, ok, err := d.commitPatchDirect(ch); ok || err != nil {
			return rec, err
		}
		// Any other backend, or a patch the tree applier refuses: applied
		// to the current bytes, then committed as the value it makes.
		var cur []byte
		if d.has() {
			cur = d.bytes()
		}
		var err error
		if ch, err = ch.Resolve(cur); err != nil {
			return nil, fmt.Errorf("%s: %w", d.p.key, err)
		}
	}
	if err := d.ensureTree(); err != nil {
		return nil, err
	}
	value, stamped := store.StampRevision(ch.Value, d.rev+1)
	if stamped && d.has() && !d.adopted {
		// A value that differs from the current one only by its revision
		// member (a rollback to the latest revision) changes nothing.
		if same, _ := store.StampRevision(ch.Value, d.rev); canonicalSum(same) == d.currentSum() {
			return nil, nil
		}
	}
	nv, err := jsonval.ParseValue(value, d.s.opts.Limits)
	if err != nil {
		return nil, err
	}
	if d.has() && nv.Sum == d.currentSum() && !d.adopted {
		return nil, nil
	}
	var from any
	events, why := ch.Events, ch.Reason
	if d.adopted {
		why = strings.TrimPrefix(why+"; ", "; ") + "adopts " + d.p.key + " as found on disk"
		// The first commit of a document nobody journaled (written by a
		// plugin, by hand, by an older tool) adopts it: its record is the
		// whole new value, and says what was found (nothing is lost).
		events = append([]store.Event{adoptedEvent(d.bytes())}, events...)
	} else if d.has() {
		from = d.tree
	}
	patch, err := jsonval.DiffTrees(from, nv.Tree)
	if err != nil {
		return nil, err
	}
	recs := []*store.Record{{Rev: d.rev + 1, Time: d.commitTime(), Actor: ch.Actor, Reason: why, Patch: patch, Events: events, Sum: nv.Sum}}
	if d.held.locked {
		// Hold mode keeps the value as given; the background snapshot
		// writer indents it.
		return d.appendAndApply(recs, bytes.Clone(bytes.TrimRight(nv.Raw, " \t\r\n")), nv.Tree, nv.Sum)
	}
	snap, err := store.Indent(bytes.TrimRight(nv.Raw, " \t\r\n"))
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "%v", err)
	}
	return d.appendAndApply(recs, snap, nv.Tree, nv.Sum)
}

func adoptedEvent(found []byte) store.Event {
	data := append(append([]byte(`{"found":`), bytes.TrimSpace(found)...), '}')
	return store.Event{Type: store.AdoptedEvent, Data: data}
}

// canonicalSum is the canonical sum of v ("" when it does not parse).
func canonicalSum(v []byte) string {
	sum, err := store.SumOf(v)
	if err != nil {
		return ""
	}
	return sum
}

// ensureTree decodes the current value when it is not held decoded (a
// value loaded without its tree).
func (d *doc) ensureTree() error {
	if d.tree != nil || !d.has() {
		return nil
	}
	if d.sum != "" {
		// The sum is known (the checkpoint named these bytes): the tree
		// alone is needed.
		tree, err := jsonval.Decode(d.bytes())
		if err != nil {
			return reason.New(reason.CorruptState, "%s: %v", d.p.key, err)
		}
		d.tree = tree
		return nil
	}
	pv, err := jsonval.ParseValue(d.bytes(), store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30})
	if err != nil {
		return reason.New(reason.CorruptState, "%s: %v", d.p.key, err)
	}
	d.tree, d.sum = pv.Tree, pv.Sum
	return nil
}

// currentSum is the canonical sum of the current value. In Hold mode a
// value committed through its patch has its sum computed only when its
// record is the last of a journal write (or here, when asked).
func (d *doc) currentSum() string {
	if d.sum == "" {
		if d.ensureTree() != nil {
			return ""
		}
		if d.tree != nil {
			d.sum, _ = jsonval.SumTree(d.tree)
		}
	}
	return d.sum
}

// commitPatch is commit for a change given as a patch, in Hold mode: the
// patch is applied to the decoded current value (jsonval.PatchTree), so the
// cost is the patch's, not a parse and a diff of the whole document, and
// the new value's bytes are made only when someone needs them (lazyValue).
// The record is the patch as given, with no canonical sum (a sum reads the
// whole document): the snapshot writer names the revision of each
// snapshot it writes with a mark instead. ok is false when the change must
// take the byte path instead (outside Hold mode, no current value, an
// adopted file, or a patch the tree applier refuses).
func (d *doc) commitPatch(ch store.Change) (*store.Record, bool, error) {
	if !d.held.locked || !d.has() || d.adopted {
		return nil, false, nil
	}
	if err := d.ensureTree(); err != nil {
		return nil, true, err
	}
	lim := d.s.opts.Limits
	tree, err := jsonval.PatchTree(d.tree, ch.Patch, lim)
	if err != nil {
		return nil, false, nil // the byte path names the problem
	}
	prev := d.held.latest.Load()
	anchor, anchorTree := prev.anchor()
	lv := &lazyValue{tree: tree, anchor: anchor, anchorTree: anchorTree, size: prev.sizeBound() + 6*len(ch.Patch)}
	max := lim.MaxBytes
	if max <= 0 {
		max = store.DefaultMaxBytes
	}
	if lv.size > max {
		// Possibly over the limit: make the bytes and look.
		if n := len(lv.bytes()); n > max {
			return nil, true, reason.New(reason.InvalidInput, "document is %d bytes, over the limit of %d bytes", n, max)
		}
		lv.size = len(lv.raw)
	}
	rec := &store.Record{Rev: d.rev + 1, Time: d.commitTime(), Actor: ch.Actor, Reason: ch.Reason, Patch: ch.Patch, Events: ch.Events}
	// The patch is kept without a copy: Change's contract.
	r, err := d.heldAppend([]*store.Record{rec}, &version{tree: tree, lazy: lv})
	return r, true, err
}

// commitPatchDirect is commit for a change given as a patch outside Hold
// mode: the patch is applied to the value's tree (read with the snapshot
// by a full open; decoded now after the checkpoint's open), the new bytes are made from the
// snapshot's, copying what the patch did not touch (jsonval.TreeBytes),
// and the record is the patch as given: no parse of the new value, no
// diff, no byte-level patch of the whole document. The record keeps its
// canonical sum (the next process checks the snapshot against it). ok is
// false when the change must take the byte path (no current value, an
// adopted file, or a patch the tree applier refuses).
func (d *doc) commitPatchDirect(ch store.Change) (*store.Record, bool, error) {
	if d.held.locked || !d.has() || d.adopted {
		return nil, false, nil
	}
	if err := d.ensureTree(); err != nil {
		return nil, true, err
	}
	snap, tree, sum, err := d.patchDirect(d.tree, ch)
	if err != nil {
		if tree != nil {
			return nil, true, err
		}
		return nil, false, nil // the byte path names the problem
	}
	return d.commitDirect(ch, snap, tree, sum)
}

// patchDirect applies ch's patch to from, the current value's tree, and
// returns the new value's snapshot bytes, tree and sum. An error with a
// tree is the new value's (over the size limit); without one, the patch
// or the tree could not be applied or written.
func (d *doc) patchDirect(from any, ch store.Change) ([]byte, any, string, error) {
	lim := d.s.opts.Limits
	tree, err := jsonval.PatchTree(from, ch.Patch, lim)
	if err != nil {
		return nil, nil, "", err
	}
	// The snapshot's indented form, written as such (what is shared with
	// the current snapshot copied from it, not indented again).
	snap, err := jsonval.TreeBytesIndented(d.bytes(), from, tree)
	if err != nil {
		return nil, nil, "", err
	}
	max := lim.MaxBytes
	if max <= 0 {
		max = store.DefaultMaxBytes
	}
	if len(snap) > max {
		// The limit is on the value as TreeBytes writes it, which the
		// indented form is never shorter than.
		raw, err := jsonval.TreeBytes(d.bytes(), from, tree)
		if err != nil {
			return nil, nil, "", err
		}
		if len(raw) > max {
			return nil, tree, "", reason.New(reason.InvalidInput, "document is %d bytes, over the limit of %d bytes", len(raw), max)
		}
	}
	sum, err := jsonval.SumTree(tree)
	if err != nil {
		return nil, nil, "", err
	}
	return snap, tree, sum, nil
}

// commitDirect commits the value patchDirect made unless it is the
// current one.
func (d *doc) commitDirect(ch store.Change, snap []byte, tree any, sum string) (*store.Record, bool, error) {
	if sum == d.currentSum() {
		return nil, true, nil // the same value: nothing to commit
	}
	rec := &store.Record{Rev: d.rev + 1, Time: d.commitTime(), Actor: ch.Actor, Reason: ch.Reason, Patch: ch.Patch, Events: ch.Events, Sum: sum}
	r, err := d.appendAndApply([]*store.Record{rec}, snap, tree, sum)
	return r, true, err
}

// appendAndApply journals recs (in Hold mode: queues them for the next
// group write) and makes snap the current value.
func (d *doc) appendAndApply(recs []*store.Record, snap []byte, tree any, sum string) (*store.Record, error) {
	if d.held.locked {
		return d.heldAppend(recs, &version{value: snap, tree: tree, sum: sum})
	}
	prev := ""
	if d.last != nil {
		prev = d.last.Hash
	}
	var lines []byte
	var lastLen int
	for _, r := range recs {
		line, err := r.SealMAC(nil, prev, d.s.key)
		if err != nil {
			return nil, err
		}
		lines = append(lines, line...)
		prev, lastLen = r.Hash, len(line)
	}
	rec := recs[len(recs)-1]
	at, err := d.appendJournal(lines)
	if err != nil {
		return nil, err
	}
	// Committed: the journal holds it durably.
	d.writeAnchor(rec.Rev, rec.Hash)
	d.rev, d.last = rec.Rev, rec
	d.value, d.lazy, d.tree, d.sum, d.adopted = snap, nil, tree, sum, false
	if d.jID, err = d.stat(d.p.journal); err != nil {
		d.loaded = false
	}
	d.wroteID = fileID{}
	if err := d.writeSnapshot(snap); err != nil {
		d.logf("snapshot not rewritten; the journal holds the commit and the next open replays it", "revision", rec.Rev, "error", err)
	} else if n := d.s.segmentBytes(); n <= 0 || !d.jID.exists || d.jID.size < max(n, d.rotateAt) || !d.loaded {
		if at >= 0 {
			d.writeCheckpoint(rec, at+int64(len(lines)-lastLen), int64(lastLen), snap, sum)
		}
	} else {
		// The snapshot holds every record of the live journal: seal it.
		if err := d.rotate(d.liveFirst, rec.Rev); err != nil {
			d.rotateAt = d.jID.size + n/4 // not again at every commit
			d.logf("journal not sealed as a segment; tried again after another quarter of the threshold", "error", err)
		} else {
			d.jID, d.liveFirst, d.rotateAt = fileID{}, rec.Rev+1, 0
		}
	}
	if d.wroteID.exists {
		d.sID = d.wroteID // as written, not as it may be by now
	} else if d.sID, err = d.stat(d.p.snap); err != nil {
		d.loaded = false
	}
	d.notify()
	return rec, nil
}

// appendJournal writes lines at the end of the journal and fsyncs: the
// commit point. A failed write is cut back off; a failed sync poisons the
// document. It returns the offset the lines were written at.
func (d *doc) appendJournal(lines []byte) (int64, error) {
	created := !d.jID.exists
	if created {
		d.liveFirst = d.rev + 1
	}
	f, err := d.openRegular(d.p.journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		if _, ok := reason.As(err); ok {
			return -1, err
		}
		return -1, pathError(d.p.key, err)
	}
	defer f.Close()
	before, at := d.jID.size, int64(-1)
	if fi, err := f.Stat(); err == nil {
		before, at = fi.Size(), fi.Size()
	}
	err = d.fault("journal.write")
	if err == nil {
		_, err = f.Write(lines)
	}
	if err != nil {
		if terr := f.Truncate(before); terr != nil {
			d.broken = fmt.Errorf("write failed (%v) and could not be cut back: %w", err, terr)
		}
		return -1, fmt.Errorf("append to journal %s: %w", d.p.journal, err)
	}
	err = d.fault("journal.sync")
	if err == nil {
		err = f.Sync()
	}
	if err == nil && created {
		err = d.syncDir()
	}
	if err != nil {
		d.broken = err
		d.loaded = false
		return -1, fmt.Errorf("sync journal %s (commit outcome unknown until reopened): %w", d.p.journal, err)
	}
	return at, nil
}

// writeSnapshot replaces the snapshot durably: temp file in the same
// directory, fsync, rename, fsync the directory.
func (d *doc) writeSnapshot(b []byte) error {
	return d.writeSnapshotWith(func(f *os.File) error {
		_, err := f.Write(b)
		return err
	}, nil)
}

// writeSnapshotFor is writeSnapshot of b, the value after rec: when rec
// carries no sum (a daemon's commit made through its patch), a mark binds
// the file to rec first, as the daemon's snapshot writer does, so the next
// open knows which revision the file holds instead of moving it aside.
func (d *doc) writeSnapshotFor(b []byte, rec *store.Record) error {
	if rec == nil || rec.Sum != "" {
		if err := d.writeSnapshot(b); err != nil {
			return err
		}
		d.snapMark = ""
		return nil
	}
	m := mark{Rev: rec.Rev, Hash: rec.Hash, File: store.HashBytes(b)}
	if err := d.writeSnapshotWith(func(f *os.File) error {
		_, err := f.Write(b)
		return err
	}, func() error { return d.writeMark(m) }); err != nil {
		return err
	}
	d.snapMark = m.File
	return nil
}

// writeSnapshotWith is writeSnapshot with the content written by write;
// beforeRename, when set, runs once the new content is synced and before
// it replaces the snapshot (it must make what it writes durable itself).
func (d *doc) writeSnapshotWith(write func(f *os.File) error, beforeRename func() error) error {
	return d.writeSnapshotCoop(false, write, beforeRename)
}

// writeSnapshotCoop is writeSnapshotWith by a caller that already holds the
// cooperative lock (coopHeld) or not.
func (d *doc) writeSnapshotCoop(coopHeld bool, write func(f *os.File) error, beforeRename func() error) error {
	if d.coop != nil && d.s.daemon != nil && !coopHeld {
		// Hold mode keeps the document's lock for the daemon's lifetime;
		// the cooperative lock is taken around each snapshot rewrite.
		unlock, err := d.coopLock(context.Background())
		if err != nil {
			return err
		}
		defer unlock()
	}
	return d.replaceFile(d.p.snap, d.p.tmp, "snapshot", write, beforeRename)
}

// replaceFile replaces name with what write writes, atomically and
// durably: tmp is written and synced, beforeRename (when set) runs, tmp is
// renamed over name and the directory synced. A failure removes tmp and
// leaves name as it was. The fault points are point+".write", ".sync" and
// ".rename" (and "dir.sync").
func (d *doc) replaceFile(name, tmp, point string, write func(f *os.File) error, beforeRename func() error) error {
	err := d.fault(point + ".write")
	var f *os.File
	if err == nil {
		f, err = d.openRegular(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	err = write(f)
	if err == nil {
		if err = d.fault(point + ".sync"); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && beforeRename != nil {
		err = beforeRename()
	}
	var id fileID
	if err == nil && name == d.p.snap {
		// The identity the snapshot will have (rename keeps the inode and
		// the mtime): taken now, so that a write right after the rename
		// is never mistaken for ours.
		id, err = d.stat(tmp)
	}
	if err == nil {
		if err = d.fault(point + ".rename"); err == nil {
			err = d.s.root.Rename(tmp, name)
		}
	}
	if err == nil && name == d.p.snap {
		d.wroteID = id
	}
	if err != nil {
		_ = d.s.root.Remove(tmp)
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return d.syncDir()
}

// commitTime is the time of the next record: the clock's, but never
// earlier than the record before it (a clock stepped back, or another
// process's clock behind this one's), so that record times never go
// backwards and the durations between them are never negative.
func (d *doc) commitTime() time.Time {
	now := d.s.opts.Now().UTC()
	if d.last != nil && now.Before(d.last.Time) {
		return d.last.Time.UTC()
	}
	return now
}
