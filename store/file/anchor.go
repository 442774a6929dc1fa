package file

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// A document's anchor (<dir>/.<name>.head; .head beside manifest.json) is
// the journal's head as of the last commit, one JSON line:
//
//	{"rev":42,"hash":"sha256:…","mac":"hmac-sha256:…"}
//
// It is rewritten in place after every durable append, not fsynced (after a
// power loss it may name an earlier revision, never a later one), and padded
// to anchorLen so that a rewrite is one pwrite(2). Every open checks that the
// journal reaches it through the record it names: a journal that ends before
// it lost records, another hash there means a rewritten history. With a
// journal key the anchor carries an HMAC, so a history rewritten with every
// hash recomputed, or cut short with the anchor rewritten to match, is caught
// too. The witness (witness.go) is the same line kept outside the work tree.
type anchor struct {
	Rev  uint64 `json:"rev"`
	Hash string `json:"hash"`
	MAC  string `json:"mac,omitempty"`
}

// The environment variables holding the journal key, or the path of a file
// (outside the project) holding it.
const (
	JournalKeyEnv     = "CUSTODIAN_JOURNAL_KEY"
	JournalKeyFileEnv = "CUSTODIAN_JOURNAL_KEY_FILE"
)

// journalKeyFromEnv reads the journal key from the environment (nil: none).
// A key file inside the project is refused: it would authenticate nothing.
func journalKeyFromEnv(root string) ([]byte, error) {
	if v := os.Getenv(JournalKeyEnv); v != "" {
		return []byte(v), nil
	}
	name := os.Getenv(JournalKeyFileEnv)
	if name == "" {
		return nil, nil
	}
	abs, err := filepath.Abs(name)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "$%s=%q: %v", JournalKeyFileEnv, name, err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if rel, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(rel) {
		return nil, reason.New(reason.InvalidInput, "$%s=%q is inside the project: keep the journal key outside the repository", JournalKeyFileEnv, name)
	}
	b, err := readRegular(abs, 1<<16)
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "$%s=%q: %v", JournalKeyFileEnv, name, err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < 16 {
		return nil, reason.New(reason.InvalidInput, "$%s=%q: the key is %d bytes; use at least 16 (e.g. openssl rand -hex 32)", JournalKeyFileEnv, name, len(b))
	}
	return b, nil
}

// anchorMAC authenticates an anchor's revision and hash.
func anchorMAC(key []byte, rev uint64, hash string) string {
	return store.MAC(key, []byte("custodian-anchor\x00"+strconv.FormatUint(rev, 10)+"\x00"+hash))
}

// readAnchor returns the document's anchor, nil when there is none. One
// that does not parse (a write cut short) identifies nothing: bad says so.
func (d *doc) readAnchor() (a *anchor, bad string, err error) {
	b, err := d.readFile(d.p.head)
	if err != nil || b == nil {
		return nil, "", err
	}
	if a = parseAnchor(b); a == nil {
		return nil, fmt.Sprintf("%s does not parse", d.p.head), nil
	}
	return a, "", nil
}

// parseAnchor decodes an anchor's line (nil: it does not parse).
func parseAnchor(b []byte) *anchor {
	var x anchor
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil || x.Rev == 0 || x.Hash == "" {
		return nil
	}
	return &x
}

// anchorLen is the length of an anchor line, padded with spaces before its
// newline (a 20-digit revision, a SHA-256 hash and an HMAC take ≈ 190 bytes).
const anchorLen = 256

// line encodes the anchor as its padded line.
func (a anchor) line() []byte {
	b, _ := json.Marshal(a)
	for len(b) < anchorLen-1 {
		b = append(b, ' ')
	}
	return append(b, '\n')
}

// writeAnchor records rev and hash as the journal's head, in the anchor and
// the witness. Not fsynced, and a failure is only logged: the commit is
// durable in the journal, and an anchor behind it is accepted.
func (d *doc) writeAnchor(rev uint64, hash string) {
	if rev == 0 || hash == "" {
		return
	}
	a := anchor{Rev: rev, Hash: hash}
	if k := d.s.key; k != nil {
		a.MAC = anchorMAC(k, rev, hash)
	}
	line := a.line()
	d.writeWitness(line)
	err := d.fault("anchor.write")
	if h := d.held; err == nil && h.isActive() {
		// The daemon keeps the file open (nobody else writes it) and, once
		// it holds one padded line, rewrites it with one pwrite: opening it
		// per group cost ≈ 0.1 ms of a ≈ 0.7 ms commit at 1,000 slices.
		if h.anchor == nil {
			h.anchor, _, err = d.openRegular(d.p.head, os.O_WRONLY|os.O_CREATE, 0o644)
		}
		if err == nil && h.anchorSized && len(line) == anchorLen {
			_, err = h.anchor.WriteAt(line, 0)
		} else if err == nil {
			err = writeAt0(h.anchor, line)
			h.anchorSized = err == nil && len(line) == anchorLen
		}
	} else if err == nil {
		var f *os.File
		if f, _, err = d.openRegular(d.p.head, os.O_WRONLY|os.O_CREATE, 0o644); err == nil {
			err = errors.Join(writeAt0(f, line), f.Close())
		}
	}
	if err != nil {
		d.logf("anchor not written; verify reports it behind the journal", "error", err)
	}
}

