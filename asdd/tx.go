package asdd

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// tx is the state of one Apply.
type tx struct {
	m       *Manifest
	cfg     *Config
	now     time.Time
	ts      string
	rev     uint64
	out     *Outcome
	in      []*Slice            // the input manifest's slices
	owned   map[*Slice]bool     // slices copied in this transaction
	touched []int               // positions of the slices copied or added, in that order
	ownedHB map[*Heartbeat]bool // heartbeats copied in this transaction
	// base is the input's aggregate (ApplyFinalized), nil to finalize
	// and count every slice (Apply).
	base *aggregate
	// locks bounds the lock expiries of the input's slices (after
	// expireLocks): the input aggregate's bound, or the exact one when
	// expireLocks scanned them.
	locks lockBound
	ids   *sliceIndex // with base: base's, or one made by index
}

// own returns slice i of the next manifest, copied first if it is still
// shared with the input (and the slice list with it, if it is still the
// input's: the input's list is never written).
func (t *tx) own(i int) *Slice {
	s := t.m.Slices[i]
	if !t.owned[s] {
		if sameList(t.m.Slices, t.in) {
			t.m.Slices = slices.Clone(t.m.Slices)
		}
		s = deepCopy(reflect.ValueOf(s)).Interface().(*Slice)
		t.m.Slices[i] = s
		t.owned[s] = true
		t.touched = append(t.touched, i)
	}
	return s
}

// addSlice appends a new slice to the next manifest.
func (t *tx) addSlice(s *Slice) {
	// The list is clipped (or already this transaction's): append never
	// writes into the input's array.
	t.m.Slices = append(t.m.Slices, s)
	t.owned[s] = true
	t.touched = append(t.touched, len(t.m.Slices)-1)
}

// sameList reports whether a and b are the same list (same array, same
// length).
func sameList(a, b []*Slice) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// find returns the slice with the given id, owned by this transaction, or
// a NOT_FOUND error. An operation that only reads the slice uses lookup.
func (t *tx) find(id string) (*Slice, error) {
	i := t.index(id)
	if i < 0 {
		return nil, notFound(id)
	}
	return t.own(i), nil
}

// lookup returns the slice with the given id without copying it (it may be
// the input's: do not change it), or a NOT_FOUND error.
func (t *tx) lookup(id string) (*Slice, error) {
	i := t.index(id)
	if i < 0 {
		return nil, notFound(id)
	}
	return t.m.Slices[i], nil
}

func notFound(id string) error {
	return reason.New(reason.NotFound, "no slice %q in the manifest", id)
}

// index returns the position of the slice with the given id, or -1. Apply
// reads the slices' ids in turn; ApplyFinalized looks the id up in an
// index of the slices' positions, made once and shared by the manifests
// that follow (slices are only ever added at the end, and keep their id),
// and reads only the slices added since it was made.
func (t *tx) index(id string) int {
	if t.base == nil {
		return (*sliceIndex)(nil).find(t.m.Slices, id)
	}
	if t.ids == nil || len(t.m.Slices)-t.ids.n > maxUnindexed {
		t.ids = newSliceIndex(t.m.Slices)
	}
	return t.ids.find(t.m.Slices, id)
}

// find returns the position in list of the slice with the given id, or
// -1: from the index (nil: none) when it holds the id, else by reading
// the ids of the slices it does not cover. list is the list the index was
// made from, or one that follows it (the first n slices keep their ids).
func (x *sliceIndex) find(list []*Slice, id string) int {
	from := 0
	if x != nil {
		i, ok := x.pos[id]
		switch {
		case ok && int(i) < len(list) && list[int(i)].SliceID == id:
			return int(i)
		case !ok && x.n <= len(list):
			from = x.n // not among the indexed slices
		}
	}
	for i := from; i < len(list); i++ {
		if list[i].SliceID == id {
			return i
		}
	}
	return -1
}

// maxUnindexed is how many slices may be added after a sliceIndex was made
// before a lookup makes a new one.
const maxUnindexed = 64

// sliceIndex maps the ids of a manifest's first n slices to their
// positions (the first, should an id appear twice, as a scan finds it).
// Never changed once made.
type sliceIndex struct {
	pos map[string]int32
	n   int
}

func newSliceIndex(list []*Slice) *sliceIndex {
	x := &sliceIndex{pos: make(map[string]int32, len(list)), n: len(list)}
	for i, s := range list {
		if _, dup := x.pos[s.SliceID]; !dup {
			x.pos[s.SliceID] = int32(i)
		}
	}
	return x
}

// Apply runs op on a copy of m (nil: an empty manifest) under cfg at time
// now. It returns the outcome, or a *reason.Error rejection with m
// untouched. Apply is pure: no I/O, no clock but now.
//
// The outcome's manifest shares with m every slice and heartbeat the
// operation did not change, and its slice list too when the operation
// changed no slice: treat both manifests as read-only (Clone makes a copy
// to change).
func Apply(m *Manifest, op Op, cfg *Config, now time.Time) (*Outcome, error) {
	return apply(m, op, cfg, now, false)
}

