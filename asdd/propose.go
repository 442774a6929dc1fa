package asdd

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// Artifact is one file a proposal names.
type Artifact struct {
	Name string `json:"name"` // phase_data key: intent, requirements, design…
	Path string `json:"path"` // relative to the project root
	// SHA256 is "sha256:<hex>" of the file's content. The custodian
	// hashes the file itself: what a caller sends here is ignored.
	SHA256 string `json:"sha256,omitempty"`
	// MarkedSHA256 is the hash the file will have once marked with the
	// agent's halt marker (see MarkContent); recorded if the proposal halts.
	MarkedSHA256 string `json:"marked_sha256,omitempty"`
	// UnmarkedSHA256, set only when the file begins with the agent's halt
	// marker (a halt marked it), is the hash it will have once the marker
	// is taken away: if the proposal is accepted, the marker goes and
	// this hash is recorded.
	UnmarkedSHA256 string `json:"unmarked_sha256,omitempty"`
}

// NamedArtifacts are the artifacts a door names as NAME -> PATH, in name
// order, their paths slash-separated.
func NamedArtifacts(paths map[string]string) []Artifact {
	var out []Artifact
	for _, name := range slices.Sorted(maps.Keys(paths)) {
		out = append(out, Artifact{Name: name, Path: filepath.ToSlash(paths[name])})
	}
	return out
}

// TraceFile is the reasoning trace a door names (nil for "").
func TraceFile(path string) *Artifact {
	if path == "" {
		return nil
	}
	return &Artifact{Name: "trace", Path: filepath.ToSlash(path)}
}

// Retro carries a retro-spec slice's validation counters.
type Retro struct {
	Validated *int `json:"validated,omitempty"`
	Corrected *int `json:"corrected,omitempty"`
	Missing   *int `json:"missing,omitempty"`
}

// Proposal is what an agent submits after it ran: its score, artifacts,
// uncertainty factors and reasoning trace for one slice.
type Proposal struct {
	Agent       string     `json:"agent,omitempty"`
	Slice       string     `json:"slice,omitempty"`
	Score       float64    `json:"score,omitempty"`
	Artifacts   []Artifact `json:"artifacts,omitempty"`
	Uncertainty []string   `json:"uncertainty,omitempty"`
	Trace       *Artifact  `json:"trace,omitempty"` // the reasoning trace (Name is ignored)
	// To is the status asked for; "" lets the rules decide (the next phase
	// when the agent completes the current one). PARTIAL is allowed from
	// VALIDATION, DONE from QUICK_FIX.
	To string `json:"to,omitempty"`
	// BaseRevision is the manifest revision the agent read before it ran;
	// 0 means the current one. Changes other agents committed since are
	// merged when disjoint, settled by steering precedence, or escalated.
	BaseRevision uint64 `json:"base_revision,omitempty"`
	// Observed maps artifact paths the slice names to their hash on disk
	// now ("" when missing): the consistency and drift check. nil skips it.
	Observed map[string]string `json:"observed,omitempty"`
	Retro    *Retro            `json:"retro,omitempty"`
	// Assumptions are the agent's initial assumptions (assumptions-first
	// discovery), recorded on the slice when the proposal is accepted.
	Assumptions []string `json:"assumptions,omitempty"`
	// FeatureBranch names the git branch holding the agent's work, for an
	// agent whose below_action is feature_branch: recorded in the block
	// record if the proposal halts below the minimum.
	FeatureBranch string `json:"feature_branch,omitempty"`
}

// Actor is the proposing agent.
func (p Proposal) Actor() string { return p.Agent }

// Failure modes (seed 004's table, plus drift from seed 000).
const (
	ModeBelowMinimum   = "AGENT_BELOW_MINIMUM"
	ModeLowCascade     = "LOW_CONFIDENCE_CASCADE"
	ModeCCSFloor       = "CASCADING_CONFIDENCE_FAILURE"
	ModeRefinementLoop = "INFINITE_REFINEMENT_LOOP"
	ModeConflict       = "CONFLICTING_AGENT_OUTPUTS"
	ModeDrift          = "STATE_DRIFT"
)

// ModeLabel is a failure mode as the seed's table names it.
func ModeLabel(mode string) string {
	switch mode {
	case ModeBelowMinimum:
		return "Agent below minimum confidence"
	case ModeLowCascade:
		return "Low-confidence cascade"
	case ModeCCSFloor:
		return "Cascading Confidence Failure"
	case ModeRefinementLoop:
		return "Infinite refinement loop"
	case ModeConflict:
		return "Conflicting agent outputs"
	case ModeDrift:
		return "State drift"
	case ModeAgentTimeout:
		return "Agent timeout / crash"
	case ModeHallucinatedSpec:
		return "Hallucinated spec section"
	case ModeContradictorySteering:
		return "Contradictory steering rules"
	}
	return mode
}

