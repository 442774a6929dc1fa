package file

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// value is one revision's value in memory: its bytes, or the Model a
// proposer committed it with (store.Change.Model), whose bytes are made
// once, when a read, the snapshot writer, a watcher or an update function
// needs them. Never changed once made, but for that memo; safe for
// concurrent use.
type value struct {
	raw   []byte         // the bytes (nil: make them from model)
	model json.Marshaler // the proposer's decoded value, nil for none
	// bound bounds the length of the bytes from above while they are not
	// made: the limit on a document's size is checked on it.
	bound int

	once sync.Once
	made atomic.Bool // out and err are set
	out  []byte
	err  error
}

func bytesValue(b []byte) *value { return &value{raw: b, bound: len(b)} }

// bytes returns the value's bytes, made from its model on first use.
func (v *value) bytes() ([]byte, error) {
	if v.raw != nil {
		return v.raw, nil
	}
	v.once.Do(func() {
		b, err := v.model.MarshalJSON()
		if err == nil && !json.Valid(b) {
			err = errors.New("not valid JSON")
		}
		if err != nil {
			v.err = fmt.Errorf("the model committed does not encode: %w", err)
		} else {
			v.out = b
		}
		v.made.Store(true)
	})
	return v.out, v.err
}

// peek returns the bytes when they are made (nil otherwise), making
// nothing.
func (v *value) peek() []byte {
	if v.raw != nil {
		return v.raw
	}
	if v.made.Load() {
		return v.out
	}
	return nil
}

// size is the length of the bytes, or the bound while they are not made.
func (v *value) size() int {
	if b := v.peek(); b != nil {
		return len(b)
	}
	return v.bound
}

// document returns revision rev, whose value is v (nil: none), as a
// store.Document: its bytes when they are made, and its model.
func (v *value) document(key string, rev uint64) store.Document {
	doc := store.Document{Key: key, Revision: rev}
	if v != nil {
		doc.Value, doc.Model = v.peek(), v.model
	}
	return doc
}

// commit journals and applies a change. It returns nil when the change
// commits nothing. A change given as a patch with the proposer's model
// (the application layer's operations) is journaled as given and the
// model becomes the value: its bytes are made now outside Hold mode (the
// snapshot is written with the commit), later in Hold mode (when
// something needs them). Any other change is made into bytes, checked
// against the limits, compared with the current value and journaled as
// the difference from it, with the new value's canonical sum.
func (d *doc) commit(ch store.Change) (*store.Record, error) {
	if ch.Patch != nil && bytes.Equal(bytes.TrimSpace(ch.Patch), []byte("[]")) {
		return nil, nil // nothing changes
	}
	if ch.Patch != nil && ch.Model != nil && d.has() && !d.adopted {
		return d.commitModel(ch)
	}
	var cur []byte
	if d.has() {
		var err error
		if cur, err = d.bytes(); err != nil {
			return nil, err
		}
	}
	if ch.Patch != nil {
		var err error
		if ch, err = ch.Resolve(cur); err != nil {
			return nil, fmt.Errorf("%s: %w", d.p.key, err)
		}
	}
	value, stamped := store.StampRevision(ch.Value, d.rev+1)
	curSum := ""
	if d.has() && !d.adopted {
		curSum = d.currentSum(cur)
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
		events = append([]store.Event{adoptedEvent(cur)}, events...)
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
	if d.held.locked {
		// Hold mode keeps the value as given; the background snapshot
		// writer indents it.
		return d.appendAndApply(rec, bytesValue(bytes.Clone(raw)), nv.Sum)
	}
	snap, err := store.Indent(raw)
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "%v", err)
	}
	return d.appendAndApply(rec, bytesValue(snap), nv.Sum)
}

// commitModel commits a change given as a patch with its model: the
// record is the patch as given and the model is the new value. In Hold
// mode the record carries no canonical sum (a sum reads the whole
// document): the snapshot writer names each snapshot's revision with a
// mark instead.
func (d *doc) commitModel(ch store.Change) (*store.Record, error) {
	max := d.s.opts.Limits.MaxBytes
	if max <= 0 {
		max = store.DefaultMaxBytes
	}
	next := &value{model: ch.Model}
	sum := ""
	if d.held.locked {
		// A patch makes a value at most six times its own length longer
		// (each operation's value and path, with the punctuation around
		// them, are longer than what it adds, and a character escaped as
		// \u00XX is six bytes): the bytes are made, to look, only when
		// that bound passes the limit.
		next.bound = d.cur.size() + 6*len(ch.Patch)
	} else {
		raw, err := next.bytes()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.p.key, err)
		}
		if next.raw, err = store.Indent(raw); err != nil {
			return nil, fmt.Errorf("%s: the model committed does not encode: %w", d.p.key, err)
		}
		next.bound = len(raw)
		// The record carries the value's canonical sum: the next process
		// that reads the files whole (no checkpoint to go by) finds the
		// snapshot's revision by it.
		if sum, err = store.SumOf(raw); err != nil {
			return nil, fmt.Errorf("%s: the model committed does not encode: %w", d.p.key, err)
		}
	}
	if next.bound > max {
		raw, err := next.bytes()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.p.key, err)
		}
		if len(raw) > max {
			return nil, reason.New(reason.InvalidInput, "document is %d bytes, over the limit of %d bytes", len(raw), max)
		}
		next.bound = len(raw)
	}
	rec := &store.Record{Rev: d.rev + 1, Time: d.commitTime(), Actor: ch.Actor, Reason: ch.Reason, Patch: ch.Patch, Events: ch.Events, Sum: sum}
	return d.appendAndApply(rec, next, sum)
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

// currentSum is the canonical sum of the current value, whose bytes are
// cur, computed when not known yet.
func (d *doc) currentSum(cur []byte) string {
	if d.sum == "" {
		d.sum = canonicalSum(cur)
	}
	return d.sum
}

// appendAndApply journals rec (in Hold mode: queues it for the next group
// write) and makes v the current value; sum is its canonical sum ("":
// not known).
func (d *doc) appendAndApply(rec *store.Record, v *value, sum string) (*store.Record, error) {
	if d.held.locked {
		return d.heldAppend(rec, &version{val: v, sum: sum})
	}
	prev := ""
	if d.last != nil {
		prev = d.last.Hash
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
	if d.jID, err = d.stat(d.p.journal); err != nil {
		d.loaded = false
	}
	d.wroteID = fileID{}
	snap := v.raw // outside Hold mode the bytes are the snapshot's
	if err := d.writeSnapshot(snap); err != nil {
		d.logf("snapshot not rewritten; the journal holds the commit and the next open replays it", "revision", rec.Rev, "error", err)
	} else if n := d.s.segmentBytes(); n <= 0 || !d.jID.exists || d.jID.size < max(n, d.rotateAt) || !d.loaded {
		if at >= 0 {
			d.writeCheckpoint(rec, at, int64(len(line)), snap, sum)
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
