package file

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// appendJournal writes lines at the end of the journal and fsyncs: the
// commit point. A failed write is cut back off; a failed sync poisons the
// document. It returns the offset the lines were written at.
func (d *doc) appendJournal(lines []byte) (int64, error) {
	created := !d.j.id.exists
	if created {
		d.j.liveFirst = d.rev + 1
	}
	f, fi, err := d.openRegular(d.p.journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return -1, pathError(d.p.key, err)
	}
	defer f.Close()
	before, at := fi.Size(), fi.Size()
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

// journalView is what this process knows of a document's journal files.
type journalView struct {
	id fileID // the live journal's identity and size, as read so far
	// liveFirst is the first revision of the live journal (when it does
	// not exist yet: the revision its first record will have).
	liveFirst uint64
	rotateAt  int64 // after a failed rotation: the journal size at which to try again
}

// parsedJournal is the result of reading a journal file.
type parsedJournal struct {
	recs []store.Record
	end  int64 // offset just past the last complete, valid line
	// lastOff is the offset where the last record's line starts (-1: no
	// record).
	lastOff int64
	torn    bool // bytes after end that do not end with a newline
}

// parseJournalUpTo decodes journal bytes that start at offset base and
// continue the chain after prev (nil: from the beginning; loose: after a
// record in a file not read, whose hash is taken from the first line),
// stopping after revision maxRev. A bad complete line is a CORRUPT_STATE
// error naming the revision; an unterminated tail is reported as torn,
// never as an error.
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
		if err == nil && isLoose(prev) && r.Rev != want {
			// The record before is in a file not read: only the
			// revision can be checked.
			err = fmt.Errorf("journal revision %d follows revision %d", r.Rev, want-1)
		} else if err == nil && !isLoose(prev) {
			err = store.Chain(prev, r)
		}
		if err != nil {
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

// readJournal reads the live journal, whose first record follows prev
// (the newest segment's last record; nil when there is no segment), under
// the lock: a torn tail is cut off after the journal is copied aside to
// .broken-<time>.
func (d *doc) readJournal(prev *store.Record) (parsedJournal, error) {
	data, err := d.readFile(d.p.journal)
	if err != nil {
		return parsedJournal{}, err
	}
	pj, err := parseJournalUpTo(d.p.journal, data, 0, prev, math.MaxUint64)
	if err != nil {
		return pj, err
	}
	if pj.torn {
		broken := d.p.journal + ".broken-" + stamp(d.s.opts.Now())
		if err := d.s.root.WriteFile(broken, data, 0o644); err != nil {
			// Reads go on without the torn tail; writes wait until it
			// can be cut off with its copy kept.
			_ = d.s.root.Remove(broken)
			d.logf("torn journal tail not cut off (its copy could not be kept); writes refused until it is", "error", err)
			d.readOnly = fmt.Errorf("the torn tail of %s could not be cut off: keep torn journal: %w", d.p.journal, err)
			return pj, nil
		}
		f, _, err := d.openRegular(d.p.journal, os.O_WRONLY, 0)
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