func checkArtifacts(arts []Artifact) error {
	names := map[string]bool{}
	for _, a := range arts {
		if !artNameRE().MatchString(a.Name) {
			return reason.New(reason.InvalidInput, "artifact name %q is not valid (lower case letters, digits, _)", a.Name)
		}
		if names[a.Name] {
			return reason.New(reason.InvalidInput, "artifact %q given twice", a.Name)
		}
		names[a.Name] = true
		if err := CleanPath(a.Path); err != nil {
			return err
		}
		if !hashRE().MatchString(a.SHA256) {
			return reason.New(reason.InvalidInput, "artifact %s: hash %q is not sha256:<64 hex>", a.Name, a.SHA256)
		}
		if a.MarkedSHA256 != "" && !hashRE().MatchString(a.MarkedSHA256) {
			return reason.New(reason.InvalidInput, "artifact %s: marked hash %q is not sha256:<64 hex>", a.Name, a.MarkedSHA256)
		}
	}
	return nil
}

func recordArtifact(s *Slice, a Artifact) {
	if s.PhaseData == nil {
		s.PhaseData = map[string]string{}
	}
	if s.ArtifactHashes == nil {
		s.ArtifactHashes = map[string]string{}
	}
	s.PhaseData[a.Name] = a.Path
	s.ArtifactHashes[a.Path] = a.SHA256
}

// acceptArtifact records an artifact its agent passed with. One that still
// begins with the agent's halt marker (a halt marked it, and the agent ran
// again without rewriting it) has the marker taken away, and the hash it
// has then is the one recorded.
func (t *tx) acceptArtifact(s *Slice, a Artifact, marker string) {
	if a.UnmarkedSHA256 != "" {
		a.SHA256 = a.UnmarkedSHA256
		t.out.Effects = append(t.out.Effects, Effect{Kind: EffectUnmarkArtifact, Path: a.Path, Marker: marker})
	}
	recordArtifact(s, a)
}

func recordTrace(s *Slice, a Artifact) {
	if !slices.Contains(s.ReasoningTraces, a.Path) {
		s.ReasoningTraces = append(s.ReasoningTraces, a.Path)
	}
	if s.ArtifactHashes == nil {
		s.ArtifactHashes = map[string]string{}
	}
	s.ArtifactHashes[a.Path] = a.SHA256
}

// haltedError is the refusal of any change to a BLOCKED slice.
func (t *tx) haltedError(s *Slice, who string) error {
	msg := fmt.Sprintf("slice %s is halted (%s at %s since %s): only `custodian resolve` or `approve` by %s lets it go on",
		s.SliceID, ModeLabel(s.FailureMode), s.BlockedAtPhase, s.RollbackTimestamp, strings.Join(s.SignOffsRequired, " + "))
	if slices.Contains(s.PausedAgents, strings.TrimSuffix(who, "_agent")) {
		msg += fmt.Sprintf("; the %s agent is paused", who)
	}
	return reason.New(reason.Halted, "%s", msg).With("failure_mode", s.FailureMode).With("escalation", s.EscalationID)
}

