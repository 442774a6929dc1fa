package file

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"slices"
	"strconv"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Journal segments.
//
// A document's journal is its sealed segments, oldest first, then the live
// journal commits append to. A segment is a live journal that grew past
// Options.SegmentBytes, renamed whole to <journal stem>.<from>-<to>.ndjson
// (journal.000000000001-000000052341.ndjson beside manifest.json): the
// revisions it holds, 12 digits at least. The hash chain runs on across
// files. Segments are never written again, moved or deleted: together
// they are the audit log.
//
// A direct commit seals the live journal right after replacing the
// snapshot; Hold mode's syncer seals it between two group writes once the
// snapshot on disk holds one of its revisions (the snapshot may then be
// behind the segment's last revision, never before its first). So the
// snapshot always holds a revision of the newest segment or of the live
// journal: an open reads the live journal and the newest segment's last
// line, the newest segment only when the snapshot is behind it, and the
// older ones only to rebuild the snapshot; Verify, History, GetAt and
// Watch read the revisions they are asked for. A crash in a rotation
// leaves the file under one name or the other (rename(2) is atomic).

// segment is one sealed journal file.
type segment struct {
	name     string // relative to the project root
	from, to uint64 // the revisions it holds
}

// segments lists the document's sealed segments in revision order.
func (d *doc) segments() ([]segment, error) {
	segs, err := listSegments(d.s.root.FS(), d.p)
	return segs, pathError(d.p.key, err)
}

// listSegments lists the sealed segments of the document at p in revision
// order. Two whose revisions overlap are CORRUPT_STATE naming both (a
// rotation never makes them: one was put there by hand), never one
// silently read and the other skipped.
func listSegments(fsys fs.FS, p paths) ([]segment, error) {
	ents, err := fs.ReadDir(fsys, p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		if from, to, ok := parseSegmentName(e.Name(), p.segPrefix); ok {
			segs = append(segs, segment{name: path.Join(p.dir, e.Name()), from: from, to: to})
		}
	}
	slices.SortFunc(segs, func(a, b segment) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.to, b.to))
	})
	for i := 1; i < len(segs); i++ {
		if segs[i].from <= segs[i-1].to {
			return nil, reason.New(reason.CorruptState, "journal segments %s and %s of %s overlap (revisions %d-%d and %d-%d): one was not made by a rotation; move it out of the way", segs[i-1].name, segs[i].name, p.key, segs[i-1].from, segs[i-1].to, segs[i].from, segs[i].to)
		}
	}
	return segs, nil
}

// JournalFilesIn lists the files that hold the journal of the document
// key under the project root dir, relative to it, without opening a store:
// its sealed segments in revision order, then the live journal, its anchor
// and its marks (those that exist). The anchor and the marks name
// revisions of this journal: a tool that moves the journal aside must move
// all of them, while it holds the document's lock (.lock beside it), so
// that no rotation runs meanwhile.
func JournalFilesIn(dir, key string) ([]string, error) {
	if err := store.CheckKey(key); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	p := pathsFor(key)
	segs, err := listSegments(root.FS(), p)
	if err != nil {
		return nil, pathError(key, err)
	}
	var out []string
	for _, sg := range segs {
		out = append(out, sg.name)
	}
	for _, name := range []string{p.journal, p.head, p.marks} {
		if _, err := root.Lstat(name); err == nil {
			out = append(out, name)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, pathError(key, err)
		}
	}
	return out, nil
}

// JournalFiles is JournalFilesIn for a document of this store.
func (s *Store) JournalFiles(key string) ([]string, error) {
	if _, err := s.doc(key); err != nil {
		return nil, err
	}
	return JournalFilesIn(s.dir, key)
}

// loose is the stand-in for the unread record before revision rev+1: the
// first record parsed after it must be revision rev+1, and its prev link
// is taken as it is (the record it names is in a file not read).
func loose(rev uint64) *store.Record {
	if rev == 0 {
		return nil
	}
	return &store.Record{Rev: rev}
}

// isLoose reports whether prev is a stand-in made by loose: real records
// always carry a hash.
func isLoose(prev *store.Record) bool { return prev != nil && prev.Hash == "" }

// corruptSegment is the error for a damaged segment, naming it.
func corruptSegment(name string, rev uint64, format string, args ...any) error {
	return reason.New(reason.CorruptState, "journal segment %s is corrupt at revision %d: %s", name, rev, fmt.Sprintf(format, args...))
}