// writeAt0 writes line at the start of f and cuts f there: one pwrite,
// and an ftruncate that changes nothing, once f holds a padded line.
func writeAt0(f *os.File, line []byte) error {
	if _, err := f.WriteAt(line, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(line)))
}

// repairCommand is what a CORRUPT_STATE about history tells one to run.
func (d *doc) repairCommand() string {
	return fmt.Sprintf("custodian repair %s --keep journal|snapshot --reason TEXT", d.p.key)
}

// checkAnchor compares the anchor and the witness with the records load
// read (recs, ending at the journal's head; none without a journal): the
// cheap check of every open.
func (d *doc) checkAnchor(recs []store.Record, snapExists bool) (*anchor, error) {
	a, bad, err := d.readAnchor()
	if err != nil {
		return nil, err
	}
	w, err := d.readWitness()
	if err != nil {
		return a, err
	}
	var head *store.Record
	if len(recs) > 0 {
		head = &recs[len(recs)-1]
	}
	// The anchor first: it names what happened to the journal beside it;
	// the witness then catches what went back with its anchor. But a
	// document gone whole is the witness's to report (checkAnchorWith
	// moves its anchor aside).
	checks := []func() error{
		func() error { return d.checkAnchorWith(a, bad, recs, snapExists) },
		func() error { return d.checkWitness(w, head, hashesOf(recs), snapExists) },
	}
	if head == nil && !snapExists {
		slices.Reverse(checks)
	}
	for _, check := range checks {
		if err := check(); err != nil {
			return a, err
		}
	}
	if head != nil && (w == nil || w.Rev < head.Rev) && (a == nil || a.Rev >= head.Rev) {
		// The anchor is current but the witness is not (a project from
		// before witnesses, a fresh clone, a crash before its write):
		// advanceAnchor does not run, so bring the witness forward here.
		d.writeWitness(anchor{Rev: head.Rev, Hash: head.Hash}.line())
	}
	return a, nil
}

func (d *doc) checkAnchorWith(a *anchor, bad string, recs []store.Record, snapExists bool) error {
	if a == nil {
		if bad != "" && d.s.key != nil {
			return reason.New(reason.CorruptState, "%s: the journal key is set but the anchor is unreadable (%s); if the journal is as it should be, re-anchor it: %s", d.p.key, bad, d.repairCommand())
		}
		if d.s.key != nil && len(recs) > 0 {
			return reason.New(reason.CorruptState, "%s: the journal key is set but the journal has no anchor (%s missing); if the journal is as it should be, anchor it: %s", d.p.key, d.p.head, d.repairCommand())
		}
		return nil
	}
	if k := d.s.key; k != nil && !hmac.Equal([]byte(a.MAC), []byte(anchorMAC(k, a.Rev, a.Hash))) {
		return reason.New(reason.CorruptState, "%s: the anchor %s is not authenticated by the journal key (written without it, or forged); if the journal is as it should be, re-anchor it: %s", d.p.key, d.p.head, d.repairCommand())
	}
	if len(recs) == 0 {
		if !snapExists {
			// Lost whole (a rebuild brings it back): a new history
			// starts, the old anchor goes aside.
			aside, err := d.moveAside(d.p.head, "orphan")
			if err != nil {
				return err
			}
			d.logf("the document's snapshot and journal are gone: its anchor was moved aside and a new history starts", "aside", aside, "revision", a.Rev)
			return nil
		}
		return reason.New(reason.CorruptState, "%s: its journal %s is missing, but revision %d was committed (anchor %s); the snapshot is kept as it is and nothing was changed: restore the journal, or start a new one from the snapshot: %s", d.p.key, d.p.journal, a.Rev, d.p.head, d.repairCommand())
	}
	last := recs[len(recs)-1]
	if a.Rev > last.Rev {
		return reason.New(reason.CorruptState, "%s: the journal ends at revision %d but revision %d was committed (anchor %s): its last %d record(s) are lost; the snapshot and the journal are kept as they are: restore the journal, or choose which to keep: %s", d.p.key, last.Rev, a.Rev, d.p.head, a.Rev-last.Rev, d.repairCommand())
	}
	if first := recs[0].Rev; a.Rev >= first {
		if got := recs[a.Rev-first].Hash; got != a.Hash {
			return reason.New(reason.CorruptState, "%s: journal record %d is not the one committed (its hash differs from the anchor %s): the history was rewritten; restore the journal, or accept it as it is: %s", d.p.key, a.Rev, d.p.head, d.repairCommand())
		}
		// With a key, the records after the anchor (written before a
		// crash) must carry their MACs before the anchor moves past them.
		if k := d.s.key; k != nil {
			for _, r := range recs[a.Rev-first+1:] {
				if err := r.CheckMAC(k); err != nil {
					return reason.New(reason.CorruptState, "%s: %v, after the anchor's revision %d: it was not written by a holder of the journal key: %s", d.p.key, err, a.Rev, d.repairCommand())
				}
			}
		}
	}
	return nil
}

// advanceAnchor moves an anchor missing (a project from before anchors) or
// behind (a power loss) to the journal's head after an open checked it.
func (d *doc) advanceAnchor(a *anchor, last *store.Record) {
	if last == nil || a != nil && a.Rev >= last.Rev {
		return
	}
	if a == nil && d.s.key != nil {
		return // checkAnchor refused it already; repair anchors it
	}
	d.writeAnchor(last.Rev, last.Hash)
}
