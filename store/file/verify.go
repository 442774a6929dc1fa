package file

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/jsonval"
)

// Verify checks, without repairing anything, that the document's journal
// chain is intact across all its segments, that replaying it reproduces
// every recorded value, that the snapshot equals the latest one or an
// earlier one that recovery brings up to date, and that the anchor (and,
// with a journal key, every MAC) matches. The journal is read one file at
// a time, never held whole.
func (s *Store) Verify(ctx context.Context, key string) error {
	_, err := s.VerifyDocument(ctx, key)
	return err
}

// VerifyReport is what Verify found on a document that passed.
type VerifyReport = store.VerifyReport

var _ store.ReportingVerifier = (*Store)(nil)

// VerifyDocument is Verify returning what it found.
func (s *Store) VerifyDocument(ctx context.Context, key string) (VerifyReport, error) {
	rep := VerifyReport{Key: key}
	d, err := s.doc(key)
	if err != nil {
		return rep, err
	}
	err = d.lockedRead(ctx, func() error {
		if d.held.isLocked() {
			// Hold mode: make the files whole first (journal synced,
			// snapshot at the latest revision), then check them as usual.
			if err := d.held.awaitDurable(d.rev); err != nil {
				return err
			}
			if err := d.held.flushSnapshot(true); err != nil {
				return err
			}
		}
		return d.verify(ctx, &rep)
	})
	return rep, err
}

// verify checks the document's files as recovery would find them, and
// reports what the next open would do; it changes nothing.
func (d *doc) verify(ctx context.Context, rep *VerifyReport) error {
	c := &verification{d: d, rep: rep}
	var err error
	if c.snap, err = d.readFile(d.p.snap); err != nil {
		return err
	}
	if c.tmp, err = d.readFile(d.p.tmp); err != nil {
		return err
	}
	if c.jid, err = d.stat(d.p.journal); err != nil {
		return err
	}
	if c.anc, c.bad, err = d.readAnchor(); err != nil {
		return err
	}
	if c.snap != nil {
		pv, err := jsonval.ParseValue(c.snap, store.Limits{MaxBytes: 1 << 62, MaxDepth: 1 << 30})
		if err != nil {
			if _, terr := store.SumOf(c.tmp); c.tmp != nil && terr == nil {
				// The rename of a finished rewrite did not happen and
				// the snapshot was then damaged: recovery promotes
				// the .tmp only when the snapshot is missing.
				return reason.New(reason.CorruptState, "%s does not parse (a complete %s is beside it): %v", d.p.snap, d.p.tmp, err)
			}
			return reason.New(reason.CorruptState, "%s does not parse: %v", d.p.snap, err)
		}
		c.snapSum, c.snapTree = pv.Sum, pv.Tree
	}
	if err := c.replayJournal(ctx); err != nil {
		return err
	}
	w, err := d.readWitness()
	if err != nil {
		return err
	}
	if w != nil {
		rep.Witnessed = w.Rev
	}
	if c.last == nil {
		err = c.checkNoRecord()
	} else {
		rep.Revision = c.last.Rev
		if err = c.checkAnchor(); err == nil {
			if c.torn {
				rep.Recovery = append(rep.Recovery, fmt.Sprintf("%s ends in a torn record (an unacknowledged commit cut short by a crash): the next open copies the journal aside and cuts it off", d.p.journal))
			}
			err = c.checkSnapshot()
		}
	}
	// The witness: the state must not have gone back (witness.go). Checked
	// after the anchor, which names more exactly what happened to a journal
	// (records lost, the journal missing), except for a document gone
	// whole, which only the witness remembers.
	if err == nil || c.last == nil && c.snap == nil {
		if werr := d.checkWitness(w, c.last, c.hashAt, c.snap != nil); werr != nil {
			return werr
		}
	}
	return err
}

// verification is one run of verify: the files as read and what replaying
// the journal found.
type verification struct {
	d   *doc
	rep *VerifyReport

	snap, tmp []byte // the snapshot and a leftover .tmp (nil: none)
	jid       fileID // the live journal
	anc       *anchor
	bad       string // why the anchor file does not parse
	snapSum   string // the snapshot's canonical sum
	snapTree  any

	v          []byte            // the journal replayed
	last       *store.Record     // its last record (nil: none)
	torn       bool              // the journal ends in a torn line
	sums       map[string]uint64 // sum -> the last revision with it
	hashes     map[uint64]string // revision -> its record's hash
	fromAnchor []store.Record    // the records from the anchor's on
}

func (c *verification) hashAt(rev uint64) (string, bool) {
	h, ok := c.hashes[rev]
	return h, ok
}