// newestSegment returns the newest sealed segment and its last record,
// which the live journal continues (nil, nil: no segment), reading only
// the end of the file. The record's own hash is checked; its link to the
// record before it is not (it is read only when the segment is).
func (d *doc) newestSegment() (*segment, *store.Record, error) {
	segs, err := d.segments()
	if err != nil || len(segs) == 0 {
		return nil, nil, err
	}
	s := segs[len(segs)-1]
	f, fi, err := d.openRegular(s.name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, corruptSegment(s.name, s.to, "the file disappeared")
	} else if err != nil {
		return nil, nil, pathError(d.p.key, err)
	}
	defer f.Close()
	size := fi.Size()
	if size == 0 {
		return nil, nil, corruptSegment(s.name, s.from, "the file is empty")
	}
	// The last 64 KiB, or the whole file when its last line is longer.
	for n := min(size, 64<<10); ; n = size {
		b := make([]byte, n)
		if _, err := f.ReadAt(b, size-n); err != nil {
			return nil, nil, fmt.Errorf("read journal segment %s: %w", s.name, err)
		}
		if b[n-1] != '\n' {
			return nil, nil, corruptSegment(s.name, s.to, "it ends in a torn record")
		}
		i := bytes.LastIndexByte(b[:n-1], '\n')
		if i < 0 && n < size {
			continue
		}
		r, err := store.DecodeRecord(b[i+1 : n-1])
		if err != nil {
			return nil, nil, corruptSegment(s.name, s.to, "%v", err)
		}
		if r.Rev != s.to {
			return nil, nil, corruptSegment(s.name, r.Rev, "its last record is revision %d, its name says %d", r.Rev, s.to)
		}
		return &s, &r, nil
	}
}

// parseSegment reads segment s whole: every line a record whose hash
// matches, chained to prev (nil or loose: s.from is taken as the start;
// the callers check that s follows prev), holding exactly the revisions
// its name says.
func (d *doc) parseSegment(s segment, prev *store.Record) ([]store.Record, error) {
	data, err := d.readFile(s.name)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, corruptSegment(s.name, s.from, "the file disappeared")
	}
	if prev == nil {
		prev = loose(s.from - 1)
	}
	pj, err := parseJournalUpTo(s.name, data, 0, prev, math.MaxUint64)
	if err != nil {
		return nil, err
	}
	if len(pj.recs) == 0 {
		return nil, corruptSegment(s.name, s.from, "it holds no complete record")
	}
	if pj.torn {
		return nil, corruptSegment(s.name, pj.recs[len(pj.recs)-1].Rev+1, "it ends in a torn record")
	}
	if got := pj.recs[len(pj.recs)-1].Rev; got != s.to {
		return nil, corruptSegment(s.name, got, "it ends at revision %d, its name says %d", got, s.to)
	}
	return pj.recs, nil
}

// walk passes fn the records with from <= rev <= to (to 0: to the end of
// the live journal) file by file, in revision order, reading only the
// files that hold them and checking every hash link between the records it
// reads (the first file read may start after revision 1: its first link
// is taken as it is). A segment that is damaged, missing from the
// sequence or out of line is a CORRUPT_STATE error naming the file and the
// revision. It returns the last record read and whether the live journal
// ends in a torn line (a write in progress, or an unacknowledged commit).
//
// It may run while a daemon's syncer seals the live journal (Hold mode):
// segments never change once sealed, and a live journal that does not
// continue the segments listed means one was sealed meanwhile; the
// listing is read again.
func (d *doc) walk(from, to uint64, fn func(name string, recs []store.Record) error) (last *store.Record, torn bool, err error) {
	from, maxRev := max(from, 1), uint64(math.MaxUint64)
	if to != 0 {
		maxRev = to
	}
	var prev *store.Record // the last record read
	emit := func(name string, recs []store.Record) error {
		for len(recs) > 0 && recs[0].Rev < from {
			recs = recs[1:]
		}
		for len(recs) > 0 && recs[len(recs)-1].Rev > maxRev {
			recs = recs[:len(recs)-1]
		}
		if len(recs) == 0 {
			return nil
		}
		return fn(name, recs)
	}
	segs, err := d.segments()
	if err != nil {
		return nil, false, err
	}
	for round := 0; ; round++ {
		for _, s := range segs {
			if prev != nil && prev.Rev >= maxRev {
				return prev, false, nil
			}
			if prev != nil && s.to <= prev.Rev || prev == nil && s.to < from {
				continue // before what is wanted, or read in an earlier round
			}
			if prev != nil && s.from != prev.Rev+1 {
				return nil, false, reason.New(reason.CorruptState, "journal segment %s starts at revision %d, but revision %d follows revision %d (a segment is missing or out of line)", s.name, s.from, prev.Rev+1, prev.Rev)
			}
			if prev == nil && s.from > from {
				return nil, false, reason.New(reason.CorruptState, "no journal file of %s holds revision %d (the first segment, %s, starts at revision %d)", d.p.key, from, s.name, s.from)
			}
			recs, err := d.parseSegment(s, prev)
			if err != nil {
				return nil, false, err
			}
			if err := emit(s.name, recs); err != nil {
				return nil, false, err
			}
			r := recs[len(recs)-1]
			prev = &r
		}
		if prev != nil && prev.Rev >= maxRev {
			return prev, false, nil
		}
		// The live journal continues the last segment (or starts at
		// revision 1).
		after := prev
		if after == nil && len(segs) > 0 {
			after = loose(segs[len(segs)-1].to)
		}
		data, err := d.readFile(d.p.journal)
		if err != nil {
			return nil, false, err
		}
		pj, err := parseJournalUpTo(d.p.journal, data, 0, after, maxRev)
		if err != nil || len(pj.recs) == 0 {
			// Not the continuation, or empty: if a segment was sealed
			// since the listing, read it first.
			again, lerr := d.segments()
			if lerr != nil {
				return nil, false, lerr
			}
			if len(again) > len(segs) && round < 1000 {
				segs = again
				continue
			}
		}
		if err != nil {
			return nil, false, err
		}
		if err := emit(d.p.journal, pj.recs); err != nil {
			return nil, false, err
		}
		if len(pj.recs) > 0 {
			r := pj.recs[len(pj.recs)-1]
			prev = &r
		}
		return prev, pj.torn, nil
	}
}

