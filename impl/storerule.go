package impl

import (
	"github.com/custodian-dev/custodian/reason"
)

// ValidateWrite checks a generic write of the task manifest (a rollback,
// a human's raw write): a valid manifest that keeps update-status's rule,
// a task in a final status stays in it.
func ValidateWrite(key string, prev, next []byte) error {
	n, err := Decode(next)
	if err != nil {
		return err
	}
	if prev == nil {
		return nil
	}
	p, err := Decode(prev)
	if err != nil {
		return nil // a damaged previous value does not bind its successor
	}
	return CheckTransition(p, n)
}

// CheckTransition reports whether next may follow prev: every task of prev
// in a final status (merged, abandoned) is in next, in the same status.
// Other tasks may change freely, as update-status lets them, and be added
// or removed (a rollback past add-task). A manifest with no tasks is a new
// start (--init --force) and keeps nothing of prev.
func CheckTransition(prev, next *Manifest) error {
	if len(next.Tasks) == 0 {
		return nil
	}
	status := make(map[string]Status, len(next.Tasks))
	for _, t := range next.Tasks {
		status[t.ID] = t.Status
	}
	for _, pt := range prev.Tasks {
		if !pt.Status.Terminal() {
			continue
		}
		to, ok := status[pt.ID]
		switch {
		case !ok:
			return reason.New(reason.InvalidTransition, "task %s is %s, a final status: it cannot be removed", pt.ID, pt.Status).
				With("task", pt.ID).With("from", string(pt.Status))
		case to != pt.Status:
			return reason.New(reason.InvalidTransition, "task %s is %s, a final status: it cannot move to %s", pt.ID, pt.Status, to).
				With("task", pt.ID).With("from", string(pt.Status)).With("to", string(to))
		}
	}
	return nil
}