func (p Proposal) apply(t *tx) error {
	ag, err := p.check(t)
	if err != nil {
		return err
	}
	s, err := t.find(p.Slice)
	if err != nil {
		return err
	}
	if err := t.checkLock(s, ag.Name); err != nil {
		return err
	}
	switch s.Status {
	case Blocked:
		return t.haltedError(s, ag.Name)
	case Done:
		return reason.New(reason.InvalidTransition, "slice %s is DONE", s.SliceID)
	case NeedsHumanReview:
		return reason.New(reason.NeedsReview, "slice %s has status %s", s.SliceID, NeedsHumanReview)
	}
	// A score below the uncertainty threshold needs uncertainty factors;
	// one below the agent's minimum halts the slice all the same (seed 000:
	// a failing agent is BLOCKED and logged), the missing factors recorded
	// as a second finding.
	missing := p.missingFactors(t, ag)
	if missing != nil && !below(p.Score, minimumFor(s, ag)) {
		return missing
	}
	if s.Status == QuickFix || s.Type == TypeQuickFix {
		return t.proposeQuick(s, ag, p, missing)
	}
	since := p.changesSince(t, s, ag)
	phase, target, err := p.transition(s, ag, since)
	if err != nil {
		return err
	}
	for _, req := range ag.RequiredArtifacts {
		if !slices.ContainsFunc(p.Artifacts, func(a Artifact) bool { return a.Name == req }) && s.PhaseData[req] == "" {
			return reason.New(reason.InvalidTransition, "the %s agent must provide the %s artifact", ag.Name, req)
		}
	}
	if halted, err := p.checkDrift(t, s); halted || err != nil {
		return err
	}
	apply, halted := p.settleConflicts(t, s, ag, since, phase, target)
	if halted {
		return nil
	}

	// The confidence gates.
	minimum := minimumFor(s, ag)
	entry := p.entry(t, s, ag, phase, minimum, apply)
	if h := p.gates(t, s, ag, phase, entry); h != nil {
		if missing != nil {
			h.findings = append(h.findings, string(missing.Code)+": "+missing.Message)
		}
		p.haltOn(t, s, ag, entry, *h, target, apply)
		return nil
	}
	if missing != nil { // not reached: below the minimum always halts
		return missing
	}
	// A phase completes only once its gate agents accepted the slice (a
	// failing proposal halts above whatever the gates say).
	if target != "" && target != Partial {
		if err := t.checkGates(s, phase, t.cfg.Gates(phase), ag.Name, target); err != nil {
			return err
		}
	}

	// Accepted.
	entry.Outcome = OutcomeAccepted
	appendChain(s, entry)
	for _, a := range apply {
		t.acceptArtifact(s, a, ag.ArtifactMarker())
	}
	if p.Trace != nil {
		recordTrace(s, *p.Trace)
	}
	s.UncertaintyFactors = nil
	if p.Retro != nil {
		setRetro(s, p.Retro)
	}
	for _, a := range p.Assumptions {
		s.Assumptions = append(s.Assumptions, Assumption{Text: a, Agent: ag.Name, At: t.ts, Status: AssumptionAssumed})
	}
	t.gate(s, ag, p.Score, minimum)
	from := s.Status
	if target == Done {
		if err := unhashedArtifacts(s); err != nil {
			return err
		}
	}
	if target != "" {
		s.Status = target
	}
	t.touch(s)
	t.beat(ag.Name)
	t.event("proposal_accepted", s.SliceID, ag.Name, map[string]any{"score": p.Score, "attempt": entry.Attempt, "from": from, "to": s.Status})
	if from != s.Status {
		t.summary("%s: %s scored %s; %s → %s", s.SliceID, ag.Name, FormatScore(p.Score), from, s.Status)
	} else {
		t.summary("%s: %s scored %s in %s", s.SliceID, ag.Name, FormatScore(p.Score), from)
	}
	return nil
}

// minimumFor is the agent's minimum for the slice: its configured one, or
// the one dynamic gating raised.
func minimumFor(s *Slice, ag *Agent) float64 {
	minimum := ag.MinConfidence
	if r, ok := s.RaisedMinimums[ag.Name]; ok && r > minimum {
		minimum = r
	}
	return minimum
}

// missingFactors is the MISSING_UNCERTAINTY_FACTORS finding of a score
// below the uncertainty threshold given without factors, or nil.
func (p Proposal) missingFactors(t *tx, ag *Agent) *reason.Error {
	if !below(p.Score, t.cfg.UncertaintyThreshold) || len(p.Uncertainty) > 0 {
		return nil
	}
	return reason.New(reason.MissingUncertaintyFactors,
		"the %s agent scored %s, below %s, and gave no uncertainty factors", ag.Name, FormatScore(p.Score), FormatScore(t.cfg.UncertaintyThreshold))
}

// nextAttempt numbers the agent's next chain entry in the slice: one more
// than its latest, current or in the history.
func nextAttempt(s *Slice, agent string) int {
	attempt := 1
	for _, list := range [][]ChainEntry{s.ConfidenceChain, s.ChainHistory} {
		for _, e := range list {
			if e.Agent == agent && e.Attempt >= attempt {
				attempt = e.Attempt + 1
			}
		}
	}
	return attempt
}

// appendChain makes e the agent's current chain entry: the confidence
// chain keeps one entry per agent (seed 000 calls two an inconsistency);
// the agent's earlier entries move to the chain history, in order.
func appendChain(s *Slice, e ChainEntry) {
	keep := make([]ChainEntry, 0, len(s.ConfidenceChain)+1)
	for _, old := range s.ConfidenceChain {
		if old.Agent == e.Agent {
			s.ChainHistory = append(s.ChainHistory, old)
		} else {
			keep = append(keep, old)
		}
	}
	s.ConfidenceChain = append(keep, e)
}

