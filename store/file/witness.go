package file

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// The witness. A document's anchor (anchor.go) lives beside its journal,
// so whatever puts old files back puts the old anchor back with them: a
// `git stash`, `git reset --hard`, `git checkout <old> -- .asdd`, `git
// clean`, a backup copied over the project. The witness is a second copy
// of the anchor kept where none of those reach (Options.Witness; projectroot.WitnessDir
// chooses the git common directory, which git's commands on the work tree
// never rewrite and which every worktree of the repository shares, or
// outside git the user's state directory). Every open and Verify compare
// the journal with it:
//
//   - the journal ends before the witness's revision: the files went back
//     (CORRUPT_STATE, naming both revisions);
//   - the journal's record at the witness's revision has another hash: the
//     files were replaced by another history (another branch's state, a
//     backup of another project);
//   - the journal and the snapshot are both gone after the witness's
//     revision was committed: the state was deleted (git clean).
//
// Nothing is changed when it refuses; `custodian repair KEY --keep
// journal|snapshot` is the human's way to accept the state as it now is
// (the witness then follows the kept journal), and restoring the files
// (`git stash pop`) settles it too. A witness behind the journal (a crash
// between the journal's fsync and the witness's write; the witness is not
// fsynced, like the anchor) is accepted and moved forward.
//
// What it does not see: a rewind of the witness too (a backup of the whole
// home directory, a rewrite of .git/custodian by hand) and a state rolled
// back while no witness existed (a fresh clone). docs/security.md says so.

// witnessPath is the document's witness file ("" without a witness
// directory): the key, escaped to one file name, + ".head".
func (d *doc) witnessPath() string {
	if d.s.opts.Witness == "" {
		return ""
	}
	return filepath.Join(d.s.opts.Witness, url.PathEscape(d.p.key)+".head")
}

// readWitness returns the document's witness, nil when there is none or it
// does not parse (a write cut short: it identifies nothing, and the next
// commit rewrites it).
func (d *doc) readWitness() (*anchor, error) {
	name := d.witnessPath()
	if name == "" {
		return nil, nil
	}
	b, err := readRegular(name, anchorLen*4)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the witness %s: %w", name, err)
	}
	a, ok := parseAnchor(b)
	if !ok {
		d.logf("the witness does not parse (a write cut short); the next commit rewrites it", "witness", name)
		return nil, nil
	}
	return a, nil
}

// writeWitness records the journal's head in the witness. Best effort,
// like the anchor: the commit is durable in the journal whatever happens
// here, and a witness behind the journal is accepted.
func (d *doc) writeWitness(line []byte) {
	name := d.witnessPath()
	if name == "" {
		return
	}
	if err := d.fault("witness.write"); err != nil {
		d.logf("witness not written", "error", err)
		return
	}
	err := writeInPlace(name, line)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(name), 0o700); err == nil {
			d.describeWitnessDir()
			err = writeInPlace(name, line)
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS):
		// A process that may not write there (an agent's sandbox): the
		// custodian's daemon, which commits for it, writes it.
		d.s.opts.Logger.Debug("witness not written", "document", d.p.key, "witness", name, "error", err)
	default:
		d.logf("witness not written: a rewind of the state files is not detected until it is", "witness", name, "error", err)
	}
}

