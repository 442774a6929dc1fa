package asdd

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/internal/jsonenc"
	"github.com/custodian-dev/custodian/managed"
	"github.com/custodian-dev/custodian/reason"
)

// Op is one operation on the manifest: a proposal, a lock, a resolution, a
// heartbeat… Apply runs it.
type Op interface {
	// Actor is who asks for the operation (an agent or a role).
	Actor() string
	apply(t *tx) error
}

// Event is a domain event produced by an operation; it is recorded in the
// store's journal with the commit.
type Event struct {
	Type  string         `json:"type"`
	Slice string         `json:"slice,omitempty"`
	Agent string         `json:"agent,omitempty"`
	Data  map[string]any `json:"data,omitempty"`
}

// MarshalJSON encodes an event as encoding/json encodes the struct, without
// reflection for the usual data values (every commit encodes its events).
func (e Event) MarshalJSON() ([]byte, error) {
	b := jsonenc.String(append(make([]byte, 0, 128), `{"type":`...), e.Type)
	if e.Slice != "" {
		b = jsonenc.String(append(b, `,"slice":`...), e.Slice)
	}
	if e.Agent != "" {
		b = jsonenc.String(append(b, `,"agent":`...), e.Agent)
	}
	if len(e.Data) > 0 {
		keys := make([]string, 0, len(e.Data))
		for k := range e.Data {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, `,"data":{`...)
		for i, k := range keys {
			b = jsonenc.Member(b, i == 0, k)
			var err error
			if b, err = jsonenc.Value(b, e.Data[k]); err != nil {
				return nil, fmt.Errorf("event %s: data %s: %w", e.Type, k, err)
			}
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// Outcome is what Apply returns: the next manifest, the events, the side
// effects to apply to files once the commit succeeded, and — when the
// committed state is a halt — the verdict the proposer must hear.
type Outcome struct {
	Manifest *Manifest
	Events   []Event
	Effects  []Effect
	// Verdict is not nil when the operation committed a halt: the slice is
	// BLOCKED and the proposal was not accepted. Commit the manifest, then
	// report the verdict (its code gives the exit code).
	Verdict *reason.Error
	// Summary says in a sentence what happened, for the journal's reason.
	Summary string
}

// What an operation did, as every door reports it ("outcome" in --json and
// the API, with "committed"): accepted and halted are committed; a
// rejection changes nothing.
const (
	ResultAccepted = "accepted"
	ResultHalted   = "halted"
	ResultRejected = "rejected"
)

// Result is ResultHalted for a committed halt, ResultAccepted for any other
// committed outcome. A rejection has no Outcome: its result is
// ResultRejected, and nothing was committed.
func (o *Outcome) Result() string {
	if o != nil && o.Verdict != nil {
		return ResultHalted
	}
	return ResultAccepted
}

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
// input's).
func (t *tx) own(i int) *Slice {
	s := t.m.Slices[i]
	if !t.owned[s] {
		if sameList(t.m.Slices, t.in) {
			t.m.Slices = slices.Clone(t.m.Slices)
		}
		s = deepCopy(reflect.ValueOf(s)).Interface().(*Slice)
		t.m.Slices[i] = s
		t.owned[s] = true
	}
	return s
}

// addSlice appends a new slice to the next manifest.
func (t *tx) addSlice(s *Slice) {
	// The list is clipped (or already this transaction's): append never
	// writes into the input's array.
	t.m.Slices = append(t.m.Slices, s)
	t.owned[s] = true
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
	from := 0
	if t.base != nil {
		if t.ids == nil || len(t.m.Slices)-t.ids.n > maxUnindexed {
			t.ids = newSliceIndex(t.m.Slices)
		}
		i, ok := t.ids.pos[id]
		switch {
		case ok && int(i) < len(t.m.Slices) && t.m.Slices[i].SliceID == id:
			return int(i)
		case !ok && t.ids.n <= len(t.m.Slices):
			from = t.ids.n // not among the indexed slices
		}
	}
	for i := from; i < len(t.m.Slices); i++ {
		if t.m.Slices[i].SliceID == id {
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

// heartbeat returns the heartbeat under key, owned by this transaction;
// with create, a missing one is added (nil otherwise).
func (t *tx) heartbeat(key string, create bool) *Heartbeat {
	h := t.m.AgentHeartbeats[key]
	switch {
	case h == nil && !create:
		return nil
	case h == nil:
		h = &Heartbeat{}
	case !t.ownedHB[h]:
		h = h.clone()
	}
	t.ownedHB[h] = true
	t.m.AgentHeartbeats[key] = h
	return h
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
// slices beyond a comparison of their pointers. The outcome is exactly
// Apply's. On a manifest without the aggregate (decoded, cloned, built by
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
	if err := op.apply(t); err != nil {
		return nil, err
	}
	next.Revision = t.rev
	t.finalize()
	t.out.Manifest = next
	return t.out, nil
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

// expireLocks frees every lease past its expiry, and returns the exact
// bound of the leases left.
func (t *tx) expireLocks() lockBound {
	var b lockBound
	for i := range t.m.Slices {
		s := t.m.Slices[i]
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

// finalize recomputes what is derived — every CCS, stale artifact hashes
// dropped, the global score — and the next manifest's aggregate. Without
// a base aggregate (Apply) it does so for every slice; with the input's
// (ApplyFinalized), only for the slices the transaction changed or added
// (the others are shared with the input, finalized when it was made),
// updating the base from them.
func (t *tx) finalize() {
	var agg *aggregate
	if t.base == nil {
		agg = &aggregate{conf: new(ccsSum)}
		for i := range t.m.Slices {
			s := t.finalizeSlice(i)
			agg.count(s, 1)
			agg.locks.include(s)
		}
		agg.list = t.m.Slices // after finalizeSlice, which may copy it
		agg.global, agg.hasGlobal = agg.conf.mean()
	} else {
		agg = t.update()
	}
	t.m.agg = agg
	if agg.hasGlobal {
		g := round4(agg.global)
		t.m.ProjectContext.GlobalConfidenceScore = &g
	} else {
		t.m.ProjectContext.GlobalConfidenceScore = nil
	}
}

// update finalizes the slices the transaction changed or added and returns
// the base aggregate updated from them (the base itself when nothing
// changed).
func (t *tx) update() *aggregate {
	base := t.base
	if sameList(t.m.Slices, t.in) && t.locks.equal(base.locks) && t.ids == base.ids {
		return base // no slice changed or added
	}
	agg := *base
	agg.list, agg.locks, agg.ids = t.m.Slices, t.locks, t.ids
	if sameList(t.m.Slices, t.in) {
		return &agg // only the lock bound or the index changed
	}
	if len(t.m.Slices) < len(t.in) {
		agg.ids = nil // no operation removes a slice; if one did, the positions changed
	}
	copied := false
	common := min(len(t.m.Slices), len(t.in))
	for i := 0; i < max(len(t.m.Slices), len(t.in)); i++ {
		if i%encChunkSize == 0 && i+encChunkSize <= common && samePointers(t.m.Slices[i:i+encChunkSize], t.in[i:i+encChunkSize]) {
			i += encChunkSize - 1
			continue // a run of shared slices, compared as memory
		}
		var old, s *Slice
		if i < len(t.in) {
			old = t.in[i]
		}
		if i < len(t.m.Slices) {
			s = t.m.Slices[i]
		}
		if s == old {
			continue // shared: finalized and counted when it was made
		}
		if s != nil {
			s = t.finalizeSlice(i)
		}
		if old != nil && (s == nil || s.SliceID != old.SliceID) {
			agg.ids = nil // no operation renames a slice; if one did, the index is stale
		}
		agg.locks.include(s)
		if !sameContribution(old, s) {
			if !copied {
				c := *agg.conf
				agg.conf, copied = &c, true
			}
			agg.conf.add(old, -1)
			agg.conf.add(s, 1)
		}
		agg.review += needsReview(s) - needsReview(old)
	}
	agg.list = t.m.Slices
	if agg.conf != base.conf {
		agg.global, agg.hasGlobal = agg.conf.mean()
	}
	return &agg
}

// finalizeSlice recomputes slice i's CCS and drops hashes of paths it no
// longer names, copying it first if that changes it; it returns the slice.
func (t *tx) finalizeSlice(i int) *Slice {
	s := t.m.Slices[i]
	v, ok := ComputeCCS(s.ConfidenceChain, t.cfg)
	if ok != (s.CCS != nil) || (ok && *s.CCS != v) {
		s = t.own(i)
		if ok {
			s.CCS = &v
		} else {
			s.CCS = nil
		}
	}
	if len(s.ArtifactHashes) > 0 {
		named := s.Artifacts()
		stale := func(p, _ string) bool {
			_, found := slices.BinarySearch(named, p)
			return !found
		}
		for p, h := range s.ArtifactHashes {
			if stale(p, h) {
				s = t.own(i)
				maps.DeleteFunc(s.ArtifactHashes, stale)
				break
			}
		}
		if len(s.ArtifactHashes) == 0 {
			s = t.own(i)
			s.ArtifactHashes = nil
		}
	}
	return s
}

// aggregate is what a manifest made by Apply or ApplyFinalized keeps about
// its slices so that ApplyFinalized need not read every one of them: the
// exact sum behind the global score, a bound of the lock expiries, how
// many slices are marked for review, and an index of the slices' ids. It
// is never serialized (a decoded or cloned manifest has none) and never
// changed once made: successive manifests share it while nothing it
// holds changes.
type aggregate struct {
	// list is the slice list it describes: ApplyFinalized uses it only on
	// a manifest with that very list.
	list      []*Slice
	conf      *ccsSum // the active slices' CCS; shared while they do not change
	global    float64 // conf.mean(), before rounding
	hasGlobal bool
	locks     lockBound
	review    int         // slices with needs_human_review marks
	ids       *sliceIndex // nil until ApplyFinalized looks a slice up
}

// count adds the slice's contributions (sign 1) or removes them (-1).
func (a *aggregate) count(s *Slice, sign int) {
	a.conf.add(s, sign)
	a.review += sign * needsReview(s)
}

func needsReview(s *Slice) int {
	if s != nil && len(s.NeedsHumanReview) > 0 {
		return 1
	}
	return 0
}

// lockBound is a lower bound of the expiries of a manifest's leases
// (those with a readable expiry: the others never expire): no lease
// expires before at. It is exact when computed over every slice; a lease
// removed or renewed since may leave it too low, which costs one full scan
// of the leases when it passes (expireLocks), and that scan makes it exact
// again.
type lockBound struct {
	at  time.Time
	any bool // false: no lease
	// acquired is the latest acquisition time of a lease: a clock that
	// reads earlier than it stepped back, and the leases are rebased
	// (expireLocks) so that a step back never stretches one beyond its
	// own duration.
	acquired time.Time
}

// include lowers b to the expiry of s's lease, if it has one.
func (b *lockBound) include(s *Slice) {
	if s == nil || s.Lock == nil {
		return
	}
	if exp, ok := ParseTimestamp(s.Lock.Expires); ok && (!b.any || exp.Before(b.at)) {
		b.at, b.any = exp, true
	}
	if acq, ok := ParseTimestamp(s.Lock.Acquired); ok && acq.After(b.acquired) {
		b.acquired = acq
	}
}

func (b lockBound) equal(o lockBound) bool {
	return b.any == o.any && b.at.Equal(o.at) && b.acquired.Equal(o.acquired)
}

// due reports whether a lease may have expired at now, or the clock
// stepped back behind a lease's acquisition.
func (b lockBound) due(now time.Time) bool {
	return b.any && !now.Before(b.at) || now.Before(b.acquired)
}

func (t *tx) touch(s *Slice) { s.UpdatedAt = t.ts }

var (
	// Compiled on first use, not at package init: every custodian process
	// pays for package init (IDPattern's {0,127} alone was 3 % of the CPU
	// of custodian version).
	sliceIDRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(IDPattern) })
	artNameRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })
	hashRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })
	statusWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z_]{0,31}$`) })
)

// CleanRelPath checks that p is a project-relative path: not empty, not
// absolute, no "..", no backslashes, already clean. Symlink escapes are the
// I/O layer's to refuse (os.Root).
func CleanRelPath(p string) error {
	switch {
	case p == "":
		return reason.New(reason.InvalidInput, "empty artifact path")
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		return reason.New(reason.InvalidInput, "artifact path %q is absolute; give it relative to the project root", p)
	case strings.Contains(p, "\\"):
		return reason.New(reason.InvalidInput, "artifact path %q contains a backslash", p)
	case strings.ContainsRune(p, 0):
		return reason.New(reason.InvalidInput, "artifact path contains a NUL byte")
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return reason.New(reason.InvalidInput, "artifact path %q leaves the project", p)
		}
		if part == "" || part == "." {
			return reason.New(reason.InvalidInput, "artifact path %q is not clean", p)
		}
	}
	return nil
}

// CleanPath checks that p is a project-relative artifact path (CleanRelPath)
// and not one of the custodian's own files (managed.Owned: journals,
// snapshots, locks, config, notices, the failure log, cycle and run
// files), where a halt would write its marker. Symlinks that lead to such
// a file are the I/O layer's to refuse (asdd/effects).
func CleanPath(p string) error {
	if err := CleanRelPath(p); err != nil {
		return err
	}
	if what, ok := managed.What(p); ok {
		return reason.New(reason.InvalidInput, "artifact path %q is one of the custodian's own files (%s); name an ordinary project file", p, what).With("path", p)
	}
	return nil
}

func (t *tx) needRole(role string) error {
	if role == "" {
		return reason.New(reason.InvalidInput, "a named role is required (one of %s)", strings.Join(t.cfg.Roles, ", "))
	}
	if !slices.Contains(t.cfg.Roles, role) {
		return reason.New(reason.InvalidInput, "unknown role %q (roles: %s)", role, strings.Join(t.cfg.Roles, ", "))
	}
	return nil
}

func (t *tx) agent(name string) (*Agent, error) {
	if name == "" {
		return nil, reason.New(reason.InvalidInput, "an agent name is required")
	}
	a, ok := t.cfg.Agent(name)
	if !ok {
		names := make([]string, len(t.cfg.Agents))
		for i := range t.cfg.Agents {
			names[i] = t.cfg.Agents[i].Name
		}
		return nil, reason.New(reason.InvalidInput, "unknown agent %q (agents: %s)", name, strings.Join(names, ", "))
	}
	return a, nil
}

// checkLock refuses a change to s by who while someone else holds its lease.
func (t *tx) checkLock(s *Slice, who string) error {
	if s.Lock == nil || lockExpired(s.Lock, t.now) {
		return nil
	}
	if s.Lock.Holder == who || HeartbeatKey(s.Lock.Holder) == HeartbeatKey(who) {
		return nil
	}
	return reason.New(reason.SliceLocked, "slice %s is locked by %s until %s", s.SliceID, s.Lock.Holder, s.Lock.Expires).
		With("holder", s.Lock.Holder).With("expires", s.Lock.Expires)
}

// ---- Init ----------------------------------------------------------------

// Init sets up a project's manifest (or updates its project context).
type Init struct {
	Sprint string
	Goals  []string
}

// Actor is the custodian itself.
func (Init) Actor() string { return "custodian" }

func (o Init) apply(t *tx) error {
	if o.Sprint != "" {
		t.m.ProjectContext.CurrentSprint = o.Sprint
	}
	if len(o.Goals) > 0 {
		t.m.ProjectContext.ProductGoals = slices.Clone(o.Goals)
	}
	t.event("initialized", "", "", nil)
	t.summary("initialize the ASDD manifest")
	return nil
}

// ---- AddSlice ------------------------------------------------------------

// AddSlice adds a slice: a FEATURE starts in DISCOVERY, a RETRO_SPEC in
// BEHAVIOR_CAPTURE.
type AddSlice struct {
	ID             string
	Name           string
	Type           string // FEATURE (default) or RETRO_SPEC
	GovernanceMode string // MANUAL (default)
	By             string
}

// Actor is who added the slice.
func (o AddSlice) Actor() string { return orDefault(o.By, "custodian") }

// newSlice is a slice in the seed's layout, with its empty lists.
func newSlice(id, name, typ, status, gov, ts string) *Slice {
	return &Slice{
		SliceID: id, Name: name, Type: typ, Status: status, GovernanceMode: gov,
		PhaseData: map[string]string{}, ConfidenceChain: []ChainEntry{}, Blockers: []json.RawMessage{},
		DissentNotices: []json.RawMessage{}, ReasoningTraces: []string{}, CreatedAt: ts, UpdatedAt: ts,
	}
}

// OrDefault is s, or d when s is empty.
func OrDefault(s, d string) string { return orDefault(s, d) }

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (o AddSlice) apply(t *tx) error {
	if !sliceIDRE().MatchString(o.ID) {
		return reason.New(reason.InvalidInput, "slice id %q is not valid (letters, digits, '.', '_', '-'; at most 128)", o.ID)
	}
	if t.index(o.ID) >= 0 {
		return reason.New(reason.InvalidInput, "slice %s already exists", o.ID)
	}
	typ := orDefault(o.Type, TypeFeature)
	status := Discovery
	switch typ {
	case TypeFeature:
	case TypeRetroSpec:
		status = BehaviorCapture
	default:
		if typ == TypeQuickFix {
			return reason.New(reason.InvalidInput, "QUICK_FIX slices are recorded with `custodian quick`")
		}
		if !statusWord().MatchString(typ) {
			return reason.New(reason.InvalidInput, "slice type %q is not valid (FEATURE or RETRO_SPEC)", typ)
		}
	}
	gov := orDefault(o.GovernanceMode, "MANUAL")
	if !statusWord().MatchString(gov) {
		return reason.New(reason.InvalidInput, "governance mode %q is not valid (such as MANUAL)", gov)
	}
	s := newSlice(o.ID, o.Name, typ, status, gov, t.ts)
	if typ == TypeRetroSpec {
		zero := func() *int { v := 0; return &v }
		s.RequirementsValidated, s.RequirementsCorrected, s.RequirementsMissing = zero(), zero(), zero()
		s.ValidationStatus = "PENDING"
	}
	t.addSlice(s)
	t.event("slice_added", o.ID, "", map[string]any{"type": typ, "status": status})
	t.summary("add slice %s (%s) in %s", o.ID, typ, status)
	return nil
}

// ---- Quick ---------------------------------------------------------------

// Quick records a QUICK_FIX slice (/asdd:quick): no phase gates.
type Quick struct {
	ID          string // optional: QUICK-<n>
	Description string
	Agent       string // who made the fix (default implementation)
	Artifacts   []Artifact
}

// Actor is the agent that made the fix.
func (o Quick) Actor() string { return orDefault(o.Agent, "knowledge") }

func (o Quick) apply(t *tx) error {
	desc := strings.TrimSpace(o.Description)
	if desc == "" || strings.ContainsAny(desc, "\n\r") {
		return reason.New(reason.InvalidInput, "quick mode takes a one-line description")
	}
	id := o.ID
	if id == "" {
		for n := 1; ; n++ {
			id = fmt.Sprintf("QUICK-%03d", n)
			if t.index(id) < 0 {
				break
			}
		}
	}
	if !sliceIDRE().MatchString(id) {
		return reason.New(reason.InvalidInput, "slice id %q is not valid", id)
	}
	if t.index(id) >= 0 {
		return reason.New(reason.InvalidInput, "slice %s already exists", id)
	}
	if o.Agent != "" {
		if _, err := t.agent(o.Agent); err != nil {
			return err
		}
	}
	s := newSlice(id, desc, TypeQuickFix, QuickFix, "QUICK", t.ts)
	s.Description = desc
	if err := checkArtifacts(o.Artifacts); err != nil {
		return err
	}
	for _, a := range o.Artifacts {
		if err := t.cfg.Quick.Boundary.Check(a); err != nil {
			return err
		}
		recordArtifact(s, a)
	}
	t.addSlice(s)
	t.event("quick_fix", id, o.Agent, map[string]any{"description": desc})
	t.summary("record quick fix %s: %s", id, desc)
	return nil
}

// ---- Lock / Unlock -------------------------------------------------------

// LockSlice takes (or renews) a lease on a slice.
type LockSlice struct {
	Slice  string
	Holder string
	TTL    time.Duration // 0: the configured default
	Reason string
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
	Slice  string
	Holder string
	Force  bool
	Role   string // required with Force
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

// ---- Heartbeat -----------------------------------------------------------

// Beat records an agent heartbeat (seed 000's agent_heartbeats).
type Beat struct {
	Agent     string
	Status    string // IDLE, ACTIVE, PAUSED…
	Slice     string
	Wave      *int
	Completed *int
	Remaining *int
}

// Actor is the agent.
func (o Beat) Actor() string { return o.Agent }

func (o Beat) apply(t *tx) error {
	a, err := t.agent(o.Agent)
	if err != nil {
		return err
	}
	status := orDefault(o.Status, HeartbeatActive)
	if !statusWord().MatchString(status) {
		return reason.New(reason.InvalidInput, "heartbeat status %q is not valid (IDLE, ACTIVE, PAUSED)", status)
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"wave", o.Wave}, {"tasks completed", o.Completed}, {"tasks remaining", o.Remaining}} {
		if p.v != nil && *p.v < 0 {
			return reason.New(reason.InvalidInput, "%s must not be negative", p.name)
		}
	}
	if o.Slice != "" {
		if _, err := t.lookup(o.Slice); err != nil { // named, not changed
			return err
		}
	}
	key := HeartbeatKey(a.Name)
	h := t.heartbeat(key, true)
	h.LastExecution, h.Status, h.CurrentSlice = t.ts, status, o.Slice
	h.CurrentWave, h.TasksCompleted, h.TasksRemaining = clonePtr(o.Wave), clonePtr(o.Completed), clonePtr(o.Remaining)
	h.RetryRequestedAt, h.EscalatedAt = "", ""
	t.event("heartbeat", o.Slice, a.Name, map[string]any{"status": status})
	t.summary("heartbeat from %s (%s)", key, status)
	return nil
}

// ---- Tasks ---------------------------------------------------------------

// AddTask adds a task to a slice's plan.
type AddTask struct {
	Slice     string
	ID        string
	Title     string
	Wave      int
	DependsOn []string
	// Requirement is the REQ-NNN the task serves.
	Requirement string
	By          string
}

// Actor is who planned the task.
func (o AddTask) Actor() string { return orDefault(o.By, "task_planning") }

func (o AddTask) apply(t *tx) error {
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if o.By != "" {
		if err := t.checkLock(s, o.By); err != nil {
			return err
		}
	}
	if !sliceIDRE().MatchString(o.ID) { // a task id has the form of a slice id
		return reason.New(reason.InvalidInput, "task id %q is not valid", o.ID)
	}
	if o.Wave < 1 {
		return reason.New(reason.InvalidInput, "task %s: wave must be 1 or more, got %d", o.ID, o.Wave)
	}
	if findTask(s, o.ID) != nil {
		return reason.New(reason.InvalidInput, "slice %s already has task %s", s.SliceID, o.ID)
	}
	deps := slices.Clone(o.DependsOn)
	slices.Sort(deps)
	deps = slices.Compact(deps)
	for _, d := range deps {
		dt := findTask(s, d)
		if dt == nil {
			return reason.New(reason.InvalidInput, "task %s depends on %s, which slice %s does not have (add dependencies first)", o.ID, d, s.SliceID)
		}
		if dt.Wave > o.Wave {
			return reason.New(reason.InvalidInput, "task %s (wave %d) cannot depend on %s of a later wave %d", o.ID, o.Wave, d, dt.Wave)
		}
	}
	s.Tasks = append(s.Tasks, Task{ID: o.ID, Title: o.Title, Wave: o.Wave, DependsOn: deps, Requirement: o.Requirement, Status: TaskPending})
	t.touch(s)
	t.event("task_added", s.SliceID, o.By, map[string]any{"task": o.ID, "wave": o.Wave})
	t.summary("add task %s (wave %d) to %s", o.ID, o.Wave, s.SliceID)
	return nil
}

func findTask(s *Slice, id string) *Task {
	for i := range s.Tasks {
		if s.Tasks[i].ID == id {
			return &s.Tasks[i]
		}
	}
	return nil
}

// Ready returns the tasks that may start now: pending (not claimed, not
// done), every dependency done, and every task of every earlier wave done
// (wave N starts only after wave N-1 is complete).
func Ready(s *Slice) []Task {
	var out []Task
	for _, tk := range s.Tasks {
		if tk.Status != TaskDone && tk.Status != TaskClaimed && taskBlocker(s, &tk) == "" {
			out = append(out, tk)
		}
	}
	return out
}

// taskBlocker says why tk may not start yet, or "" if it may.
func taskBlocker(s *Slice, tk *Task) string {
	var open []string
	for _, o := range s.Tasks {
		if o.Wave < tk.Wave && o.Status != TaskDone {
			open = append(open, o.ID)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("task %s is in wave %d; earlier waves have open tasks %s", tk.ID, tk.Wave, strings.Join(open, ", "))
	}
	for _, d := range tk.DependsOn {
		if dt := findTask(s, d); dt == nil || dt.Status != TaskDone {
			open = append(open, d)
		}
	}
	if len(open) > 0 {
		return fmt.Sprintf("task %s waits for %s", tk.ID, strings.Join(open, ", "))
	}
	return ""
}

// CompleteTask marks a ready task done.
type CompleteTask struct {
	Slice string
	ID    string
	Agent string
}

// Actor is the agent that did the task.
func (o CompleteTask) Actor() string { return orDefault(o.Agent, "implementation") }

func (o CompleteTask) apply(t *tx) error {
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if err := t.checkLock(s, o.Actor()); err != nil {
		return err
	}
	if s.Status == Blocked {
		return t.haltedError(s, o.Actor())
	}
	tk := findTask(s, o.ID)
	if tk == nil {
		return reason.New(reason.NotFound, "slice %s has no task %s", s.SliceID, o.ID)
	}
	if tk.Status == TaskDone {
		return reason.New(reason.InvalidTransition, "task %s of %s is already done", o.ID, s.SliceID)
	}
	if err := claimedByOther(s, tk, o.Actor()); err != nil {
		return err
	}
	if why := taskBlocker(s, tk); why != "" {
		return reason.New(reason.InvalidTransition, "%s", why)
	}
	tk.Status, tk.Agent, tk.CompletedAt = TaskDone, o.Agent, t.ts
	t.touch(s)
	t.event("task_done", s.SliceID, o.Agent, map[string]any{"task": o.ID, "wave": tk.Wave})
	t.summary("task %s of %s done", o.ID, s.SliceID)
	return nil
}

// ---- Review markers ------------------------------------------------------

// ClearReview clears NEEDS_HUMAN_REVIEW markers (of a slice, or of the
// project context when Slice is "") after a human checked them.
type ClearReview struct {
	Slice     string
	Role      string
	By        string
	Rationale string
	// Hashes are the artifacts' hashes as the human accepted them.
	Hashes map[string]string
}

// Actor is the reviewing role.
func (o ClearReview) Actor() string { return o.Role }

func (o ClearReview) apply(t *tx) error {
	if err := t.needRole(o.Role); err != nil {
		return err
	}
	if strings.TrimSpace(o.Rationale) == "" {
		return reason.New(reason.InvalidInput, "a review needs a rationale")
	}
	if o.Slice == "" {
		if len(t.m.ProjectContext.NeedsHumanReview) == 0 {
			return reason.New(reason.InvalidTransition, "the project context has nothing marked %s", NeedsHumanReview)
		}
		t.event("review_cleared", "", "", map[string]any{"role": o.Role, "fields": t.m.ProjectContext.NeedsHumanReview, "rationale": o.Rationale})
		t.m.ProjectContext.NeedsHumanReview = nil
		t.summary("%s reviewed the project context", o.Role)
		return nil
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if len(s.NeedsHumanReview) == 0 {
		return reason.New(reason.InvalidTransition, "slice %s has nothing marked %s", s.SliceID, NeedsHumanReview)
	}
	if s.Status == NeedsHumanReview {
		return reason.New(reason.InvalidTransition, "slice %s has status %s: set its status first", s.SliceID, NeedsHumanReview)
	}
	t.clearReview(s, o.Role, o.Rationale, o.Hashes)
	return nil
}

func (t *tx) clearReview(s *Slice, role, rationale string, hashes map[string]string) {
	t.event("review_cleared", s.SliceID, "", map[string]any{"role": role, "fields": s.NeedsHumanReview, "rationale": rationale})
	s.NeedsHumanReview = nil
	t.recordHashes(s, hashes)
	t.touch(s)
	t.summary("%s reviewed slice %s", role, s.SliceID)
}

// recordHashes stores the given hashes for the paths the slice names.
func (t *tx) recordHashes(s *Slice, hashes map[string]string) {
	named := s.Artifacts()
	for p, h := range hashes {
		if _, ok := slices.BinarySearch(named, p); ok && hashRE().MatchString(h) {
			if s.ArtifactHashes == nil {
				s.ArtifactHashes = map[string]string{}
			}
			s.ArtifactHashes[p] = h
		}
	}
}

// ---- Assumptions ---------------------------------------------------------

// CorrectAssumption is a PO/TL correcting one of the Discovery Agent's
// assumptions (assumptions-first discovery: humans intervene only where an
// assumption is wrong).
type CorrectAssumption struct {
	Slice      string
	Index      int // 1-based, as `slice show` numbers them
	Role       string
	Correction string
}

// Actor is the correcting role.
func (o CorrectAssumption) Actor() string { return o.Role }

func (o CorrectAssumption) apply(t *tx) error {
	if err := t.needRole(o.Role); err != nil {
		return err
	}
	if strings.TrimSpace(o.Correction) == "" {
		return reason.New(reason.InvalidInput, "a correction needs the right assumption")
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if o.Index < 1 || o.Index > len(s.Assumptions) {
		return reason.New(reason.NotFound, "slice %s has no assumption %d (it has %d)", s.SliceID, o.Index, len(s.Assumptions))
	}
	a := &s.Assumptions[o.Index-1]
	a.Status, a.Correction, a.CorrectedBy = AssumptionCorrected, o.Correction, o.Role
	t.touch(s)
	t.event("assumption_corrected", s.SliceID, "", map[string]any{"index": o.Index, "role": o.Role})
	t.summary("%s corrected assumption %d of %s", o.Role, o.Index, s.SliceID)
	return nil
}
