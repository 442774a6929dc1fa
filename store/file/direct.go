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

// Direct edits. A snapshot whose content is no revision of its journal was
// written behind the custodian's back (an editor, a script, an old plugin).
// An open finds it (recover.go), and in Hold mode the edit watcher too
// (editwatch.go); settleEdit settles it:
//
//  1. the edited file is moved aside first (<name>.json.unjournaled-<time>,
//     or .corrupt-<time>), so nothing is lost, and the snapshot is
//     rewritten from the journal;
//  2. under DirectEditAdopt, what the edit changed from the revision it was
//     made on (editBase) is merged three ways onto the latest value (a
//     change overlapping a later commit's is a CONFLICT) and, if the
//     validators pass it, committed by actor "direct-edit" and the copy
//     aside removed; anything else stays aside;
//  3. Options.OnDirectEdit is told what happened and why.

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
	ev := DirectEdit{Key: d.p.key, Policy: d.s.opts.DirectEdits, Revision: d.rev, Aside: e.aside, Time: d.s.opts.Now().UTC()}
	prev, _ := d.bytes() // a model that does not encode: no patch in the notice
	if e.value != nil && prev != nil {
		if p, err := store.Diff(prev, e.value); err == nil {
			ev.Patch = p
		}
	}
	if err := d.adoptEdit(e, prev, &ev); err != nil {
		ev.Reason, ev.Code = err.Error(), string(reason.CodeOf(err))
		if re, ok := reason.As(err); ok {
			ev.Reason = re.Message
		}
	} else if d.s.root.Remove(e.aside) == nil {
		ev.Aside = "" // adopted, or nothing to adopt: nothing is lost
	}
	switch {
	case ev.Adopted:
		d.logf("direct edit adopted", "revision", ev.Revision, "base", ev.Base)
	case ev.Unchanged:
		d.logf("direct edit changes nothing the latest revision lacks: nothing adopted", "base", ev.Base, "revision", ev.Revision)
	default:
		d.logf("direct edit kept aside; the document keeps its committed value", "aside", ev.Aside, "reason", ev.Reason)
	}
	if d.s.opts.OnDirectEdit != nil {
		d.notices = append(d.notices, ev)
	}
}

// adoptEdit commits what the edit itself changed (from the revision it was
// made on), carried onto the latest value, when the policy and the
// document's rules allow; the error says why not. An edit that changes
// nothing the latest value lacks (a copy of revision Base written back, or
// changes a later commit already made) is Unchanged, with no error.
func (d *doc) adoptEdit(e *capturedEdit, prev []byte, ev *DirectEdit) error {
	switch {
	case e.err != nil:
		return reason.New(reason.InvalidInput, "the edited file does not parse: %v", e.err)
	case ev.Policy != DirectEditAdopt:
		return reason.New(reason.InvalidInput, "direct edits are rejected by policy (direct_edits: %s)", ev.Policy)
	case d.readOnly != nil:
		return fmt.Errorf("not adopted: %w", d.readOnly)
	}
	base, baseVal, err := d.editBase(e)
	if err != nil {
		return err
	}
	ev.Base = base
	if base < d.rev {
		merged, patch, err := merge3.Merge(baseVal, e.value, prev)
		if c, ok := errors.AsType[*merge3.Conflict](err); ok {
			if own, err := store.Diff(baseVal, e.value); err == nil {
				ev.Patch = own // what the edit itself changed
			}
			return reason.New(reason.Conflict, "the edit was made on revision %d, and %s: adopting it would undo or overwrite revisions %d to %d, which stand", base, c, base+1, d.rev).With("member", c.Path)
		}
		if err != nil {
			return err
		}
		if ev.Patch, ev.Unchanged = patch, string(patch) == "[]"; ev.Unchanged {
			return nil
		}
		e.value = merged
	}
	if err := d.validate(prev, e.value); err != nil {
		return err
	}
	if r := d.s.opts.DirectEditRule; r != nil {
		if err := r(d.p.key, prev, e.value); err != nil {
			return err
		}
	}
	rec, err := d.commit(store.Change{
		Value:  e.value,
		Actor:  DirectEditActor,
		Reason: fmt.Sprintf("direct edit of %s adopted (direct_edits: adopt)", d.p.key),
		Events: []store.Event{{Type: "direct_edit.adopted", Data: json.RawMessage(fmt.Sprintf(`{"from":%d,"base":%d}`, d.rev, base))}},
	})
	if err == nil && rec != nil {
		err = d.held.awaitDurable(rec.Rev)
	}
	if err != nil {
		return err
	}
	ev.Adopted, ev.Revision = true, d.rev
	return nil
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

// checkUnjournaled judges a snapshot (tree) with no journal beside it:
// refused when its mark file names a revision (the journal was lost, not
// never made); else named is its "revision" member when it names one (the
// custodian writes it into the documents it keeps: such a snapshot lost
// its journal too). A file made by another tool has neither and is
// adopted; the anchor's case is checkAnchor's.
func (d *doc) checkUnjournaled(tree any) (named string, err error) {
	if ms := d.readMarks(); len(ms) > 0 {
		m := ms[len(ms)-1]
		return "", reason.New(reason.CorruptState, "%s: its journal %s is missing, but its marks name revision %d; the snapshot is kept as it is and nothing was changed: restore the journal, or start a new one from the snapshot: %s", d.p.key, d.p.journal, m.Rev, d.repairCommand())
	}
	obj, _ := tree.(map[string]any)
	if n, ok := obj["revision"].(json.Number); ok && n.String() != "0" {
		return n.String(), nil
	}
	return "", nil
}

// validate runs Options.Validate, when set, on a value about to be adopted.
func (d *doc) validate(prev, next []byte) error {
	if d.s.opts.Validate == nil {
		return nil
	}
	return d.s.opts.Validate(d.p.key, prev, next)
}