// check validates the proposal's own fields and that the pipeline may run.
func (p Proposal) check(t *tx) (*Agent, error) {
	ag, err := t.agent(p.Agent)
	if err != nil {
		return nil, err
	}
	if math.IsNaN(p.Score) || p.Score < 0 || p.Score > 1 {
		return nil, reason.New(reason.InvalidInput, "score %v is outside [0, 1]", p.Score)
	}
	if err := checkArtifacts(p.Artifacts); err != nil {
		return nil, err
	}
	if p.Trace != nil {
		tr := *p.Trace
		tr.Name = "trace"
		if err := checkArtifacts([]Artifact{tr}); err != nil {
			return nil, err
		}
	}
	for _, u := range p.Uncertainty {
		if strings.TrimSpace(u) == "" {
			return nil, reason.New(reason.InvalidInput, "an uncertainty factor is empty")
		}
	}
	for _, a := range p.Assumptions {
		if strings.TrimSpace(a) == "" {
			return nil, reason.New(reason.InvalidInput, "an assumption is empty")
		}
	}
	if p.FeatureBranch != "" && !ValidBranch(p.FeatureBranch) {
		return nil, reason.New(reason.InvalidInput, "feature branch %q is not a valid branch name", p.FeatureBranch)
	}
	if p.BaseRevision > t.m.Revision {
		return nil, reason.New(reason.InvalidInput, "base revision %d is ahead of the manifest (revision %d)", p.BaseRevision, t.m.Revision)
	}
	if t.m.NeedsReview() {
		return nil, reason.New(reason.NeedsReview, "the manifest has state marked %s (rebuilt from the filesystem): a human must review it before the pipeline resumes", NeedsHumanReview)
	}
	return ag, nil
}

// changesSince returns the live chain entries other agents committed after
// the proposal's base revision (none without one).
func (p Proposal) changesSince(t *tx, s *Slice, ag *Agent) []ChainEntry {
	var since []ChainEntry
	if p.BaseRevision > 0 && p.BaseRevision < t.m.Revision {
		for _, e := range s.ConfidenceChain {
			if e.Revision > p.BaseRevision && live(e) && e.Agent != ag.Name {
				since = append(since, e)
			}
		}
	}
	return since
}

// transition returns the phase the agent worked in and the status the
// slice moves to ("" to stay). The phase is the current status or — for a
// proposal based on an older revision that another agent's commit has
// since moved on — the phase the slice had then (disjoint merge; the slice
// is not moved twice).
func (p Proposal) transition(s *Slice, ag *Agent, since []ChainEntry) (phase, target string, err error) {
	phase, stale := s.Status, false
	if !ag.Works(phase) && len(since) > 0 && ag.Works(since[0].Phase) {
		phase, stale = since[0].Phase, true
	}
	if !ag.Works(phase) {
		return "", "", reason.New(reason.InvalidTransition, "the %s agent works in %s; slice %s is in %s",
			ag.Name, strings.Join(ag.Phases, ", "), s.SliceID, s.Status)
	}
	completes := ag.CompletesPhase(phase) && !stale
	if completes {
		target = Next(phase)
	}
	if p.To == "" || p.To == target {
		return phase, target, nil
	}
	switch {
	case p.To == phase:
		return phase, "", nil
	case p.To == Partial && completes && PhaseIndex(phase) == PhaseIndex(Validation):
		return phase, Partial, nil
	case IsStatus(p.To) && PhaseIndex(p.To) > PhaseIndex(phase)+1:
		return "", "", reason.New(reason.InvalidTransition, "slice %s cannot go from %s to %s: skipping %s is allowed only for QUICK_FIX slices",
			s.SliceID, phase, p.To, Next(phase))
	}
	return "", "", reason.New(reason.InvalidTransition, "the %s agent cannot move slice %s from %s to %s", ag.Name, s.SliceID, phase, p.To)
}

// checkDrift is the consistency and drift check of the artifacts the
// slice already names (seed 000 custodial rules 1 and 3): a missing one is
// a rejection; a changed one the proposal does not re-propose halts the
// slice (halted is true).
func (p Proposal) checkDrift(t *tx, s *Slice) (halted bool, err error) {
	if p.Observed == nil {
		return false, nil
	}
	proposed := map[string]bool{}
	for _, a := range p.Artifacts {
		proposed[a.Path] = true
	}
	if p.Trace != nil {
		proposed[p.Trace.Path] = true
	}
	for _, path := range s.HaltedArtifacts {
		proposed[path] = true
	}
	var drifted []string
	for _, path := range s.Artifacts() {
		obs, seen := p.Observed[path]
		if proposed[path] || !seen {
			continue
		}
		if obs == "" {
			return false, reason.New(reason.StateInconsistency, "slice %s names %s, which does not exist", s.SliceID, path).With("path", path)
		}
		if rec := s.ArtifactHashes[path]; rec != "" && rec != obs {
			drifted = append(drifted, path)
		}
	}
	if len(drifted) == 0 {
		return false, nil
	}
	t.halt(s, haltSpec{
		mode:   ModeDrift,
		phase:  s.Status,
		reason: fmt.Sprintf("%s changed on disk without a manifest update", strings.Join(drifted, ", ")),
		action: "Re-propose the changed artifacts or approve them as they are",
		route:  t.cfg.Escalation,
		arts:   drifted,
	})
	t.out.Verdict = reason.New(reason.StateDrift, "slice %s halted: %s changed without a manifest update", s.SliceID, strings.Join(drifted, ", ")).
		With("paths", drifted).With("escalation", s.EscalationID)
	return true, nil
}

