package asdd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/reason"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Key is the store key (and the path relative to the project root) of the
// ASDD state manifest.
const Key = ".asdd/state/manifest.json"

// NeedsHumanReview marks state that a rebuild could not reconstruct with
// confidence (seed 000): a slice or project context listing field names in
// needs_human_review, or a string field holding this value.
const NeedsHumanReview = "NEEDS_HUMAN_REVIEW"

// Manifest is .asdd/state/manifest.json in the seed's layout: project
// context, slices and agent heartbeats, plus the store revision. Members the
// type does not know are kept in Extra and written back unchanged.
type Manifest struct {
	ProjectContext  ProjectContext        `json:"project_context"`
	Slices          []*Slice              `json:"slices"`
	AgentHeartbeats map[string]*Heartbeat `json:"agent_heartbeats"`
	// Revision is the store revision of this value: +1 per commit.
	Revision uint64 `json:"revision"`

	Extra Extra `json:",inline"`

	// agg is kept by Apply and ApplyFinalized for the next ApplyFinalized;
	// nil on a manifest they did not make. Never serialized.
	agg *aggregate
	// delta is kept by Apply and ApplyFinalized: how the slice list
	// differs from the input's (SlicesChanged). Never serialized.
	delta *sliceDelta
}

// ProjectContext is the manifest's project_context.
type ProjectContext struct {
	CurrentSprint string   `json:"current_sprint,omitempty"`
	ProductGoals  []string `json:"product_goals,omitempty"`
	// GlobalConfidenceScore is the mean CCS of the active slices (those not
	// DONE or QUICK_FIX that have a CCS); absent when there are none.
	GlobalConfidenceScore *float64 `json:"global_confidence_score,omitempty"`
	// NeedsHumanReview lists project fields a rebuild guessed.
	NeedsHumanReview []string `json:"needs_human_review,omitempty"`
	// ConfigSHA256 pins .asdd/config.yaml: the SHA-256 of the file the
	// rules were accepted with (Init; ClearReview with Config). While the
	// file is another, every operation but that acceptance is refused
	// (STATE_DRIFT): the config is state too.
	ConfigSHA256 string `json:"config_sha256,omitempty"`

	Extra Extra `json:",inline"`
}

