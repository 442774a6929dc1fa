package asdd

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// EscalationDir is where escalation notices are written.
const EscalationDir = ".asdd/escalations"

// haltSpec describes one halt.
type haltSpec struct {
	mode, agent, phase, reason, action string
	route                              Routing
	score, minimum, ccs                *float64
	uncertainty                        []string
	conflict                           []ConflictDiff
	halted                             map[string]string // name -> path, not accepted
	marks                              map[string]string // path -> hash before marking
	marker                             string
	resume                             string
	arts                               []string // artifacts to list in the notice
	allArtifacts                       bool     // list every artifact of the slice with its hash
	findings                           []string // further violations of the halting proposal
}

// halt blocks slice s: LKG rollback and the block record of seed 000,
// downstream agents paused, an escalation with its notice and failure-log
// row, and the halted artifacts marked.
func (t *tx) halt(s *Slice, h haltSpec) {
	if h.marker == "" {
		h.marker = DefaultMarker
	}
	s.Status = Blocked
	s.BlockedAtPhase = h.phase
	s.LKGPhase = Previous(h.phase)
	if h.phase == QuickFix {
		s.LKGPhase = QuickFix // a quick fix has no earlier phase
	}
	s.BlockReason = h.reason
	s.UncertaintyFactors = slices.Clone(h.uncertainty)
	s.RollbackTimestamp = t.ts
	s.FailureMode = h.mode
	s.HaltedAgent = h.agent
	s.ActionRequired = h.action
	s.PausedAgents = t.pausedBy(h.agent, h.phase)
	t.setPaused(s, true)
	s.HaltedArtifacts = h.halted
	if len(s.HaltedArtifacts) == 0 {
		s.HaltedArtifacts = nil
	}
	s.ResumePhase = h.resume
	s.SignOffsRequired = slices.Clone(h.route.SignOff)
	s.SignOffs = nil
	id := fmt.Sprintf("ESC-%s-r%d", s.SliceID, t.rev)
	s.EscalationID = id
	blocker, _ := json.Marshal(fmt.Sprintf("%s: %s (%s)", ModeLabel(h.mode), h.reason, id))
	s.Blockers = append(s.Blockers, blocker)

	arts := slices.Clone(h.arts)
	for _, p := range h.halted {
		arts = append(arts, p)
	}
	slices.Sort(arts)
	arts = slices.Compact(arts)
	e := Escalation{
		ID: id, Path: EscalationDir + "/" + id + ".md", FailureMode: h.mode, Agent: h.agent, Phase: h.phase,
		Score: h.score, Reason: h.reason, Action: h.action, RouteTo: slices.Clone(h.route.RouteTo), Artifacts: arts,
		Uncertainty: slices.Clone(h.uncertainty), Conflict: h.conflict, RaisedAt: t.ts, Status: EscalationOpen,
		Findings: slices.Clone(h.findings),
	}
	if h.allArtifacts {
		e.ArtifactHashes = map[string]string{}
		for _, p := range s.Artifacts() {
			if hs := s.ArtifactHashes[p]; hs != "" {
				e.ArtifactHashes[p] = hs
			}
		}
		e.Artifacts = s.Artifacts()
	}
	if h.ccs != nil {
		v := *h.ccs
		e.CCS = &v
	} else if v, ok := ComputeCCS(s.ConfidenceChain, t.cfg); ok {
		e.CCS = &v
	}
	s.Escalations = append(s.Escalations, e)
	t.touch(s)

	for _, path := range slices.Sorted(maps.Keys(h.marks)) {
		t.out.Effects = append(t.out.Effects, Effect{Kind: EffectMarkArtifact, Path: path, Marker: h.marker})
	}
	t.out.Effects = append(t.out.Effects, EscalationEffects(s, &s.Escalations[len(s.Escalations)-1])...)
	t.event("slice_halted", s.SliceID, h.agent, map[string]any{
		"failure_mode": h.mode, "blocked_at_phase": h.phase, "lkg_phase": s.LKGPhase, "escalation": id, "reason": h.reason,
	})
	t.summary("%s halted: %s (%s)", s.SliceID, ModeLabel(h.mode), h.reason)
}