// ApplyFinalized is Apply for a manifest that Apply (or ApplyFinalized)
// produced under the same cfg, and that nobody changed since — the
// daemon's latest manifest. Every slice it did not touch is already
// finalized (CCS, stale artifact hashes), and the manifest carries an
// aggregate of its slices (the exact sum behind the global score, a lower
// bound of the lock expiries): only the slices the operation touches are
// finalized and re-counted, and locks are scanned for expiry only once
// that bound has passed, so the cost does not grow with the number of
// slices beyond a copy of the slice list (its pointers) when the
// operation changes a slice. The outcome is exactly Apply's. On a manifest without the aggregate (decoded, cloned, built by
// hand) it is Apply.
func ApplyFinalized(m *Manifest, op Op, cfg *Config, now time.Time) (*Outcome, error) {
	return apply(m, op, cfg, now, true)
}

func apply(m *Manifest, op Op, cfg *Config, now time.Time, finalized bool) (*Outcome, error) {
	if cfg == nil {
		cfg = DefaultConfig()
	}
	if m == nil {
		m = New()
	}
	// The same enumerated values, whatever the door.
	op = Normalize(op)
	var base *aggregate // nil: finalize and count every slice
	if finalized && m.agg != nil && sameList(m.agg.list, m.Slices) {
		base = m.agg
	}
	// Copy on write: the slices and heartbeats an operation changes are
	// copied when it first touches them (t.find, t.own, t.heartbeat), and
	// the slice list when the first slice is (t.own) or added (t.addSlice:
	// the list is clipped, so append copies it); the rest is shared with m,
	// which is never changed.
	next := &Manifest{
		ProjectContext:  m.ProjectContext.clone(),
		Slices:          slices.Clip(m.Slices),
		AgentHeartbeats: maps.Clone(m.AgentHeartbeats),
		Revision:        m.Revision,
		Extra:           m.Extra,
		agg:             base, // until finalize: NeedsReview uses it while the list is the input's
	}
	if next.Slices == nil {
		next.Slices = []*Slice{}
	}
	if next.AgentHeartbeats == nil {
		next.AgentHeartbeats = map[string]*Heartbeat{}
	}
	now = now.UTC()
	t := &tx{m: next, cfg: cfg, now: now, ts: Timestamp(now), rev: next.Revision + 1, out: &Outcome{},
		owned: map[*Slice]bool{}, ownedHB: map[*Heartbeat]bool{}, in: next.Slices, base: base}
	if base != nil {
		t.ids = base.ids
	}
	if base != nil && !base.locks.due(now) {
		t.locks = base.locks // no lease can have expired
	} else {
		t.locks = t.expireLocks()
	}
	if err := checkConfig(m, op, cfg); err != nil {
		return nil, err
	}
	if err := op.apply(t); err != nil {
		return nil, err
	}
	if t.out.Slice == "" {
		t.out.Slice = op.SliceID()
	}
	next.Revision = t.rev
	t.finalize()
	next.delta = &sliceDelta{from: t.in, to: next.Slices, changed: t.changed()}
	t.out.Manifest = next
	return t.out, nil
}

// changed returns the positions of the slices the transaction copied or
// added, in increasing order: where its list differs from the input's.
func (t *tx) changed() []int {
	c := slices.Clone(t.touched)
	slices.Sort(c)
	return c
}

// sliceDelta is what Apply keeps about how a manifest's slice list differs
// from its input's (SlicesChanged). Never changed once made.
type sliceDelta struct {
	from, to []*Slice // the input's list and the output's
	changed  []int    // positions in to of the slices not shared with from
}

// SlicesChanged returns, for a manifest that Apply or ApplyFinalized made
// from prev, the positions of its slices that are not prev's (changed or
// added), in increasing order, so that a caller need not compare every
// slice's pointer: every other position holds prev's slice. ok is false
// when m was not made from prev that way (decoded, cloned, its list
// replaced since): then compare.
func (m *Manifest) SlicesChanged(prev *Manifest) (changed []int, ok bool) {
	d := m.delta
	if d == nil || prev == nil || !sameList(d.to, m.Slices) || !sameList(d.from, prev.Slices) || len(m.Slices) < len(prev.Slices) {
		return nil, false
	}
	return d.changed, true
}

// Timestamp formats a time as the manifest stores it (RFC 3339, UTC).
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ParseTimestamp parses a manifest timestamp; ok is false for anything else
// (the seed's "..." placeholders).
func ParseTimestamp(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

func (t *tx) event(typ, slice, agent string, data map[string]any) {
	t.out.Events = append(t.out.Events, Event{Type: typ, Slice: slice, Agent: agent, Data: data})
}

func (t *tx) summary(format string, args ...any) { t.out.Summary = fmt.Sprintf(format, args...) }
