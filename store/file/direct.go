package file

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/internal/merge3"
)

// Direct edits. A snapshot whose content is no revision of its journal
// was written behind the custodian's back (an editor, a script, a plugin
// that predates it). It is found in one place — the open that reads the
// files (every command's first access, recover.go's load) and, in Hold
// mode, a file watcher on the snapshots (the daemon) — and settled by one
// function, settleEdit:
//
//  1. the edited file is moved aside first (<name>.json.unjournaled-<time>,
//     or .corrupt-<time> when it does not parse), so nothing is lost
//     whatever happens next, and the snapshot is rewritten from the
//     journal;
//  2. under DirectEditAdopt an edit that parses is merged three ways from
//     the revision it was made on (editBase, merge3): its own change is
//     carried onto the latest value, and one that overlaps what a later
//     commit changed is a CONFLICT; a merged value that passes the
//     document's validator (Options.Validate, Options.DirectEditRule) is
//     committed as a new revision by actor "direct-edit" (its diff is in
//     the history) and the copy aside is removed; anything else stays
//     aside and the document keeps its committed value;
//  3. Options.OnDirectEdit is told what happened and why (the CLI prints
//     it and writes an escalation notice for a rejected edit).

// DirectEditPolicy is what happens to a valid direct edit.
type DirectEditPolicy string

// The direct-edit policies.
const (
	// DirectEditReject keeps every direct edit aside and restores the
	// committed value (the default).
	DirectEditReject DirectEditPolicy = "reject"
	// DirectEditAdopt commits a direct edit that passes the document's
	// validator as a revision by DirectEditActor.
	DirectEditAdopt DirectEditPolicy = "adopt"
)

// DirectEditActor is the actor of the commit that adopts a direct edit.
const DirectEditActor = "direct-edit"

// DirectEdit reports a direct edit found and what became of it.
type DirectEdit struct {
	Key    string           `json:"key"`
	Policy DirectEditPolicy `json:"policy"`
	// Adopted: committed as Revision by DirectEditActor. Otherwise the
	// document kept its committed value (Revision) and the edited file is
	// kept at Aside.
	Adopted  bool   `json:"adopted"`
	Revision uint64 `json:"revision"`
	Aside    string `json:"aside,omitempty"`
	// Base is the revision the edit was made on (docs/store.md, "Direct
	// edits"); only what it changed from there is adopted.
	Base uint64 `json:"base,omitempty"`
	// Unchanged: not adopted because it changes nothing the latest
	// revision does not already hold (a stale copy written back); the
	// copy aside is removed, revision Base is in the history.
	Unchanged bool `json:"unchanged,omitempty"`
	// Reason says why an edit was not adopted ("" when it was).
	Reason string `json:"reason,omitempty"`
	// Code is the reason code of the refusal (INVALID_INPUT, a rule's code…).
	Code string `json:"code,omitempty"`
	// Patch is the RFC 6902 patch from the committed value to the edit
	// (adopted: to what was committed); for a CONFLICT, from the edit's
	// base to the edit: what the edit itself changed.
	Patch json.RawMessage `json:"patch,omitempty"`
	Time  time.Time       `json:"time"`
}

// capturedEdit is a direct edit moved aside, waiting to be settled.
type capturedEdit struct {
	aside string
	value []byte // the edited content (nil when it did not parse)
	err   error  // why it did not parse
	// base is the revision the edited file held before the edit, when
	// known (Hold mode: the revision the daemon last wrote there), 0
	// otherwise: the newest revision the edit can have been made on
	// (editBase finds the one it was made on).
	base uint64
}

func (s *Store) policy() DirectEditPolicy {
	if s.opts.DirectEdits == "" {
		return DirectEditReject
	}
	return s.opts.DirectEdits
}