// Slice is one entry of the manifest's slices: the seed's fields, the block
// record of seed 000, the retro-spec counters, and the fields the
// custodian's rules keep (artifact hashes, lock, attempts, raised minimums,
// tasks, escalations).
type Slice struct {
	SliceID        string            `json:"slice_id"`
	Name           string            `json:"name,omitempty"`
	Type           string            `json:"type,omitempty"`
	Status         string            `json:"status"`
	GovernanceMode string            `json:"governance_mode,omitempty"`
	PhaseData      map[string]string `json:"phase_data,omitzero"`
	// ConfidenceChain holds each agent's current entry: one per agent.
	ConfidenceChain []ChainEntry `json:"confidence_chain,omitzero"`
	// ChainHistory holds the agents' earlier entries (attempts before a
	// halt and re-run, entries a return superseded), oldest first.
	ChainHistory []ChainEntry `json:"confidence_chain_history,omitempty"`
	// CCS is the product of the latest live chain score of each CCS agent;
	// absent while no CCS agent has scored.
	CCS             *float64          `json:"ccs,omitempty"`
	Blockers        []json.RawMessage `json:"blockers,omitzero"`
	DissentNotices  []json.RawMessage `json:"dissent_notices,omitzero"`
	ReasoningTraces []string          `json:"reasoning_traces,omitzero"`

	// Block record (seed 000), present while the slice is BLOCKED.
	BlockedAtPhase     string   `json:"blocked_at_phase,omitempty"`
	LKGPhase           string   `json:"lkg_phase,omitempty"`
	BlockReason        string   `json:"block_reason,omitempty"`
	UncertaintyFactors []string `json:"uncertainty_factors,omitempty"`
	RollbackTimestamp  string   `json:"rollback_timestamp,omitempty"`
	// Block details the custodian adds.
	FailureMode      string            `json:"failure_mode,omitempty"`
	HaltedAgent      string            `json:"halted_agent,omitempty"`
	ActionRequired   string            `json:"action_required,omitempty"`
	PausedAgents     []string          `json:"paused_agents,omitempty"`
	HaltedArtifacts  map[string]string `json:"halted_artifacts,omitempty"`
	ResumePhase      string            `json:"resume_phase,omitempty"`
	SignOffsRequired []string          `json:"sign_offs_required,omitempty"`
	SignOffs         []SignOff         `json:"sign_offs,omitempty"`
	EscalationID     string            `json:"escalation_id,omitempty"`
	// FeatureBranch is the git branch holding the halted agent's work
	// (seed 004: implementation below its minimum → "commit to feature
	// branch; require human code review"); ReviewRequired names the review.
	FeatureBranch  string `json:"feature_branch,omitempty"`
	ReviewRequired string `json:"review_required,omitempty"`
	// SteeringUpdates are the Knowledge Agent's steering-update proposals
	// (seed 004: below its minimum → "propose steering update; require
	// human approval"): PENDING_APPROVAL until a human decides.
	SteeringUpdates []SteeringUpdate `json:"steering_updates,omitempty"`

	// Retro-spec slices (legacy migration).
	ValidationStatus      string `json:"validation_status,omitempty"`
	RequirementsValidated *int   `json:"requirements_validated,omitempty"`
	RequirementsCorrected *int   `json:"requirements_corrected,omitempty"`
	RequirementsMissing   *int   `json:"requirements_missing,omitempty"`

	// Assumptions are the Discovery Agent's initial assumptions
	// (assumptions-first mode): PO/TL correct only the wrong ones.
	Assumptions []Assumption `json:"assumptions,omitempty"`
	// Description is the one-line intent of a QUICK_FIX slice.
	Description string `json:"description,omitempty"`
	// ArtifactHashes maps every artifact path the slice names (phase data,
	// traces, halted drafts) to "sha256:<hex>" of its content at the commit
	// that recorded it.
	ArtifactHashes map[string]string `json:"artifact_hashes,omitempty"`
	Lock           *Lock             `json:"lock,omitempty"`
	// Attempts counts submissions per "agent:PHASE" since the last reset,
	// for the refinement-loop limit.
	Attempts map[string]int `json:"attempts,omitempty"`
	// RaisedMinimums holds per-agent minimums raised by dynamic gating.
	RaisedMinimums map[string]float64 `json:"raised_minimums,omitempty"`
	Tasks          []Task             `json:"tasks,omitempty"`
	Escalations    []Escalation       `json:"escalations,omitempty"`
	// NeedsHumanReview lists fields a rebuild guessed; while it is not
	// empty the pipeline refuses proposals.
	NeedsHumanReview []string `json:"needs_human_review,omitempty"`
	CreatedAt        string   `json:"created_at,omitempty"`
	UpdatedAt        string   `json:"updated_at,omitempty"`

	Extra Extra `json:",inline"`
}

// ChainEntry is one confidence-chain entry: one agent, one attempt.
type ChainEntry struct {
	Agent     string  `json:"agent"`
	Score     float64 `json:"score"`
	Timestamp string  `json:"timestamp"`
	// Attempt numbers the agent's entries in this slice: 1, 2, …
	Attempt            int               `json:"attempt,omitempty"`
	Phase              string            `json:"phase,omitempty"`
	Revision           uint64            `json:"revision,omitempty"`
	Minimum            *float64          `json:"minimum,omitempty"`
	BelowMinimum       bool              `json:"below_minimum,omitempty"`
	Outcome            string            `json:"outcome,omitempty"`
	UncertaintyFactors []string          `json:"uncertainty_factors,omitempty"`
	Artifacts          map[string]string `json:"artifacts,omitempty"`
	Trace              string            `json:"trace,omitempty"`

	Extra Extra `json:",inline"`
}

