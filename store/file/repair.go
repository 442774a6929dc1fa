package file

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// RepairKeep says which side a repair keeps (store.RepairKeep).
type RepairKeep = store.RepairKeep

// What a repair keeps.
const (
	KeepJournal  = store.KeepJournal
	KeepSnapshot = store.KeepSnapshot
)

// RepairResult says what a repair did.
type RepairResult = store.RepairResult

var _ store.Repairer = (*Store)(nil)

type repairState struct {
	keep        RepairKeep
	actor, why  string
	aside       []string
	commitError error
	committed   bool
}

// Repair settles, under the document's lock, what an open refuses with
// CORRUPT_STATE because only a person can choose: see RepairKeep. Every
// file it replaces is moved aside first. Not in Hold mode (stop the daemon
// first).
func (s *Store) Repair(ctx context.Context, key string, keep RepairKeep, actor, why string) (RepairResult, error) {
	if s.daemon != nil {
		return RepairResult{}, reason.New(reason.Conflict, "repair runs with the daemon stopped")
	}
	if keep != KeepJournal && keep != KeepSnapshot {
		return RepairResult{}, reason.New(reason.InvalidInput, "repair keeps %q or %q, not %q", KeepJournal, KeepSnapshot, keep)
	}
	if strings.TrimSpace(why) == "" {
		return RepairResult{}, reason.New(reason.InvalidInput, "a repair needs a reason")
	}
	d, err := s.doc(key)
	if err != nil {
		return RepairResult{}, err
	}
	res := RepairResult{Key: key, Kept: string(keep)}
	err = d.lockedRead(ctx, func() error {
		rs := &repairState{keep: keep, actor: actor, why: why}
		aside := func(name, kind string) error {
			id, err := d.stat(name)
			if err != nil || !id.exists {
				return err
			}
			a, err := d.moveAside(name, kind)
			if err == nil {
				rs.aside = append(rs.aside, a)
			}
			return err
		}
		if err := aside(d.p.head, "repaired"); err != nil {
			return err
		}
		if err := d.recoverTmp(); err != nil {
			return err
		}
		if err := d.setForeignAside(rs); err != nil {
			return err
		}
		_, tail, err := d.newestSegment()
		if err != nil {
			return err
		}
		pj, err := d.readJournal(tail)
		if err != nil {
			return err
		}
		if tail == nil && len(pj.recs) == 0 {
			// No journal: the marks name a journal that is gone.
			if err := aside(d.p.marks, "repaired"); err != nil {
				return err
			}
			if keep == KeepJournal {
				if err := aside(d.p.snap, "repaired"); err != nil {
					return err
				}
			}
		}
		d.repair = rs
		defer func() { d.repair = nil }()
		d.loaded = false
		if err := d.load(); err != nil {
			return err
		}
		d.settleEdit()
		if rs.commitError != nil {
			return rs.commitError
		}
		if d.adopted && keep == KeepSnapshot {
			// A snapshot with no journal: journal it as revision 1.
			cur, err := d.bytes()
			if err != nil {
				return err
			}
			rec, err := d.commit(store.Change{Value: cur, Actor: actor, Reason: "repair: " + why})
			if err != nil {
				return err
			}
			rs.committed = rec != nil
		}
		if d.last != nil {
			d.writeAnchor(d.last.Rev, d.last.Hash) // and the witness
		} else {
			d.clearWitness() // no journal kept: the next commit starts one
		}
		res.Revision, res.Committed, res.Aside = d.rev, rs.committed, rs.aside
		return nil
	})
	return res, err
}

// settleRepair is settleEdit during a repair: the snapshot that is no
// revision of the journal is kept aside (KeepJournal) or committed as the
// next revision by the repair's actor (KeepSnapshot).
func (d *doc) settleRepair(e *capturedEdit) {
	rs := d.repair
	rs.aside = append(rs.aside, e.aside)
	if rs.keep != KeepSnapshot {
		return
	}
	rs.commitError = func() error {
		if e.err != nil {
			return reason.New(reason.CorruptState, "the snapshot (kept at %s) does not parse, so it cannot be kept: %v; repair with --keep journal", e.aside, e.err)
		}
		prev, err := d.bytes()
		if err != nil {
			return err
		}
		if err := d.validate(prev, e.value); err != nil {
			return fmt.Errorf("the snapshot (kept at %s) is not a valid %s; repair with --keep journal: %w", e.aside, d.p.key, err)
		}
		rec, err := d.commit(store.Change{Value: e.value, Actor: rs.actor, Reason: "repair: " + rs.why})
		rs.committed = rec != nil
		return err
	}()
}

// setForeignAside takes out of the live journal the lines that are no
// records of it (written by someone else: a line appended through a link,
// a hand edit): each line that does not decode as a record, or does not
// continue the chain of the records kept before it. The journal as found
// is kept first, whole, at <journal>.foreign-<time> (never deleted); then
// the journal is replaced by its own records. A torn last line is left for
// the load to cut, as always.
func (d *doc) setForeignAside(rs *repairState) error {
	data, err := d.readFile(d.p.journal)
	if err != nil || data == nil {
		return err
	}
	_, prev, err := d.newestSegment()
	if err != nil {
		return err
	}
	var kept bytes.Buffer
	foreign := 0
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if line[len(line)-1] != '\n' {
			kept.Write(line) // torn: the load cuts it, with its copy kept
			continue
		}
		r, err := store.DecodeRecord(line[:len(line)-1])
		if err == nil {
			err = store.Chain(prev, r) // prev is a record read, never loose
		}
		if err != nil {
			foreign++
			continue
		}
		kept.Write(line)
		prev = &r
	}
	if foreign == 0 {
		return nil
	}
	aside := d.p.journal + ".foreign-" + stamp(d.s.opts.Now())
	if err := d.replaceFile(aside, aside+".tmp", "repair.foreign", writing(data), nil); err != nil {
		return fmt.Errorf("keep the journal's foreign lines at %s: %w", aside, err)
	}
	rs.aside = append(rs.aside, aside)
	d.logf("journal lines that are no records of it taken out", "lines", foreign, "copy", aside)
	return d.replaceFile(d.p.journal, d.p.journal+".foreign-tmp", "repair.journal", writing(kept.Bytes()), nil)
}