// settleEdit adopts or rejects the edit load captured (under doc.mu and,
// outside Hold mode, the flock; in Hold mode after hold.start).
func (d *doc) settleEdit() {
	e := d.edit
	d.edit = nil
	if e == nil {
		return
	}
	if d.repair != nil {
		d.settleRepair(e)
		return
	}
	ev := DirectEdit{Key: d.p.key, Policy: d.s.policy(), Revision: d.rev, Aside: e.aside, Time: d.s.opts.Now().UTC()}
	prev, _ := d.bytes() // a model that does not encode: no patch in the notice
	if e.value != nil && prev != nil {
		if p, err := store.Diff(prev, e.value); err == nil {
			ev.Patch = p
		}
	}
	refuse := func(err error) {
		ev.Reason, ev.Code = err.Error(), string(reason.CodeOf(err))
		if re, ok := reason.As(err); ok {
			ev.Reason = re.Message
		}
	}
	switch {
	case e.err != nil:
		refuse(reason.New(reason.InvalidInput, "the edited file does not parse: %v", e.err))
	case ev.Policy != DirectEditAdopt:
		refuse(reason.New(reason.InvalidInput, "direct edits are rejected by policy (direct_edits: %s)", ev.Policy))
	case d.readOnly != nil:
		refuse(fmt.Errorf("not adopted: %w", d.readOnly))
	default:
		// Only what the edit itself changed (from the revision it was
		// made on) is adopted, carried onto the latest value; a change
		// that overlaps what a later commit changed is kept aside.
		base, baseVal, err := d.editBase(e)
		if err != nil {
			refuse(err)
			break
		}
		ev.Base = base
		if base < d.rev {
			merged, patch, err := merge3.Merge(baseVal, e.value, prev)
			if c, ok := errors.AsType[*merge3.Conflict](err); ok {
				if own, err := store.Diff(baseVal, e.value); err == nil {
					ev.Patch = own // what the edit itself changed
				}
				refuse(reason.New(reason.Conflict, "the edit was made on revision %d, and %s: adopting it would undo or overwrite revisions %d to %d, which stand", base, c, base+1, d.rev).With("member", c.Path))
				break
			}
			if err != nil {
				refuse(err)
				break
			}
			ev.Patch = patch
			if string(patch) == "[]" {
				// A copy of revision base written back, or changes a
				// later commit already made: nothing to adopt, and
				// nothing lost (revision base is in the history).
				ev.Unchanged = true
				if err := d.s.root.Remove(e.aside); err == nil {
					ev.Aside = ""
				}
				break
			}
			e.value = merged
		}
		if err := d.validate(prev, e.value); err != nil {
			refuse(err)
			break
		}
		if r := d.s.opts.DirectEditRule; r != nil {
			if err := r(d.p.key, prev, e.value); err != nil {
				refuse(err)
				break
			}
		}
		rec, err := d.commit(store.Change{
			Value:  e.value,
			Actor:  DirectEditActor,
			Reason: fmt.Sprintf("direct edit of %s adopted (direct_edits: adopt)", d.p.key),
			Events: []store.Event{{Type: "direct_edit.adopted", Data: json.RawMessage(fmt.Sprintf(`{"from":%d,"base":%d}`, d.rev, ev.Base))}},
		})
		if err == nil && rec != nil && d.held.isActive() {
			err = d.awaitDurable(rec.Rev)
		}
		if err != nil {
			refuse(err)
			break
		}
		ev.Adopted, ev.Revision = true, d.rev
		if err := d.s.root.Remove(e.aside); err == nil {
			ev.Aside = ""
		}
	}
	if ev.Adopted {
		d.logf("direct edit adopted", "revision", ev.Revision, "base", ev.Base)
	} else if ev.Unchanged {
		d.logf("direct edit changes nothing the latest revision lacks: nothing adopted", "base", ev.Base, "revision", ev.Revision)
	} else {
		d.logf("direct edit kept aside; the document keeps its committed value", "aside", ev.Aside, "reason", ev.Reason)
	}
	if d.s.opts.OnDirectEdit != nil {
		d.notices = append(d.notices, ev)
	}
}

// tellEdits tells Options.OnDirectEdit of the direct edits settled, once
// the snapshot holds what became of them.
func (d *doc) tellEdits() {
	ns := d.notices
	d.notices = nil
	for _, ev := range ns {
		d.s.opts.OnDirectEdit(ev)
	}
}

// checkUnjournaled refuses a snapshot with no journal beside it when its
// mark file names a revision: the journal was lost, not never made.
// (A file made by another tool has no marks and is adopted; the anchor's
// case is checkAnchor's.)
func (d *doc) checkUnjournaled(tree any) error {
	if ms := d.readMarks(); len(ms) > 0 {
		m := ms[len(ms)-1]
		return reason.New(reason.CorruptState, "%s: its journal %s is missing, but its marks name revision %d; the snapshot is kept as it is and nothing was changed: restore the journal, or start a new one from the snapshot: %s", d.p.key, d.p.journal, m.Rev, d.repairCommand())
	}
	if n, ok := snapshotRevision(tree); ok {
		d.logf("snapshot names a revision but has no journal: adopted as found (custodian verify reports it)", "revision", n)
	}
	return nil
}

// snapshotRevision returns the "revision" member of a snapshot with no
// journal, when it names one (the custodian writes it into the documents
// it keeps): such a snapshot lost its journal. ok is false otherwise.
func snapshotRevision(tree any) (string, bool) {
	obj, ok := tree.(map[string]any)
	if !ok {
		return "", false
	}
	n, ok := obj["revision"].(json.Number)
	if !ok || n.String() == "0" {
		return "", false
	}
	return n.String(), true
}

// validate runs Options.Validate, when set, on a value about to be adopted.
func (d *doc) validate(prev, next []byte) error {
	if d.s.opts.Validate == nil {
		return nil
	}
	return d.s.opts.Validate(d.p.key, prev, next)
}