// Chain entry outcomes.
const (
	OutcomeAccepted   = "accepted"   // the gate passed (or a human accepted it)
	OutcomeHalted     = "halted"     // the entry halted the slice
	OutcomeSuperseded = "superseded" // a human returned the slice to an earlier phase
)

// Lock is a lease on a slice: until Expires only Holder may change it.
type Lock struct {
	Status   string `json:"status,omitempty"` // "LOCK", as the seed names it
	Holder   string `json:"holder"`
	Acquired string `json:"acquired"`
	Expires  string `json:"expires"` // "" never: held until a human resolves
	Reason   string `json:"reason,omitempty"`
	// Requester is the agent whose proposal made the custodian lock the
	// slice (seed 000: a LOCK status with timestamp and requester).
	Requester string `json:"requester,omitempty"`
	// Escalation is the escalation the lock waits for: it is released
	// when that escalation is resolved.
	Escalation string `json:"escalation,omitempty"`

	Extra Extra `json:",inline"`
}

// SignOff is one role's approval of a halted slice.
type SignOff struct {
	Role      string `json:"role"`
	By        string `json:"by,omitempty"`
	At        string `json:"at"`
	Rationale string `json:"rationale"`
	Action    string `json:"action"`
}

// Task is one task of a slice's plan.
type Task struct {
	ID        string   `json:"id"`
	Title     string   `json:"title,omitempty"`
	Wave      int      `json:"wave"`
	DependsOn []string `json:"depends_on,omitempty"`
	// Requirement is the business requirement (REQ-NNN) the task's
	// sub-agent verifies its work against (goal-backward verification).
	Requirement string `json:"requirement,omitempty"`
	Status      string `json:"status"`
	Agent       string `json:"agent,omitempty"`
	// ClaimedAt is when Agent claimed the task (ClaimTask).
	ClaimedAt   string `json:"claimed_at,omitempty"`
	CompletedAt string `json:"completed_at,omitempty"`

	Extra Extra `json:",inline"`
}

// Assumption is one assumption of assumptions-first discovery.
type Assumption struct {
	Text        string `json:"text"`
	Agent       string `json:"agent"`
	At          string `json:"at"`
	Status      string `json:"status"` // ASSUMED or CORRECTED
	Correction  string `json:"correction,omitempty"`
	CorrectedBy string `json:"corrected_by,omitempty"`
}

// Assumption statuses.
const (
	AssumptionAssumed   = "ASSUMED"
	AssumptionCorrected = "CORRECTED"
)

// Task statuses.
const (
	TaskPending = "pending"
	TaskDone    = "done"
)