// setPaused marks the heartbeats of the slice's paused agents that are
// working on it PAUSED (on a halt), or IDLE again (when it lifts).
func (t *tx) setPaused(s *Slice, paused bool) {
	for _, a := range s.PausedAgents {
		key := HeartbeatKey(a)
		h := t.m.AgentHeartbeats[key]
		if h == nil || h.CurrentSlice != s.SliceID {
			continue
		}
		switch {
		case paused && h.Status == HeartbeatActive:
			t.heartbeat(key, false).Status = HeartbeatPaused
		case !paused && h.Status == HeartbeatPaused:
			t.heartbeat(key, false).Status = HeartbeatIdle
		}
	}
}

// pausedBy lists the agents downstream of a halt: after the halting agent in
// pipeline order, or, with no agent, those working in later phases.
func (t *tx) pausedBy(agent, phase string) []string {
	if agent != "" {
		return t.cfg.Downstream(agent)
	}
	var out []string
	pi := PhaseIndex(phase)
	for _, a := range t.cfg.Agents {
		if slices.Contains(a.Phases, "*") {
			continue
		}
		if slices.ContainsFunc(a.Phases, func(p string) bool { return PhaseIndex(p) >= pi }) {
			out = append(out, a.Name)
		}
	}
	return out
}

// Resolution actions (seed 004, rollback procedure step 4).
const (
	// ActionRerun approves a revised run of the halted agent: the slice
	// returns to the phase it was halted in.
	ActionRerun = "rerun"
	// ActionResume resolves the halt manually: the halted output is
	// accepted as it is and the slice goes on as the proposal would have.
	ActionResume = "resume"
	// ActionReturn returns the slice to an earlier phase.
	ActionReturn = "return"
)

// Resolve is a human's decision on a halted slice, by a named role with a
// rationale: the only way out of a halt. When the halt needs several roles'
// sign-off (Security: TL + Security) it lifts at the last one.
type Resolve struct {
	Slice     string `json:"slice,omitempty"`
	Role      string `json:"role,omitempty"`
	By        string `json:"by,omitempty"` // the person, optional
	Rationale string `json:"rationale,omitempty"`
	Action    string `json:"action,omitempty"`    // rerun (default), resume, return
	ReturnTo  string `json:"return_to,omitempty"` // with return
	RootCause string `json:"root_cause,omitempty"`
	// Hashes are the current hashes of the slice's artifacts as the human
	// accepted them (files edited while resolving are not drift).
	Hashes map[string]string `json:"hashes,omitempty"`
	// Favour arbitrates a conflict (with resume): the agent whose whole
	// proposal is applied — the halted one (the default) or the one whose
	// committed change it conflicted with.
	Favour string `json:"favour,omitempty"`
}

// Actor is the resolving role.
func (o Resolve) Actor() string { return o.Role }

