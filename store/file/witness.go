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

// The witness. The anchor lives beside its journal, so whatever puts old
// files back (git stash, reset, checkout, clean; a restored backup) puts the
// old anchor back with them. The witness is a copy of the anchor kept where
// none of those reach (Options.Witness; projectroot.WitnessDir: the git
// common directory, or the user's state directory). Every open and Verify
// refuse, changing nothing, a journal that ends before the witness's
// revision, holds another hash there, or is gone with its snapshot after
// that revision was committed. `custodian repair` accepts the state as it
// is; restoring the files settles it too. A witness behind the journal (not
// fsynced, like the anchor) is moved forward. It cannot see a rewind of the
// witness too, nor one from before it existed (docs/security.md).

// witnessPath is the document's witness file ("" without a witness
// directory): the key, escaped to one file name, + ".head".
func (d *doc) witnessPath() string {
	if d.s.opts.Witness == "" {
		return ""
	}
	return filepath.Join(d.s.opts.Witness, url.PathEscape(d.p.key)+".head")
}

// readWitness returns the document's witness, nil when there is none or it
// does not parse (a write cut short: the next commit rewrites it).
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
	a := parseAnchor(b)
	if a == nil {
		d.logf("the witness does not parse (a write cut short); the next commit rewrites it", "witness", name)
		return nil, nil
	}
	return a, nil
}

// writeWitness records the journal's head in the witness; best effort,
// like the anchor.
func (d *doc) writeWitness(line []byte) {
	name := d.witnessPath()
	if name == "" {
		return
	}
	if err := d.fault("witness.write"); err != nil {
		d.logf("witness not written", "error", err)
		return
	}
	write := func() error {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		return errors.Join(writeAt0(f, line), f.Close())
	}
	err := write()
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(name), 0o700); err == nil {
			d.describeWitnessDir()
			err = write()
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

// describeWitnessDir leaves a README in a new witness directory, so that a
// person who finds it knows whose it is.
func (d *doc) describeWitnessDir() {
	text := fmt.Sprintf("Custodian's witnesses of the project at %s: each state file's journal head\n"+
		"at its last commit, kept out of the work tree so that a rewound state (git\n"+
		"stash/reset/checkout/clean, a restored backup) is detected. Deleting this\n"+
		"directory only turns that check off until the next commit.\n", d.s.dir)
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
// record (nil: none), hashAt a record's hash when at hand (not in a sealed
// segment). A repair does not check it: it accepts what is there.
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
