package asdd

import (
	"strings"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// LockSlice takes (or renews) a lease on a slice.
type LockSlice struct {
	Slice  string        `json:"slice,omitempty"`
	Holder string        `json:"holder,omitempty"`
	TTL    time.Duration `json:"ttl,omitempty"` // 0: the configured default
	Reason string        `json:"reason,omitempty"`
}

// Actor is the lease holder.
func (o LockSlice) Actor() string { return o.Holder }

func (o LockSlice) apply(t *tx) error {
	if strings.TrimSpace(o.Holder) == "" {
		return reason.New(reason.InvalidInput, "a lock needs a holder")
	}
	if err := CheckName("lock holder", o.Holder); err != nil {
		return err
	}
	if o.TTL < 0 {
		return reason.New(reason.InvalidInput, "lock duration %s is negative", o.TTL)
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if err := t.checkLock(s, o.Holder); err != nil {
		return err
	}
	ttl := o.TTL
	if ttl == 0 {
		ttl = t.cfg.Lock.DefaultTTL.D()
	}
	acquired := t.ts
	if s.Lock != nil {
		acquired = s.Lock.Acquired
	}
	s.Lock = &Lock{Status: "LOCK", Holder: o.Holder, Acquired: acquired, Expires: Timestamp(t.now.Add(ttl)), Reason: o.Reason}
	t.touch(s)
	t.event("locked", s.SliceID, "", map[string]any{"holder": o.Holder, "expires": s.Lock.Expires})
	t.summary("lock %s for %s until %s", s.SliceID, o.Holder, s.Lock.Expires)
	return nil
}

// UnlockSlice releases a lease: by its holder, or forced by a named role.
type UnlockSlice struct {
	Slice  string `json:"slice,omitempty"`
	Holder string `json:"holder,omitempty"`
	Force  bool   `json:"force,omitempty"`
	Role   string `json:"role,omitempty"` // required with Force
}

// Actor is the holder or the forcing role.
func (o UnlockSlice) Actor() string { return orDefault(o.Holder, o.Role) }

func (o UnlockSlice) apply(t *tx) error {
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if s.Lock == nil {
		return reason.New(reason.NotFound, "slice %s is not locked", s.SliceID)
	}
	if o.Force {
		if err := t.needRole(o.Role); err != nil {
			return err
		}
	} else if s.Lock.Holder != o.Holder {
		return reason.New(reason.SliceLocked, "slice %s is locked by %s, not %q; a role may force it with --force --role", s.SliceID, s.Lock.Holder, o.Holder).
			With("holder", s.Lock.Holder)
	}
	t.event("unlocked", s.SliceID, "", map[string]any{"holder": s.Lock.Holder, "forced": o.Force})
	t.summary("unlock %s (held by %s)", s.SliceID, s.Lock.Holder)
	s.Lock = nil
	t.touch(s)
	return nil
}

// expireLocks frees every lease past its expiry, and returns the exact
// bound of the leases left.
func (t *tx) expireLocks() lockBound {
	var b lockBound
	for i, s := range t.m.Slices {
		if s.Lock == nil {
			continue
		}
		exp, ok := ParseTimestamp(s.Lock.Expires)
		if acq, aok := ParseTimestamp(s.Lock.Acquired); ok && aok && t.now.Before(acq) {
			// The clock stepped back behind the lease's acquisition:
			// the lease restarts now with its own duration, instead of
			// lasting as long again as the step.
			dur := max(exp.Sub(acq), 0)
			s = t.own(i)
			old := s.Lock.Expires
			l := *s.Lock
			l.Acquired, l.Expires = t.ts, Timestamp(t.now.Add(dur))
			s.Lock = &l
			exp = t.now.Add(dur)
			t.event("lock_rebased", s.SliceID, "", map[string]any{"holder": l.Holder, "expires": l.Expires, "was": old})
		}
		switch {
		case !ok: // never expires
		case !t.now.Before(exp): // as lockExpired
			s = t.own(i)
			t.event("lock_expired", s.SliceID, "", map[string]any{"holder": s.Lock.Holder, "expired": s.Lock.Expires})
			s.Lock = nil
		case !b.any || exp.Before(b.at):
			b.at, b.any = exp, true
		}
		if s.Lock != nil {
			if acq, ok := ParseTimestamp(s.Lock.Acquired); ok && acq.After(b.acquired) {
				b.acquired = acq
			}
		}
	}
	return b
}

func lockExpired(l *Lock, now time.Time) bool {
	exp, ok := ParseTimestamp(l.Expires)
	return ok && !now.Before(exp)
}