// settleConflicts compares the proposal's artifacts with what other agents
// committed since its base revision. Disjoint changes merge; an artifact
// both changed goes by the steering rules' precedence (the loser gets a
// dissent notice); without a rule the slice halts with the conflict diff.
// It returns the artifacts to apply.
func (p Proposal) settleConflicts(t *tx, s *Slice, ag *Agent, since []ChainEntry, phase, target string) (apply []Artifact, halted bool) {
	apply = slices.Clone(p.Artifacts)
	var unresolved []ConflictDiff
	for i := len(apply) - 1; i >= 0; i-- {
		c, other, ok := conflictOn(s, since, apply[i], ag.Name)
		if !ok {
			continue
		}
		rule := t.cfg.Steering.Precedence[c.Field]
		ours, theirs := slices.Index(rule, ag.Name), slices.Index(rule, other)
		switch {
		case ours >= 0 && theirs >= 0 && ours < theirs:
			t.dissent(s, other, c, ag.Name)
		case ours >= 0 && theirs >= 0:
			t.dissent(s, ag.Name, c, other)
			apply = slices.Delete(apply, i, i+1)
		default:
			unresolved = append(unresolved, c)
		}
	}
	if len(unresolved) == 0 {
		return apply, false
	}
	slices.Reverse(unresolved)
	t.beat(ag.Name)
	// The whole proposal is held for arbitration: its chain entry (halted)
	// and every artifact it would have applied, so that `resolve --action
	// resume` in its favour applies all of it.
	entry := p.entry(t, s, ag, phase, minimumFor(s, ag), apply)
	entry.Outcome = OutcomeHalted
	appendChain(s, entry)
	conflicting := map[string]bool{}
	for _, c := range unresolved {
		conflicting[c.Theirs.Value] = true
	}
	held := map[string]string{}
	for _, a := range apply {
		held[a.Name] = a.Path
		if !conflicting[a.Path] {
			if s.ArtifactHashes == nil {
				s.ArtifactHashes = map[string]string{}
			}
			s.ArtifactHashes[a.Path] = a.SHA256
		}
	}
	if p.Trace != nil {
		recordTrace(s, *p.Trace)
	}
	resume := s.Status
	if target != "" {
		resume = target
	}
	score := p.Score
	t.halt(s, haltSpec{
		mode:     ModeConflict,
		agent:    ag.Name,
		phase:    s.Status,
		reason:   fmt.Sprintf("the %s agent's proposal conflicts with concurrent changes to %s and no steering rule settles it", ag.Name, fieldsOf(unresolved)),
		action:   "Pause pipeline; log conflict; escalate to TL (arbitrate: resume --favour AGENT applies that agent's whole proposal)",
		route:    t.cfg.Escalation,
		score:    &score,
		conflict: unresolved,
		halted:   held,
		resume:   resume,
	})
	// Seed 000, conflict resolution step 1: the slice is locked, with a
	// LOCK status, timestamp and requester, until the conflict is settled.
	s.Lock = &Lock{Status: "LOCK", Holder: "knowledge", Acquired: t.ts, Requester: ag.Name, Escalation: s.EscalationID,
		Reason: fmt.Sprintf("conflicting changes to %s: awaiting arbitration", fieldsOf(unresolved))}
	t.event("locked", s.SliceID, ag.Name, map[string]any{"holder": "knowledge", "requester": ag.Name, "escalation": s.EscalationID})
	t.out.Verdict = reason.New(reason.Conflict, "slice %s halted: concurrent conflicting changes to %s escalated to %s",
		s.SliceID, fieldsOf(unresolved), strings.Join(t.cfg.Escalation.RouteTo, ", ")).With("escalation", s.EscalationID)
	return nil, true
}