// Escalation is a notice to humans about a halted slice, and its
// resolution. Its notice file and its row in docs/agent-failure-log.md are
// derived from it.
type Escalation struct {
	ID          string         `json:"id"`
	Path        string         `json:"path"`
	FailureMode string         `json:"failure_mode"`
	Agent       string         `json:"agent,omitempty"`
	Phase       string         `json:"phase"`
	Score       *float64       `json:"score,omitempty"`
	CCS         *float64       `json:"ccs,omitempty"`
	Reason      string         `json:"reason"`
	Action      string         `json:"action_required,omitempty"`
	RouteTo     []string       `json:"route_to,omitempty"`
	Artifacts   []string       `json:"artifacts,omitempty"`
	Uncertainty []string       `json:"uncertainty_factors,omitempty"`
	Conflict    []ConflictDiff `json:"conflict,omitempty"`
	// ArtifactHashes lists every artifact of the slice with its recorded
	// hash, for a halt that calls for a review of them all (CCS floor).
	ArtifactHashes map[string]string `json:"artifact_hashes,omitempty"`
	// Findings are further rule violations of the halting proposal
	// ("MISSING_UNCERTAINTY_FACTORS: …").
	Findings []string `json:"findings,omitempty"`
	// Arbitration is the Tech Lead's decision on a conflict: the agent
	// favoured and the one overruled, with the fields in dispute (both
	// sides are in Conflict).
	Arbitration *Arbitration `json:"arbitration,omitempty"`
	// SteeringProposal is the steering-update proposal the halt wrote
	// (under .asdd/steering-proposals/), awaiting human approval.
	SteeringProposal string `json:"steering_proposal,omitempty"`
	// FeatureBranch and ReviewRequired: see Slice.
	FeatureBranch  string `json:"feature_branch,omitempty"`
	ReviewRequired string `json:"review_required,omitempty"`
	RaisedAt       string `json:"raised_at"`
	Status         string `json:"status"` // OPEN or RESOLVED
	ResolvedAt     string `json:"resolved_at,omitempty"`
	ResolvedBy     string `json:"resolved_by,omitempty"`
	Resolution     string `json:"resolution,omitempty"`
	Rationale      string `json:"rationale,omitempty"`
	// TimeToResolve is a Go duration string ("1h2m3s").
	TimeToResolve string `json:"time_to_resolve,omitempty"`
	RootCause     string `json:"root_cause,omitempty"`
}

// Arbitration is a human's decision between two agents' conflicting
// changes.
type Arbitration struct {
	Favoured  string   `json:"favoured"`
	Overruled string   `json:"overruled"`
	Fields    []string `json:"fields"`
	By        string   `json:"by"`
	At        string   `json:"at"`
}

// SteeringUpdate is a steering-update proposal awaiting (or past) human
// approval: the proposal file under .asdd/steering-proposals/ and the
// artifacts it would put into effect.
type SteeringUpdate struct {
	Path       string            `json:"path"`
	Escalation string            `json:"escalation"`
	Agent      string            `json:"agent"`
	Score      float64           `json:"score"`
	Artifacts  map[string]string `json:"artifacts,omitempty"`
	Status     string            `json:"status"` // PENDING_APPROVAL, APPROVED, REJECTED
	DecidedBy  string            `json:"decided_by,omitempty"`
	DecidedAt  string            `json:"decided_at,omitempty"`
}

// Steering update statuses.
const (
	SteeringPending  = "PENDING_APPROVAL"
	SteeringApproved = "APPROVED"
	SteeringRejected = "REJECTED"
)

// SteeringProposalDir is where steering-update proposals are written.
const SteeringProposalDir = ".asdd/steering-proposals"

// Escalation statuses.
const (
	EscalationOpen     = "OPEN"
	EscalationResolved = "RESOLVED"
)

// ConflictDiff is one field two agents changed differently.
type ConflictDiff struct {
	Field  string       `json:"field"`
	Theirs FieldVersion `json:"theirs"`
	Ours   FieldVersion `json:"ours"`
}

