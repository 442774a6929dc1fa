package asdd

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

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
}

// own returns slice i of the next manifest, copied first if it is still
// shared with the input.
func (t *tx) own(i int) *Slice {
	s := t.m.Slices[i]
	if !t.owned[s] {
		s = deepCopy(reflect.ValueOf(s)).Interface().(*Slice)
		t.m.Slices[i] = s
		t.owned[s] = true
	}
	return s
}

// find returns the slice with the given id, owned by this transaction, or
// a NOT_FOUND error.
func (t *tx) find(id string) (*Slice, error) {
	for i, s := range t.m.Slices {
		if s.SliceID == id {
			return t.own(i), nil
		}
	}
	return nil, reason.New(reason.NotFound, "no slice %q in the manifest", id)
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
		h = deepCopy(reflect.ValueOf(h)).Interface().(*Heartbeat)
	}
	t.ownedHB[h] = true
	t.m.AgentHeartbeats[key] = h
	return h
}

// Apply runs op on a copy of m (nil: an empty manifest) under cfg at time
// now. It returns the outcome, or a *reason.Error rejection with m
// untouched. Apply is pure: no I/O, no clock but now.
func Apply(m *Manifest, op Op, cfg *Config, now time.Time) (*Outcome, error) {
	return apply(m, op, cfg, now, false)
}

// ApplyFinalized is Apply for a manifest that Apply (or ApplyFinalized)
// produced under the same cfg, and that nobody changed since — the
// daemon's latest manifest: every slice it did not touch is already
// finalized (CCS, stale artifact hashes), so only the slices the operation
// touches are finalized again, and the cost does not grow with the number
// of slices. On any other manifest use Apply.
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
	// Copy on write: the slices and heartbeats an operation changes are
	// copied when it first touches them (t.find, t.own, t.heartbeat); the
	// rest is shared with m, which is never changed.
	next := &Manifest{
		ProjectContext:  deepCopy(reflect.ValueOf(m.ProjectContext)).Interface().(ProjectContext),
		Slices:          slices.Clone(m.Slices),
		AgentHeartbeats: maps.Clone(m.AgentHeartbeats),
		Revision:        m.Revision,
		Extra:           m.Extra,
	}
	if next.Slices == nil {
		next.Slices = []*Slice{}
	}
	if next.AgentHeartbeats == nil {
		next.AgentHeartbeats = map[string]*Heartbeat{}
	}
	now = now.UTC()
	t := &tx{m: next, cfg: cfg, now: now, ts: Timestamp(now), rev: next.Revision + 1, out: &Outcome{},
		owned: map[*Slice]bool{}, ownedHB: map[*Heartbeat]bool{}, in: m.Slices}
	t.expireLocks()
	if err := op.apply(t); err != nil {
		return nil, err
	}
	next.Revision = t.rev
	t.finalize(finalized)
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

// expireLocks frees every lease past its expiry.
func (t *tx) expireLocks() {
	for i, s := range t.m.Slices {
		if s.Lock != nil && lockExpired(s.Lock, t.now) {
			s = t.own(i)
			t.event("lock_expired", s.SliceID, "", map[string]any{"holder": s.Lock.Holder, "expired": s.Lock.Expires})
			s.Lock = nil
		}
	}
}

func lockExpired(l *Lock, now time.Time) bool {
	exp, ok := ParseTimestamp(l.Expires)
	return ok && !now.Before(exp)
}

// finalize recomputes what is derived: every CCS, the global score, and
// drops hashes of paths no slice names any more.
func (t *tx) finalize(onlyOwned bool) {
	for i, s := range t.m.Slices {
		if onlyOwned && i < len(t.in) && t.in[i] == s {
			continue // untouched: finalized when it was made
		}
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
	}
	if g, ok := GlobalConfidence(t.m); ok {
		g = round4(g)
		t.m.ProjectContext.GlobalConfidenceScore = &g
	} else {
		t.m.ProjectContext.GlobalConfidenceScore = nil
	}
}

func (t *tx) touch(s *Slice) { s.UpdatedAt = t.ts }

var (
	sliceIDRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	artNameRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	hashRE     = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	taskIDRE   = sliceIDRE
	statusWord = regexp.MustCompile(`^[A-Z][A-Z_]{0,31}$`)
)

// CleanPath checks that p is a project-relative artifact path: not empty,
// not absolute, no "..", no backslashes, already clean. Symlink escapes are
// the I/O layer's to refuse (os.Root).
func CleanPath(p string) error {
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
	if strings.HasPrefix(p, ".asdd/state/") {
		return reason.New(reason.InvalidInput, "artifact path %q is inside the custodian's state directory", p)
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

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func (o AddSlice) apply(t *tx) error {
	if !sliceIDRE.MatchString(o.ID) {
		return reason.New(reason.InvalidInput, "slice id %q is not valid (letters, digits, '.', '_', '-'; at most 128)", o.ID)
	}
	if t.m.Slice(o.ID) != nil {
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
		if !statusWord.MatchString(typ) {
			return reason.New(reason.InvalidInput, "slice type %q is not valid (FEATURE or RETRO_SPEC)", typ)
		}
	}
	gov := orDefault(o.GovernanceMode, "MANUAL")
	if !statusWord.MatchString(gov) {
		return reason.New(reason.InvalidInput, "governance mode %q is not valid (such as MANUAL)", gov)
	}
	s := newSlice(o.ID, o.Name, typ, status, gov, t.ts)
	if typ == TypeRetroSpec {
		zero := func() *int { v := 0; return &v }
		s.RequirementsValidated, s.RequirementsCorrected, s.RequirementsMissing = zero(), zero(), zero()
		s.ValidationStatus = "PENDING"
	}
	t.m.Slices = append(t.m.Slices, s)
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
			if t.m.Slice(id) == nil {
				break
			}
		}
	}
	if !sliceIDRE.MatchString(id) {
		return reason.New(reason.InvalidInput, "slice id %q is not valid", id)
	}
	if t.m.Slice(id) != nil {
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
		recordArtifact(s, a)
	}
	t.m.Slices = append(t.m.Slices, s)
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
	if !statusWord.MatchString(status) {
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
		if _, err := t.find(o.Slice); err != nil {
			return err
		}
	}
	key := HeartbeatKey(a.Name)
	h := t.heartbeat(key, true)
	h.LastExecution, h.Status, h.CurrentSlice = t.ts, status, o.Slice
	h.CurrentWave, h.TasksCompleted, h.TasksRemaining = cloneInt(o.Wave), cloneInt(o.Completed), cloneInt(o.Remaining)
	h.RetryRequestedAt, h.EscalatedAt = "", ""
	t.event("heartbeat", o.Slice, a.Name, map[string]any{"status": status})
	t.summary("heartbeat from %s (%s)", key, status)
	return nil
}

func cloneInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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
	if !taskIDRE.MatchString(o.ID) {
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

// Ready returns the tasks that may start now: pending, every dependency
// done, and every task of every earlier wave done (wave N starts only after
// wave N-1 is complete).
func Ready(s *Slice) []Task {
	var out []Task
	for _, tk := range s.Tasks {
		if tk.Status != TaskDone && taskBlocker(s, &tk) == "" {
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
		if _, ok := slices.BinarySearch(named, p); ok && hashRE.MatchString(h) {
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