// entry builds the proposal's chain entry and counts the submission for
// the refinement-loop limit.
func (p Proposal) entry(t *tx, s *Slice, ag *Agent, phase string, minimum float64, apply []Artifact) ChainEntry {
	key := ag.Name + ":" + phase
	if s.Attempts == nil {
		s.Attempts = map[string]int{}
	}
	s.Attempts[key]++
	attempt := nextAttempt(s, ag.Name)
	e := ChainEntry{
		Agent: ag.Name, Score: p.Score, Timestamp: t.ts, Attempt: attempt, Phase: phase, Revision: t.rev,
		Minimum: &minimum, BelowMinimum: below(p.Score, minimum), UncertaintyFactors: slices.Clone(p.Uncertainty),
	}
	if len(apply) > 0 {
		e.Artifacts = map[string]string{}
		for _, a := range apply {
			e.Artifacts[a.Name] = a.Path
		}
	}
	if p.Trace != nil {
		e.Trace = p.Trace.Path
	}
	return e
}

// gates returns the halt the entry triggers, in order: the refinement-loop
// limit, the agent's (raised) minimum — a low-confidence cascade when the
// agents before it were below theirs too — and the CCS floor; nil if none.
func (p Proposal) gates(t *tx, s *Slice, ag *Agent, phase string, e ChainEntry) *haltSpec {
	minimum := *e.Minimum
	if n := s.Attempts[ag.Name+":"+phase]; n >= t.cfg.RefinementLoopLimit {
		return &haltSpec{mode: ModeRefinementLoop,
			reason: fmt.Sprintf("the %s agent submitted %s of %s for the %s time", ag.Name, phase, s.SliceID, ordinal(n)),
			action: "Force-halt pipeline; escalate to TL", route: t.cfg.Escalation}
	}
	if e.BelowMinimum {
		run := map[string]bool{ag.Name: true}
		for i := len(s.ConfidenceChain) - 1; i >= 0; i-- {
			prev := s.ConfidenceChain[i]
			if !live(prev) {
				continue
			}
			if !prev.BelowMinimum {
				break
			}
			run[prev.Agent] = true
		}
		r := Routing{RouteTo: ag.RouteTo, SignOff: ag.SignOff}
		if len(run) >= t.cfg.LowConfidenceCascade {
			names := slices.Sorted(maps.Keys(run))
			return &haltSpec{mode: ModeLowCascade,
				reason: fmt.Sprintf("%d consecutive agents below threshold (%s); %s confidence %s < threshold %s",
					len(run), strings.Join(names, ", "), agentTitle(ag.Name), plain(p.Score), plain(minimum)),
				action: "Halt pipeline; full human review of phase", route: mergeRouting(r, t.cfg.Escalation)}
		}
		return &haltSpec{mode: ModeBelowMinimum,
			reason: fmt.Sprintf("%s confidence %s < threshold %s", agentTitle(ag.Name), plain(p.Score), plain(minimum)),
			action: ag.ActionIfBelow, route: r}
	}
	if t.cfg.IsCCSAgent(ag.Name) {
		chain := append(slices.Clone(s.ConfidenceChain), e)
		if ccs, ok := ComputeCCS(chain, t.cfg); ok && below(ccs, t.cfg.CCS.Floor) {
			return &haltSpec{mode: ModeCCSFloor,
				reason: fmt.Sprintf("CCS %s < floor %s after the %s agent's %s", FormatScore(ccs), plain(t.cfg.CCS.Floor), ag.Name, plain(p.Score)),
				action: "Halt pipeline; full human review of all artifacts in slice", route: t.cfg.Escalation, ccs: &ccs, allArtifacts: true}
		}
	}
	return nil
}

// haltOn records a gate's halt: the entry as halted, the proposal's
// artifacts held back and marked, the block record and escalation.
func (p Proposal) haltOn(t *tx, s *Slice, ag *Agent, e ChainEntry, h haltSpec, target string, apply []Artifact) {
	e.Outcome = OutcomeHalted
	appendChain(s, e)
	score := p.Score
	h.agent, h.phase, h.score, h.minimum = ag.Name, s.Status, &score, e.Minimum
	h.marker = ag.ArtifactMarker()
	h.uncertainty = p.Uncertainty
	h.resume = s.Status
	if target != "" {
		h.resume = target
	}
	h.halted = map[string]string{}
	h.marks = map[string]string{}
	for _, a := range apply {
		h.halted[a.Name] = a.Path
		if s.ArtifactHashes == nil {
			s.ArtifactHashes = map[string]string{}
		}
		s.ArtifactHashes[a.Path] = a.SHA256
		if a.MarkedSHA256 != "" {
			s.ArtifactHashes[a.Path] = a.MarkedSHA256
		}
		h.marks[a.Path] = a.SHA256
	}
	if p.Trace != nil {
		recordTrace(s, *p.Trace)
	}
	t.halt(s, h)
	if h.mode == ModeBelowMinimum {
		t.belowAction(s, ag, p, e)
	}
	t.beat(ag.Name)
	code := reason.BelowThreshold
	if h.mode == ModeRefinementLoop {
		code = reason.Halted
	}
	t.out.Verdict = reason.New(code, "slice %s halted (%s): %s", s.SliceID, ModeLabel(h.mode), h.reason).
		With("failure_mode", h.mode).With("escalation", s.EscalationID).With("lkg_phase", s.LKGPhase)
}