// FieldVersion is one agent's value of a conflicting field.
type FieldVersion struct {
	Agent    string `json:"agent"`
	Value    string `json:"value"`
	Hash     string `json:"hash,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
}

// Heartbeat is one agent's entry in agent_heartbeats (seed 000), keyed
// "<agent>_agent".
type Heartbeat struct {
	LastExecution  string `json:"last_execution"`
	Status         string `json:"status"`
	CurrentSlice   string `json:"current_slice,omitempty"`
	CurrentWave    *int   `json:"current_wave,omitempty"`
	TasksCompleted *int   `json:"tasks_completed,omitempty"`
	TasksRemaining *int   `json:"tasks_remaining,omitempty"`
	// RetryRequestedAt and EscalatedAt are set by the monitor when an ACTIVE
	// agent stays silent past its timeout (retry, then escalate).
	RetryRequestedAt string `json:"retry_requested_at,omitempty"`
	EscalatedAt      string `json:"escalated_at,omitempty"`

	Extra Extra `json:",inline"`
}

// Heartbeat statuses the custodian writes; others are kept as given.
const (
	HeartbeatIdle   = "IDLE"
	HeartbeatActive = "ACTIVE"
	HeartbeatPaused = "PAUSED"
)

// HeartbeatKey is the agent_heartbeats key of an agent: "spec" -> "spec_agent".
func HeartbeatKey(agent string) string {
	if strings.HasSuffix(agent, "_agent") {
		return agent
	}
	return agent + "_agent"
}

type (
	plainManifest   Manifest
	plainContext    ProjectContext
	plainSlice      Slice
	plainChainEntry ChainEntry
	plainLock       Lock
	plainTask       Task
	plainHeartbeat  Heartbeat
)

// Each type of the manifest that keeps unknown members has the methods of
// both encoding/json and go-json-experiment/json, so that either writes
// and reads it as Marshal and Decode do; they hand the work to the library
// through the method-less copy of the type.

// UnmarshalJSON decodes a manifest and keeps unknown members.
func (m *Manifest) UnmarshalJSON(b []byte) error { return unmarshal(b, m) }

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (m *Manifest) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*m = Manifest{}
	return jsonv2.UnmarshalDecode(dec, (*plainManifest)(m))
}

// MarshalJSON encodes a manifest with its unknown members.
func (m Manifest) MarshalJSON() ([]byte, error) { return Marshal(&m) }

// MarshalJSONTo implements jsonv2.MarshalerTo. A manifest's slices and
// heartbeats are written as [] and {} when it has none.
func (m *Manifest) MarshalJSONTo(enc *jsontext.Encoder) error {
	p := (*plainManifest)(m)
	if m.Slices == nil || m.AgentHeartbeats == nil {
		c := *p
		if c.Slices == nil {
			c.Slices = []*Slice{}
		}
		if c.AgentHeartbeats == nil {
			c.AgentHeartbeats = map[string]*Heartbeat{}
		}
		p = &c
	}
	return marshalTo(enc, p)
}

// UnmarshalJSON decodes the project context and keeps unknown members.
func (c *ProjectContext) UnmarshalJSON(b []byte) error { return unmarshal(b, c) }

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (c *ProjectContext) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*c = ProjectContext{}
	return jsonv2.UnmarshalDecode(dec, (*plainContext)(c))
}

// MarshalJSON encodes the project context with its unknown members.
func (c ProjectContext) MarshalJSON() ([]byte, error) { return Marshal(&c) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (c *ProjectContext) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTo(enc, (*plainContext)(c))
}

// UnmarshalJSON decodes a slice and keeps unknown members.
func (s *Slice) UnmarshalJSON(b []byte) error { return unmarshal(b, s) }

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (s *Slice) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*s = Slice{}
	if err := jsonv2.UnmarshalDecode(dec, (*plainSlice)(s)); err != nil {
		return err
	}
	s.migrateChain()
	return nil
}

// migrateChain reads a chain written before the chain kept one entry per
// agent: when an agent has several entries, all numbered by the custodian
// (distinct attempts), the earlier ones are its history. Duplicates the
// custodian cannot tell apart stay, for `custodian check` to report.
func (s *Slice) migrateChain() {
	count := map[string]int{}
	for _, e := range s.ConfidenceChain {
		count[e.Agent]++
	}
	dup := false
	for agent, n := range count {
		if n < 2 {
			continue
		}
		seen := map[int]bool{}
		for _, e := range s.ConfidenceChain {
			if e.Agent != agent {
				continue
			}
			if e.Attempt <= 0 || seen[e.Attempt] {
				return
			}
			seen[e.Attempt] = true
		}
		dup = true
	}
	if !dup {
		return
	}
	last := map[string]int{}
	for i, e := range s.ConfidenceChain {
		last[e.Agent] = i
	}
	keep := make([]ChainEntry, 0, len(last))
	for i, e := range s.ConfidenceChain {
		if last[e.Agent] == i {
			keep = append(keep, e)
		} else {
			s.ChainHistory = append(s.ChainHistory, e)
		}
	}
	s.ConfidenceChain = keep
}

// DuplicateChainAgents lists the agents with more than one current entry
// in the slice's confidence chain (seed 000: an inconsistency).
func (s *Slice) DuplicateChainAgents() []string {
	count := map[string]int{}
	var out []string
	for _, e := range s.ConfidenceChain {
		count[e.Agent]++
		if count[e.Agent] == 2 {
			out = append(out, e.Agent)
		}
	}
	return out
}

// MarshalJSON encodes a slice with its unknown members. The seed's list
// members (confidence_chain, blockers…) are written when they exist, even
// empty, and left out when the slice never had them.
func (s Slice) MarshalJSON() ([]byte, error) { return Marshal(&s) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (s *Slice) MarshalJSONTo(enc *jsontext.Encoder) error { return marshalTo(enc, (*plainSlice)(s)) }

// UnmarshalJSON decodes a chain entry and keeps unknown members.
func (e *ChainEntry) UnmarshalJSON(b []byte) error { return unmarshal(b, e) }

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (e *ChainEntry) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*e = ChainEntry{}
	return jsonv2.UnmarshalDecode(dec, (*plainChainEntry)(e))
}

// MarshalJSON encodes a chain entry with its unknown members.
func (e ChainEntry) MarshalJSON() ([]byte, error) { return Marshal(&e) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (e *ChainEntry) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTo(enc, (*plainChainEntry)(e))
}

// UnmarshalJSON decodes a lock and keeps unknown members.
func (l *Lock) UnmarshalJSON(b []byte) error { return unmarshal(b, l) }

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (l *Lock) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*l = Lock{}
	return jsonv2.UnmarshalDecode(dec, (*plainLock)(l))
}

// MarshalJSON encodes a lock with its unknown members.
func (l Lock) MarshalJSON() ([]byte, error) { return Marshal(&l) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (l *Lock) MarshalJSONTo(enc *jsontext.Encoder) error { return marshalTo(enc, (*plainLock)(l)) }

// UnmarshalJSON decodes a task and keeps unknown members.
func (t *Task) UnmarshalJSON(b []byte) error { return unmarshal(b, t) }

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (t *Task) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*t = Task{}
	return jsonv2.UnmarshalDecode(dec, (*plainTask)(t))
}

// MarshalJSON encodes a task with its unknown members.
func (t Task) MarshalJSON() ([]byte, error) { return Marshal(&t) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (t *Task) MarshalJSONTo(enc *jsontext.Encoder) error { return marshalTo(enc, (*plainTask)(t)) }

// UnmarshalJSON decodes a heartbeat and keeps unknown members.
func (h *Heartbeat) UnmarshalJSON(b []byte) error { return unmarshal(b, h) }

// UnmarshalJSONFrom implements jsonv2.UnmarshalerFrom.
func (h *Heartbeat) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*h = Heartbeat{}
	return jsonv2.UnmarshalDecode(dec, (*plainHeartbeat)(h))
}

// MarshalJSON encodes a heartbeat with its unknown members.
func (h Heartbeat) MarshalJSON() ([]byte, error) { return Marshal(&h) }

// MarshalJSONTo implements jsonv2.MarshalerTo.
func (h *Heartbeat) MarshalJSONTo(enc *jsontext.Encoder) error {
	return marshalTo(enc, (*plainHeartbeat)(h))
}

// New returns an empty manifest.
func New() *Manifest {
	return &Manifest{Slices: []*Slice{}, AgentHeartbeats: map[string]*Heartbeat{}}
}

// Decode parses a manifest. It checks the JSON Schema first, so that a
// manifest that does not fit the layout is refused with a message naming
// the offending member (INVALID_INPUT), and never half-read.
func Decode(raw []byte) (*Manifest, error) {
	if err := Validate(raw); err != nil {
		return nil, err
	}
	return DecodeValid(raw)
}

// DecodeValid is Decode without the schema check, for bytes known to pass
// Validate as SchemaVersion names it (the application layer keeps a mark
// binding their SHA-256 to it): never for anything else.
func DecodeValid(raw []byte) (*Manifest, error) {
	var m Manifest
	if err := unmarshal(raw, &m); err != nil {
		return nil, reason.New(reason.InvalidInput, "manifest: %v", err)
	}
	if m.Slices == nil {
		m.Slices = []*Slice{}
	}
	if m.AgentHeartbeats == nil {
		m.AgentHeartbeats = map[string]*Heartbeat{}
	}
	for i, s := range m.Slices {
		if s == nil {
			return nil, reason.New(reason.InvalidInput, "manifest: slices[%d] is null", i)
		}
	}
	for k, h := range m.AgentHeartbeats {
		if h == nil {
			return nil, reason.New(reason.InvalidInput, "manifest: agent_heartbeats.%s is null", k)
		}
	}
	return &m, nil
}

// Encode renders m as indented JSON and checks it against the schema: a
// value that does not pass is never returned for commit.
func Encode(m *Manifest) ([]byte, error) {
	raw, err := marshal(m, jsontext.Multiline(true), jsontext.WithIndent("  "))
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	if err := Validate(raw); err != nil {
		return nil, fmt.Errorf("encoded manifest fails its schema: %w", err)
	}
	return append(raw, '\n'), nil
}

// Slice returns the slice with the given id, or nil.
func (m *Manifest) Slice(id string) *Slice {
	if i := m.SliceIndex(id); i >= 0 {
		return m.Slices[i]
	}
	return nil
}

// SliceIndex returns the position of the slice with the given id in
// m.Slices, or -1: on a manifest ApplyFinalized made, from its index of
// the slices' ids, without reading every id.
func (m *Manifest) SliceIndex(id string) int {
	var ids *sliceIndex
	if a := m.agg; a != nil && sameList(a.list, m.Slices) {
		ids = a.ids // the daemon's manifest: no reading of every id
	}
	return ids.find(m.Slices, id)
}

// Find returns the slice with the given id or a NOT_FOUND error.
func (m *Manifest) Find(id string) (*Slice, error) {
	if s := m.Slice(id); s != nil {
		return s, nil
	}
	return nil, reason.New(reason.NotFound, "no slice %q in the manifest", id)
}

// NeedsReview reports whether any state is marked NEEDS_HUMAN_REVIEW.
func (m *Manifest) NeedsReview() bool {
	if len(m.ProjectContext.NeedsHumanReview) > 0 {
		return true
	}
	if a := m.agg; a != nil && sameList(a.list, m.Slices) {
		return a.review > 0 // counted by Apply, without reading the slices
	}
	return slices.ContainsFunc(m.Slices, func(s *Slice) bool { return len(s.NeedsHumanReview) > 0 })
}

// Artifacts returns every artifact path the slice names: phase data,
// reasoning traces and halted drafts, sorted and without duplicates.
func (s *Slice) Artifacts() []string {
	var out []string
	for _, p := range s.PhaseData {
		if p != "" && p != NeedsHumanReview {
			out = append(out, p)
		}
	}
	for _, p := range s.ReasoningTraces {
		if p != "" && p != NeedsHumanReview {
			out = append(out, p)
		}
	}
	for _, p := range s.HaltedArtifacts {
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// OpenEscalation returns the slice's open escalation, or nil.
func (s *Slice) OpenEscalation() *Escalation {
	for i := range s.Escalations {
		if s.Escalations[i].Status == EscalationOpen && s.Escalations[i].ID == s.EscalationID {
			return &s.Escalations[i]
		}
	}
	return nil
}