// replayJournal replays every journal file, checking each record's MAC
// once the journal key is set, and notes each record's sum and hash.
func (c *verification) replayJournal(ctx context.Context) error {
	key := c.d.s.key
	c.sums, c.hashes = map[string]uint64{}, map[uint64]string{}
	var macErr error
	var err error
	macFrom := uint64(0) // the first revision carrying a MAC
	c.last, c.torn, err = c.d.walk(1, 0, func(name string, recs []store.Record) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, r := range recs {
			if r.Sum != "" {
				c.sums[r.Sum] = r.Rev
			}
			c.hashes[r.Rev] = r.Hash
			if c.anc != nil && r.Rev >= c.anc.Rev {
				c.fromAnchor = append(c.fromAnchor, r)
			}
			if key != nil && macErr == nil && (r.MAC != "" || macFrom != 0) {
				if macFrom == 0 {
					macFrom = r.Rev
				}
				if err := r.CheckMAC(key); err != nil {
					macErr = reason.New(reason.CorruptState, "journal %s: %v", name, err)
				}
			}
		}
		var err error
		if c.v, err = store.Replay(c.v, recs); err != nil {
			return reason.New(reason.CorruptState, "journal %s: %v", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return macErr
}

// checkNoRecord judges a document whose journal holds no record: no
// journal, an empty one, or one holding only a torn line (a crash in the
// document's first commit).
func (c *verification) checkNoRecord() error {
	d, key, rep := c.d, c.d.p.key, c.rep
	if c.snap == nil {
		if c.anc != nil {
			return reason.New(reason.CorruptState, "%s: its snapshot and its journal %s are gone, but revision %d was committed (anchor %s): rebuild it, or restore them from a backup (the next commit starts a new history)", key, d.p.journal, c.anc.Rev, d.p.head)
		}
		if c.jid.exists {
			rep.Recovery = append(rep.Recovery, fmt.Sprintf("%s holds no complete record (a crash during the document's first commit, never acknowledged): nothing was committed; the next commit starts the journal afresh", d.p.journal))
			return nil
		}
		if c.tmp != nil {
			rep.Recovery = append(rep.Recovery, fmt.Sprintf("%s is left from a write that did not finish; the next open promotes it as the snapshot", d.p.tmp))
			return nil
		}
		return notFound(key)
	}
	if c.anc != nil {
		return d.checkAnchorWith(c.anc, c.bad, nil, true)
	}
	n, err := d.checkUnjournaled(c.snapTree)
	if err != nil || n == "" {
		return err // nil: a file made by another tool, not yet adopted
	}
	return reason.New(reason.CorruptState, "%s names revision %s but has no journal (%s is missing): restore the journal, or start a new one from the snapshot: %s", d.p.snap, n, d.p.journal, d.repairCommand())
}

// checkAnchor checks the anchor as an open does (checkAnchorWith: the
// journal reaches it through the record it names and, with a journal
// key, it and the records after it are authenticated), and reports what
// the next open or commit does about an anchor behind or unreadable.
func (c *verification) checkAnchor() error {
	d, rep, anc, last := c.d, c.rep, c.anc, c.last
	recs := c.fromAnchor
	if len(recs) == 0 {
		recs = []store.Record{*last} // no anchor, or one past the journal's head
	}
	if err := d.checkAnchorWith(anc, c.bad, recs, true); err != nil {
		return err
	}
	rep.Authenticated = d.s.key != nil
	switch {
	case anc == nil && c.bad != "":
		rep.Recovery = append(rep.Recovery, fmt.Sprintf("%s does not parse (a write cut short): the next commit rewrites it", d.p.head))
	case anc != nil:
		rep.Anchored = anc.Rev
		if anc.Rev < last.Rev {
			rep.Recovery = append(rep.Recovery, fmt.Sprintf("the anchor names revision %d, the journal's head is %d (an anchor write lost in a crash): the next open moves it", anc.Rev, last.Rev))
		}
	}
	return nil
}

// checkSnapshot checks that the snapshot holds the journal's replay, or an
// earlier revision of it (named by a sum or a mark) that recovery would
// replay onto, and reports a leftover .tmp.
func (c *verification) checkSnapshot() error {
	d, rep, last, snap, tmp := c.d, c.rep, c.last, c.snap, c.tmp
	want, _ := store.SumOf(c.v)
	switch {
	case snap == nil && tmp != nil:
		if s, err := store.SumOf(tmp); err == nil && s == want {
			rep.Recovery = append(rep.Recovery, fmt.Sprintf("%s is missing and %s holds revision %d (a rename a crash interrupted): the next open promotes it", d.p.snap, d.p.tmp, last.Rev))
			return nil
		}
		rep.Recovery = append(rep.Recovery, fmt.Sprintf("%s is missing: the next open rebuilds it from the journal (revision %d)", d.p.snap, last.Rev))
		return nil
	case snap == nil:
		return reason.New(reason.CorruptState, "%s is missing (journal is at revision %d)", d.p.snap, last.Rev)
	case c.snapSum == want:
		if last.Sum != "" && last.Sum != want {
			return reason.New(reason.CorruptState, "replaying %s does not reproduce its revision %d", d.p.journal, last.Rev)
		}
	default:
		// An earlier revision of this journal (a crash between the
		// journal's fsync and the snapshot's rename, or a daemon's
		// deferred snapshot): recovery replays the records after it.
		k := c.sums[c.snapSum]
		if k == 0 {
			k = d.markFor(snap, c.hashAt)
		}
		if k == 0 {
			if last.Sum != "" {
				return reason.New(reason.CorruptState, "%s does not match revision %d of its journal, nor any earlier one (changed outside the custodian: the next open treats it as a direct edit)", d.p.snap, last.Rev)
			}
			return reason.New(reason.CorruptState, "replaying %s does not reproduce %s", d.p.journal, d.p.snap)
		}
		what := fmt.Sprintf("%s holds revision %d, the journal %d (a crash before the snapshot was rewritten): the next open replays %d record(s) onto it", d.p.snap, k, last.Rev, last.Rev-k)
		if tmp != nil {
			what += fmt.Sprintf(" and removes the interrupted rewrite %s", d.p.tmp)
		}
		rep.Recovery = append(rep.Recovery, what)
		return nil
	}
	if tmp != nil {
		rep.Recovery = append(rep.Recovery, fmt.Sprintf("%s is left from an interrupted rewrite: the next open removes it", d.p.tmp))
	}
	return nil
}

func idOf(fi os.FileInfo) fileID {
	id := fileID{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(st.Dev), st.Ino
	}
	return id
}