// checkGates refuses to complete phase while one of the gate agents has
// no accepted current result for the slice in that phase (seed 004: QA
// and Security before deployment; QA verifies a quick fix).
func (t *tx) checkGates(s *Slice, phase string, gates []string, proposer, target string) error {
	var missing []string
	for _, g := range gates {
		if g == proposer {
			continue
		}
		ok := slices.ContainsFunc(s.ConfidenceChain, func(e ChainEntry) bool {
			return e.Agent == g && e.Phase == phase && e.Outcome == OutcomeAccepted
		})
		if !ok {
			missing = append(missing, g)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	key := "phase_gates." + phase
	if phase == QuickFix {
		key = "quick.gates"
	}
	return reason.New(reason.GatePending, "slice %s cannot go from %s to %s before the %s agent%s accepted result%s in %s (%s in %s)",
		s.SliceID, phase, target, strings.Join(missing, " and "), plural(len(missing), "'s", "s'"), plural(len(missing), "", "s"), phase, key, ConfigPath).
		With("missing", missing).With("phase", phase)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// proposeQuick records a proposal on a QUICK_FIX slice: no phase gates,
// but the quick-mode boundary on what it touches, the agent's minimum
// (below it the slice halts, as any other), and quick.gates before DONE.
func (t *tx) proposeQuick(s *Slice, ag *Agent, p Proposal, missing *reason.Error) error {
	if p.To != "" && p.To != Done && p.To != QuickFix {
		return reason.New(reason.InvalidTransition, "a QUICK_FIX slice goes only to DONE, not %s", p.To)
	}
	if !ag.Works(QuickFix) {
		return reason.New(reason.InvalidTransition, "the %s agent works in %s, not on a QUICK_FIX slice", ag.Name, strings.Join(ag.Phases, ", "))
	}
	for _, a := range p.Artifacts {
		if err := t.cfg.Quick.Boundary.Check(a); err != nil {
			return err
		}
	}
	minimum := minimumFor(s, ag)
	entry := p.entry(t, s, ag, QuickFix, minimum, p.Artifacts)
	if h := p.gates(t, s, ag, QuickFix, entry); h != nil {
		if missing != nil {
			h.findings = append(h.findings, string(missing.Code)+": "+missing.Message)
		}
		target := ""
		if p.To == Done {
			target = Done
		}
		p.haltOn(t, s, ag, entry, *h, target, p.Artifacts)
		return nil
	}
	if missing != nil {
		return missing
	}
	if p.To == Done {
		if err := t.checkGates(s, QuickFix, t.cfg.Quick.Gates, ag.Name, Done); err != nil {
			return err
		}
	}
	entry.Outcome = OutcomeAccepted
	for _, a := range p.Artifacts {
		t.acceptArtifact(s, a, ag.ArtifactMarker())
	}
	if p.Trace != nil {
		recordTrace(s, *p.Trace)
	}
	appendChain(s, entry)
	from := s.Status
	if p.To == Done {
		if err := unhashedArtifacts(s); err != nil {
			return err
		}
		s.Status = Done
	}
	t.touch(s)
	t.beat(ag.Name)
	t.event("proposal_accepted", s.SliceID, ag.Name, map[string]any{"score": p.Score, "attempt": entry.Attempt, "from": from, "to": s.Status, "quick": true})
	if from != s.Status {
		t.summary("%s (quick fix): %s scored %s; %s → %s", s.SliceID, ag.Name, FormatScore(p.Score), from, s.Status)
	} else {
		t.summary("%s (quick fix): %s scored %s in %s", s.SliceID, ag.Name, FormatScore(p.Score), from)
	}
	return nil
}

// conflictOn reports whether artifact a, proposed by agent, conflicts with
// a change another agent committed since the proposal's base.
func conflictOn(s *Slice, since []ChainEntry, a Artifact, agent string) (ConflictDiff, string, bool) {
	for i := len(since) - 1; i >= 0; i-- {
		e := since[i]
		path, ok := e.Artifacts[a.Name]
		if !ok || e.Agent == agent {
			continue
		}
		rec := s.ArtifactHashes[path]
		if path == a.Path && rec == a.SHA256 {
			return ConflictDiff{}, "", false
		}
		return ConflictDiff{
			Field:  "phase_data." + a.Name,
			Theirs: FieldVersion{Agent: e.Agent, Value: path, Hash: rec, Revision: e.Revision},
			Ours:   FieldVersion{Agent: agent, Value: a.Path, Hash: a.SHA256},
		}, e.Agent, true
	}
	return ConflictDiff{}, "", false
}

func fieldsOf(cs []ConflictDiff) string {
	var f []string
	for _, c := range cs {
		f = append(f, c.Field)
	}
	return strings.Join(f, ", ")
}

// dissent records that loser's change to a field was overruled by winner's
// under the steering rules (the seed's dissent_notices).
func (t *tx) dissent(s *Slice, loser string, c ConflictDiff, winner string) {
	notice := map[string]any{
		"agent": loser, "field": c.Field, "overruled_by": winner, "rule": "steering.precedence." + c.Field,
		"timestamp": t.ts, "revision": t.rev,
	}
	raw, _ := marshalCompact(notice)
	s.DissentNotices = append(s.DissentNotices, raw)
	t.event("conflict_resolved", s.SliceID, winner, map[string]any{"field": c.Field, "winner": winner, "loser": loser})
}

// gate applies dynamic gating: a passing score within the margin of its
// minimum raises the next agent's minimum for this slice.
func (t *tx) gate(s *Slice, ag *Agent, score, minimum float64) {
	if minimum <= 0 || score > minimum+t.cfg.Gating.Margin+eps {
		return
	}
	next := t.cfg.NextAgent(ag.Name)
	if next == "" {
		return
	}
	na, _ := t.cfg.Agent(next)
	raised := math.Min(1, round4(na.MinConfidence+t.cfg.Gating.Raise))
	if cur, ok := s.RaisedMinimums[next]; ok && cur >= raised {
		return
	}
	if s.RaisedMinimums == nil {
		s.RaisedMinimums = map[string]float64{}
	}
	s.RaisedMinimums[next] = raised
	t.event("minimum_raised", s.SliceID, next, map[string]any{"by": ag.Name, "score": score, "from": na.MinConfidence, "to": raised})
}

func setRetro(s *Slice, r *Retro) {
	if r.Validated != nil {
		s.RequirementsValidated = clonePtr(r.Validated)
	}
	if r.Corrected != nil {
		s.RequirementsCorrected = clonePtr(r.Corrected)
	}
	if r.Missing != nil {
		s.RequirementsMissing = clonePtr(r.Missing)
	}
	if s.RequirementsMissing != nil && *s.RequirementsMissing > 0 {
		s.ValidationStatus = "PARTIAL"
	} else if s.RequirementsValidated != nil {
		s.ValidationStatus = "VALIDATED"
	}
}

// beat records that an agent executed.
func (t *tx) beat(agent string) {
	key := HeartbeatKey(agent)
	h := t.heartbeat(key, true)
	if h.Status == "" {
		h.Status = HeartbeatIdle
	}
	h.LastExecution = t.ts
	h.RetryRequestedAt, h.EscalatedAt = "", ""
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// agentTitle is "Implementation Agent" for "implementation".
func agentTitle(name string) string {
	words := strings.Split(name, "_")
	for i, w := range words {
		if w != "" {
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ") + " Agent"
}

// plain writes a score as given: 0.71, 0.75.
func plain(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// FormatScore displays a score or CCS to 3 decimals, as the board does.
func FormatScore(v float64) string { return fmt.Sprintf("%.3f", v) }

func mergeRouting(a, b Routing) Routing {
	out := Routing{RouteTo: slices.Clone(a.RouteTo), SignOff: slices.Clone(a.SignOff)}
	for _, r := range b.RouteTo {
		if !slices.Contains(out.RouteTo, r) {
			out.RouteTo = append(out.RouteTo, r)
		}
	}
	for _, r := range b.SignOff {
		if !slices.Contains(out.SignOff, r) {
			out.SignOff = append(out.SignOff, r)
		}
	}
	return out
}

// unhashedArtifacts refuses to call a slice DONE while an artifact it names
// has no recorded hash: nothing could then tell a later edit (drift) or a
// lost file from the accepted one (seed 000: a DONE slice must not point at
// an artifact the custodian cannot vouch for).
func unhashedArtifacts(s *Slice) error {
	for _, p := range s.Artifacts() {
		if s.ArtifactHashes[p] == "" {
			return reason.New(reason.StateInconsistency, "slice %s cannot be DONE: artifact %s has no recorded hash (propose it again, or have it reviewed)", s.SliceID, p)
		}
	}
	return nil
}