func (o Resolve) apply(t *tx) error {
	if err := t.needRole(o.Role); err != nil {
		return err
	}
	if strings.TrimSpace(o.Rationale) == "" {
		return reason.New(reason.InvalidInput, "a resolution needs a rationale")
	}
	action := orDefault(o.Action, ActionRerun)
	switch action {
	case ActionRerun, ActionResume:
		if o.ReturnTo != "" {
			return reason.New(reason.InvalidInput, "a phase to return to goes with the return action only")
		}
	case ActionReturn:
		if !IsPhase(o.ReturnTo) && o.ReturnTo != BehaviorCapture {
			return reason.New(reason.InvalidInput, "return needs a lifecycle phase, not %q", o.ReturnTo)
		}
	default:
		return reason.New(reason.InvalidInput, "unknown resolution %q (rerun, resume, return)", action)
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if s.Status != Blocked {
		return reason.New(reason.InvalidTransition, "slice %s is not halted (status %s)", s.SliceID, s.Status)
	}
	if o.Favour != "" {
		if action != ActionResume || s.FailureMode != ModeConflict {
			return reason.New(reason.InvalidInput, "--favour arbitrates a conflict: it goes with --action resume on a slice halted for conflicting agent outputs")
		}
		if sides := conflictSides(s); !slices.Contains(sides, o.Favour) {
			return reason.New(reason.InvalidInput, "the conflict on slice %s is between %s, not %s", s.SliceID, strings.Join(sides, " and "), o.Favour)
		}
	}
	if action == ActionReturn {
		if PhaseIndex(o.ReturnTo) > PhaseIndex(s.BlockedAtPhase) || o.ReturnTo == Done {
			return reason.New(reason.InvalidTransition, "slice %s was halted at %s; it can return only to that phase or an earlier one, not %s", s.SliceID, s.BlockedAtPhase, o.ReturnTo)
		}
		retro := s.Type == TypeRetroSpec
		if (retro && (o.ReturnTo == Discovery || o.ReturnTo == Spec)) || (!retro && o.ReturnTo == BehaviorCapture) {
			return reason.New(reason.InvalidTransition, "slice %s (%s) has no phase %s", s.SliceID, orDefault(s.Type, TypeFeature), o.ReturnTo)
		}
	}
	if len(s.SignOffsRequired) == 0 { // a block record written by hand or by a rebuild
		s.SignOffsRequired = slices.Clone(t.cfg.Escalation.SignOff)
	}
	allowed := append(slices.Clone(s.SignOffsRequired), routeOf(s)...)
	if !slices.Contains(allowed, o.Role) {
		return reason.New(reason.InvalidTransition, "slice %s's halt is for %s to resolve, not %s", s.SliceID, strings.Join(s.SignOffsRequired, " + "), o.Role)
	}
	s.SignOffs = slices.DeleteFunc(s.SignOffs, func(x SignOff) bool { return x.Role == o.Role })
	s.SignOffs = append(s.SignOffs, SignOff{Role: o.Role, By: o.By, At: t.ts, Rationale: o.Rationale, Action: action})
	var missing []string
	for _, r := range s.SignOffsRequired {
		if !slices.ContainsFunc(s.SignOffs, func(x SignOff) bool { return x.Role == r }) {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		t.touch(s)
		t.event("sign_off_recorded", s.SliceID, "", map[string]any{"role": o.Role, "awaiting": missing})
		t.summary("%s signed off %s; awaiting %s", o.Role, s.SliceID, strings.Join(missing, ", "))
		return nil
	}
	t.lift(s, o, action)
	return nil
}

func routeOf(s *Slice) []string {
	if e := s.OpenEscalation(); e != nil {
		return e.RouteTo
	}
	return nil
}

// lift ends the halt of s as decided.
func (t *tx) lift(s *Slice, o Resolve, action string) {
	var roles []string
	for _, so := range s.SignOffs {
		roles = append(roles, so.Role)
	}
	resolvedBy := strings.Join(roles, " + ")
	if o.By != "" {
		resolvedBy += " (" + o.By + ")"
	}
	var resolution string
	switch action {
	case ActionRerun:
		s.Status = s.BlockedAtPhase
		if s.FailureMode == ModeRefinementLoop && s.HaltedAgent != "" {
			delete(s.Attempts, s.HaltedAgent+":"+s.BlockedAtPhase)
		}
		resolution = fmt.Sprintf("revised run of %s approved", orDefault(s.HaltedAgent, "the agent"))
	case ActionResume:
		if s.FailureMode == ModeConflict {
			resolution = t.arbitrate(s, o, resolvedBy)
			break
		}
		for i := len(s.ConfidenceChain) - 1; i >= 0; i-- {
			if e := &s.ConfidenceChain[i]; e.Outcome == OutcomeHalted && e.Agent == s.HaltedAgent {
				e.Outcome = OutcomeAccepted
				break
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.HaltedArtifacts)) {
			if s.PhaseData == nil {
				s.PhaseData = map[string]string{}
			}
			s.PhaseData[name] = s.HaltedArtifacts[name]
		}
		s.Status = orDefault(s.ResumePhase, s.BlockedAtPhase)
		resolution = "resolved manually: halted output accepted"
	case ActionReturn:
		pi := PhaseIndex(o.ReturnTo)
		for i := range s.ConfidenceChain {
			e := &s.ConfidenceChain[i]
			if live(*e) && PhaseIndex(e.Phase) >= pi {
				e.Outcome = OutcomeSuperseded
			}
		}
		for k := range s.Attempts {
			if _, ph, _ := strings.Cut(k, ":"); PhaseIndex(ph) >= pi {
				delete(s.Attempts, k)
			}
		}
		s.Status = o.ReturnTo
		resolution = "returned to " + o.ReturnTo
	}
	s.HaltedArtifacts = nil // resumed ones are named by phase_data now
	t.recordHashes(s, o.Hashes)
	if s.Lock != nil && s.Lock.Escalation != "" && s.Lock.Escalation == s.EscalationID {
		t.event("unlocked", s.SliceID, "", map[string]any{"holder": s.Lock.Holder, "escalation": s.Lock.Escalation})
		s.Lock = nil // the conflict lock lifts with the conflict
	}

	if e := s.OpenEscalation(); e != nil {
		t.decideSteering(s, e.ID, action, resolvedBy)
		e.Status = EscalationResolved
		e.ResolvedAt = t.ts
		e.ResolvedBy = resolvedBy
		e.Resolution = resolution
		e.Rationale = o.Rationale
		e.RootCause = orDefault(o.RootCause, e.RootCause)
		if raised, ok := ParseTimestamp(e.RaisedAt); ok {
			// Never negative: a clock stepped back since the halt.
			e.TimeToResolve = max(t.now.Sub(raised), 0).Round(time.Second).String()
		}
		t.out.Effects = append(t.out.Effects, EscalationEffects(s, e)...)
		blocker := fmt.Sprintf("(%s)", e.ID)
		s.Blockers = slices.DeleteFunc(s.Blockers, func(b json.RawMessage) bool {
			var str string
			return json.Unmarshal(b, &str) == nil && strings.HasSuffix(str, blocker)
		})
	}
	t.setPaused(s, false)
	mode, at := s.FailureMode, s.BlockedAtPhase
	s.BlockedAtPhase, s.LKGPhase, s.BlockReason, s.RollbackTimestamp = "", "", "", ""
	s.FailureMode, s.HaltedAgent, s.ActionRequired, s.PausedAgents = "", "", "", nil
	s.ResumePhase, s.SignOffsRequired, s.SignOffs, s.EscalationID = "", nil, nil, ""
	s.FeatureBranch, s.ReviewRequired = "", ""
	t.touch(s)
	t.event("slice_resolved", s.SliceID, "", map[string]any{
		"action": action, "by": resolvedBy, "failure_mode": mode, "blocked_at_phase": at, "status": s.Status, "rationale": o.Rationale,
	})
	t.summary("%s resolved by %s: %s; now %s", s.SliceID, resolvedBy, resolution, s.Status)
}

// Approve is a named role's sign-off on a slice: it clears
// NEEDS_HUMAN_REVIEW markers and, on a halted slice, accepts the halted
// output (a manual resolution, as Resolve with ActionResume).
type Approve struct {
	Slice     string            `json:"slice,omitempty"`
	Role      string            `json:"role,omitempty"`
	By        string            `json:"by,omitempty"`
	Rationale string            `json:"rationale,omitempty"`
	RootCause string            `json:"root_cause,omitempty"`
	Hashes    map[string]string `json:"hashes,omitempty"`
}

// Actor is the approving role.
func (o Approve) Actor() string { return o.Role }

func (o Approve) apply(t *tx) error {
	if err := t.needRole(o.Role); err != nil {
		return err
	}
	if strings.TrimSpace(o.Rationale) == "" {
		return reason.New(reason.InvalidInput, "an approval needs a rationale")
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	did := false
	if len(s.NeedsHumanReview) > 0 && s.Status != NeedsHumanReview {
		t.clearReview(s, o.Role, o.Rationale, o.Hashes)
		did = true
	}
	if s.Status == Blocked {
		r := Resolve{Slice: o.Slice, Role: o.Role, By: o.By, Rationale: o.Rationale, Action: ActionResume, RootCause: o.RootCause, Hashes: o.Hashes}
		if err := r.apply(t); err != nil {
			return err
		}
		did = true
	}
	if !did {
		return reason.New(reason.InvalidTransition, "slice %s has nothing awaiting approval (status %s)", s.SliceID, s.Status)
	}
	return nil
}

// FlagDrift halts a slice whose artifacts changed on disk without a
// manifest update (seed 000, state drift detection). Paths maps each
// drifted path to its hash on disk now.
type FlagDrift struct {
	Slice string            `json:"slice,omitempty"`
	Paths map[string]string `json:"paths,omitempty"`
}

// Actor is the custodian's own check.
func (FlagDrift) Actor() string { return "custodian" }

func (o FlagDrift) apply(t *tx) error {
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if len(o.Paths) == 0 {
		return reason.New(reason.InvalidInput, "no drifted paths given")
	}
	if s.Status == Blocked {
		return t.haltedError(s, "")
	}
	named := s.Artifacts()
	paths := slices.Sorted(maps.Keys(o.Paths))
	for _, p := range paths {
		if _, ok := slices.BinarySearch(named, p); !ok {
			return reason.New(reason.InvalidInput, "slice %s does not name %s", s.SliceID, p)
		}
	}
	t.halt(s, haltSpec{
		mode: ModeDrift, phase: s.Status,
		reason: fmt.Sprintf("%s changed on disk without a manifest update", strings.Join(paths, ", ")),
		action: "Re-propose the changed artifacts or approve them as they are", route: t.cfg.Escalation, arts: paths,
	})
	t.out.Verdict = reason.New(reason.StateDrift, "slice %s halted: %s changed without a manifest update", s.SliceID, strings.Join(paths, ", "))
	return nil
}

// conflictSides returns the two agents of a conflict halt: the halted one
// first, then those whose committed changes it conflicted with.
func conflictSides(s *Slice) []string {
	sides := []string{s.HaltedAgent}
	if e := s.OpenEscalation(); e != nil {
		for _, c := range e.Conflict {
			if !slices.Contains(sides, c.Theirs.Agent) {
				sides = append(sides, c.Theirs.Agent)
			}
		}
	}
	return sides
}

// arbitrate settles a conflict halt in favour of one agent (seed 004:
// "Tech Lead arbitrates; decision logged in manifest"). In favour of the
// halted agent its whole proposal is applied — chain entry, every
// artifact — and the slice moves on as that proposal would have; in favour
// of the other, its committed change stands, the halted proposal is
// superseded and the slice goes back to the phase it was halted in. The
// decision goes on the escalation and a dissent notice for the overruled
// agent, with both sides' values.
func (t *tx) arbitrate(s *Slice, o Resolve, by string) string {
	sides := conflictSides(s)
	favoured := orDefault(o.Favour, s.HaltedAgent)
	overruled := sides[0]
	if favoured == sides[0] && len(sides) > 1 {
		overruled = sides[1]
	}
	e := s.OpenEscalation()
	var conflict []ConflictDiff
	if e != nil {
		conflict = e.Conflict
	}
	var fields []string
	for _, c := range conflict {
		fields = append(fields, c.Field)
	}
	halted := -1
	for i := len(s.ConfidenceChain) - 1; i >= 0; i-- {
		if e := s.ConfidenceChain[i]; e.Outcome == OutcomeHalted && e.Agent == s.HaltedAgent {
			halted = i
			break
		}
	}
	if favoured == s.HaltedAgent {
		if halted >= 0 {
			s.ConfidenceChain[halted].Outcome = OutcomeAccepted
		}
		if s.PhaseData == nil {
			s.PhaseData = map[string]string{}
		}
		for _, name := range slices.Sorted(maps.Keys(s.HaltedArtifacts)) {
			s.PhaseData[name] = s.HaltedArtifacts[name]
		}
		for _, c := range conflict {
			if c.Ours.Hash != "" {
				if s.ArtifactHashes == nil {
					s.ArtifactHashes = map[string]string{}
				}
				s.ArtifactHashes[c.Ours.Value] = c.Ours.Hash
			}
		}
		s.Status = orDefault(s.ResumePhase, s.BlockedAtPhase)
	} else {
		if halted >= 0 {
			s.ConfidenceChain[halted].Outcome = OutcomeSuperseded
		}
		s.Status = s.BlockedAtPhase
	}
	for _, c := range conflict {
		ours, theirs := c.Ours, c.Theirs
		winner, loser := theirs, ours
		if favoured == ours.Agent {
			winner, loser = ours, theirs
		}
		notice := map[string]any{
			"agent": loser.Agent, "field": c.Field, "overruled_by": winner.Agent, "rule": "arbitration",
			"arbitrated_by": by, "rationale": o.Rationale, "favoured_value": winner.Value, "favoured_hash": winner.Hash,
			"overruled_value": loser.Value, "overruled_hash": loser.Hash, "timestamp": t.ts, "revision": t.rev,
		}
		raw, _ := marshalCompact(notice)
		s.DissentNotices = append(s.DissentNotices, raw)
	}
	if e != nil {
		e.Arbitration = &Arbitration{Favoured: favoured, Overruled: overruled, Fields: fields, By: by, At: t.ts}
	}
	t.event("conflict_arbitrated", s.SliceID, favoured, map[string]any{"favoured": favoured, "overruled": overruled, "fields": fields, "by": by})
	if favoured == s.HaltedAgent {
		return fmt.Sprintf("arbitrated in favour of %s over %s on %s: %s's whole proposal applied", favoured, overruled, strings.Join(fields, ", "), favoured)
	}
	return fmt.Sprintf("arbitrated in favour of %s over %s on %s: %s's committed change stands, %s re-runs", favoured, overruled, strings.Join(fields, ", "), favoured, overruled)
}