// firstRev returns the revision the first complete line of journal data
// claims, without checking the record.
func firstRev(data []byte) (uint64, bool) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return 0, false
	}
	line, ok := bytes.CutPrefix(data[:nl], []byte(`{"rev":`))
	if !ok {
		return 0, true // not a record: parsing names the problem
	}
	i := 0
	for i < len(line) && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	rev, err := strconv.ParseUint(string(line[:i]), 10, 64)
	if err != nil {
		return 0, true
	}
	return rev, true
}

// readRecords returns the records with from <= rev <= to (none when to is
// 0), to at most the loaded revision, reading only the journal files that
// hold them.
func (d *doc) readRecords(from, to uint64) ([]store.Record, error) {
	var out []store.Record
	err := d.eachRecords(from, to, func(recs []store.Record) error {
		out = append(out, recs...)
		return nil
	})
	return out, err
}

// replayTo rebuilds the value at revision rev from the journal a file at a
// time: the records of a long history are never all in memory at once.
func (d *doc) replayTo(rev uint64) ([]byte, error) {
	var r store.Replayer
	if err := d.eachRecords(1, rev, r.Apply); err != nil {
		return nil, err
	}
	return r.Value()
}

// eachRecords calls fn with the records from <= rev <= to, in order, a
// journal file's worth at a time, once they are durable, and checks that
// they were all there.
func (d *doc) eachRecords(from, to uint64, fn func([]store.Record) error) error {
	if d.held.isActive() {
		// Hold mode: commits queued for the next group write are not in
		// the file yet.
		if err := d.held.awaitDurable(d.rev); err != nil {
			return err
		}
	}
	if to == 0 || from > to {
		return nil
	}
	from = max(from, 1)
	var first, last uint64
	if _, _, err := d.walk(from, to, func(_ string, recs []store.Record) error {
		if first == 0 {
			first = recs[0].Rev
		}
		last = recs[len(recs)-1].Rev
		return fn(recs)
	}); err != nil {
		return err
	}
	if first != from || last != to {
		return reason.New(reason.CorruptState, "the journal of %s does not hold revisions %d to %d", d.p.key, from, to)
	}
	return nil
}

// sealPast seals the live journal, which holds revisions first to last in
// size bytes, as a segment once it is past SegmentBytes. After a failed
// rotation, *retryAt (the size to try again at) waits another quarter of
// the threshold.
func (d *doc) sealPast(first, last uint64, size int64, retryAt *int64) bool {
	n := d.s.opts.SegmentBytes
	if n <= 0 || size < max(n, *retryAt) {
		return false
	}
	if err := d.rotate(first, last); err != nil {
		*retryAt = size + n/4 // not again at every commit
		d.logf("journal not sealed as a segment; tried again after another quarter of the threshold", "error", err)
		return false
	}
	*retryAt = 0
	return true
}

// rotate seals the live journal, which holds revisions first to last, as
// a segment: a rename, then a directory sync. A segment of that name
// already there is never replaced (the rotation is refused). A failed
// directory sync is only logged: the rename is done, and the next live
// journal's creation syncs the directory before its first record counts.
func (d *doc) rotate(first, last uint64) error {
	name := d.p.segmentName(first, last)
	if id, err := d.stat(name); err != nil {
		return err
	} else if id.exists {
		return reason.New(reason.CorruptState, "cannot seal journal %s: %s already exists", d.p.journal, name)
	}
	err := d.fault("segment.rename")
	if err == nil {
		err = d.s.root.Rename(d.p.journal, name)
	}
	if err != nil {
		return fmt.Errorf("seal journal %s as %s: %w", d.p.journal, name, err)
	}
	err = d.fault("segment.sync")
	if err == nil {
		err = d.syncDir()
	}
	if err != nil {
		d.logf("journal sealed, directory not synced (the next journal's creation syncs it)", "segment", name, "error", err)
	}
	return nil
}

// openLive opens the live journal for appending in Hold mode (the
// syncer), creating it, with a directory sync, if it does not exist.
func (h *hold) openLive() (*os.File, error) {
	d := h.d
	if h.jf != nil {
		return h.jf, nil
	}
	f, _, err := d.openRegular(d.p.journal, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, pathError(d.p.key, err)
	}
	if !h.jExists {
		if err := d.syncDir(); err != nil {
			f.Close()
			return nil, err
		}
		h.jExists = true
	}
	h.jf = f
	return f, nil
}