// writeInPlace writes line at the start of name (created when missing) and
// cuts the file there: one pwrite once the file holds a padded line.
func writeInPlace(name string, line []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.WriteAt(line, 0); err == nil {
		err = f.Truncate(int64(len(line)))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// describeWitnessDir leaves a README in a new witness directory, so that a
// person who finds it knows whose it is.
func (d *doc) describeWitnessDir() {
	text := fmt.Sprintf("Custodian's witnesses of the project at %s: the revision and hash\n"+
		"each state file's journal had at its last commit, kept out of the work\n"+
		"tree so that a rewound state (git stash/reset/checkout/clean, a restored\n"+
		"backup) is detected. Deleting this directory only turns that check off\n"+
		"until the next commit.\n", d.s.dir)
	_ = os.WriteFile(filepath.Join(d.s.opts.Witness, "README"), []byte(text), 0o600)
}

// clearWitness removes the document's witness (a repair that leaves the
// document with no journal: the next commit starts a new one).
func (d *doc) clearWitness() {
	if name := d.witnessPath(); name != "" {
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.logf("witness not removed", "witness", name, "error", err)
		}
	}
}

// checkWitness compares the witness with the journal: head is its last
// record (nil when there is none), hashAt gives a record's hash when it is
// at hand (false: not read, e.g. in a sealed segment), snapExists whether
// the snapshot is there. A repair does not check it: it is how a person
// accepts what is there.
func (d *doc) checkWitness(w *anchor, head *store.Record, hashAt func(rev uint64) (string, bool), snapExists bool) error {
	if w == nil || d.repair != nil {
		return nil
	}
	settle := fmt.Sprintf("restore the files (e.g. `git stash pop`, or check the state out again), or accept the state as it is now: %s", d.repairCommand())
	if head == nil {
		if snapExists {
			return reason.New(reason.CorruptState, "%s: rewound: revision %d was committed (its witness says so), but the journal %s is gone; nothing was changed: %s", d.p.key, w.Rev, d.p.journal, settle)
		}
		return reason.New(reason.CorruptState, "%s: rewound: revision %d was committed (its witness says so), but the snapshot and its journal are gone (git clean, or deleted); nothing was changed: restore the files, rebuild the document from the project's files (`custodian rebuild`; a cycle: `custodian cycle rebuild ID`), or start it anew: %s", d.p.key, w.Rev, d.repairCommand())
	}
	if w.Rev > head.Rev {
		return reason.New(reason.CorruptState, "%s: rewound: the state went back from revision %d to %d (its witness outside the work tree says so): the files were put back by something other than the custodian (git stash, reset or checkout, a restored backup); nothing was changed: %s", d.p.key, w.Rev, head.Rev, settle)
	}
	if h, ok := hashAt(w.Rev); ok && h != w.Hash {
		return reason.New(reason.CorruptState, "%s: rewound: journal record %d is not the one committed here (its witness says so): the files were replaced by another history (another branch's state, another copy's backup); nothing was changed: %s", d.p.key, w.Rev, settle)
	}
	return nil
}

// hashesOf returns hashAt for a run of consecutive records.
func hashesOf(recs []store.Record) func(uint64) (string, bool) {
	return func(rev uint64) (string, bool) {
		if len(recs) == 0 || rev < recs[0].Rev || rev > recs[len(recs)-1].Rev {
			return "", false
		}
		return recs[rev-recs[0].Rev].Hash, true
	}
}

// witnessedKeys lists the documents that have a witness.
func (s *Store) witnessedKeys() []string {
	if s.opts.Witness == "" {
		return nil
	}
	entries, err := os.ReadDir(s.opts.Witness)
	if err != nil {
		return nil
	}
	var keys []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".head")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if k, err := url.PathUnescape(name); err == nil && store.CheckKey(k) == nil {
			keys = append(keys, k)
		}
	}
	return keys
}

// checkLiveJournal is the daemon's check, after a group's fsync and before
// it is acknowledged, that the journal it appends to is still the file at
// the journal's path: git (stash, reset, checkout) and a restored backup
// replace files by unlinking them, and a daemon appending to the old file
// would acknowledge commits no one can read. One stat per group.
func (h *hold) checkLiveJournal() error {
	d := h.d
	open, err := h.jf.Stat()
	if err != nil {
		return err
	}
	now, err := d.s.root.Lstat(d.p.journal)
	if err == nil && os.SameFile(open, now) {
		return nil
	}
	return reason.New(reason.CorruptState, "%s: rewound: its journal %s was replaced or removed while the daemon held it (git stash, reset or checkout, a restored backup); the commits in flight are not acknowledged and the daemon refuses writes to it: stop the daemon, then restore the files or run %s", d.p.key, d.p.journal, d.repairCommand())
}

// StartAnew is a rebuild's word (a human decision) that the document's
// history starts again from what the rebuild commits next: the witness of
// the history that was lost is moved aside (<name>.replaced-<time>), so
// that the new history is not taken for a rewind of the old one.
func (s *Store) StartAnew(key string) error {
	d, err := s.doc(key)
	if err != nil {
		return err
	}
	name := d.witnessPath()
	if name == "" {
		return nil
	}
	err = os.Rename(name, name+".replaced-"+stamp(s.opts.Now()))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("set the witness of %s aside: %w", key, err)
	}
	return nil
}
