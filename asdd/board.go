package asdd

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// EscalationView is an escalation with the slice it belongs to.
type EscalationView struct {
	Slice string `json:"slice"`
	Escalation
}

// Board is the status board of a manifest (what `custodian status --json`
// prints and a dashboard shows): slices by phase with CCS and weak link,
// block records, locks, tasks, open escalations, heartbeats with their ages.
type Board struct {
	Revision         uint64           `json:"revision"`
	Sprint           string           `json:"current_sprint,omitempty"`
	GlobalConfidence *float64         `json:"global_confidence_score,omitempty"`
	Slices           []BoardSlice     `json:"slices"`
	Escalations      []EscalationView `json:"open_escalations"`
	Heartbeats       []BoardHeartbeat `json:"heartbeats"`
	NeedsReview      bool             `json:"needs_human_review"`
}

// BoardSlice is one slice on the board.
type BoardSlice struct {
	ID          string        `json:"slice_id"`
	Name        string        `json:"name,omitempty"`
	Type        string        `json:"type,omitempty"`
	Status      string        `json:"status"`
	CCS         *float64      `json:"ccs,omitempty"`
	WeakLink    *WeakLinkView `json:"weak_link,omitempty"`
	Block       *BlockView    `json:"block,omitempty"`
	Lock        *LockView     `json:"lock,omitempty"`
	TasksDone   int           `json:"tasks_done"`
	TasksTotal  int           `json:"tasks_total"`
	TasksReady  []string      `json:"tasks_ready,omitempty"`
	NeedsReview []string      `json:"needs_human_review,omitempty"`
	// Retro is a retro-spec slice's validation progress (seed 000: retro
	// specification and feature development in a single view).
	Retro *RetroView `json:"retro,omitempty"`
}

// RetroView is a retro-spec slice's validation status and counts.
type RetroView struct {
	ValidationStatus string `json:"validation_status"`
	Validated        int    `json:"requirements_validated"`
	Corrected        int    `json:"requirements_corrected"`
	Missing          int    `json:"requirements_missing"`
}

// Text is "PARTIAL: 14 validated, 3 corrected, 2 missing".
func (r *RetroView) Text() string {
	return fmt.Sprintf("%s: %d validated, %d corrected, %d missing", r.ValidationStatus, r.Validated, r.Corrected, r.Missing)
}

// RetroOf is the slice's retro-spec view, nil for a slice that is not a
// retro-spec one and carries no validation counters.
func RetroOf(s *Slice) *RetroView {
	if s.Type != TypeRetroSpec && s.ValidationStatus == "" && s.RequirementsValidated == nil && s.RequirementsCorrected == nil && s.RequirementsMissing == nil {
		return nil
	}
	v := func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	}
	return &RetroView{ValidationStatus: orDefault(s.ValidationStatus, "PENDING"), Validated: v(s.RequirementsValidated),
		Corrected: v(s.RequirementsCorrected), Missing: v(s.RequirementsMissing)}
}

// WeakLinkView is the lowest-scoring CCS agent of a slice.
type WeakLinkView struct {
	Agent       string   `json:"agent"`
	Score       float64  `json:"score"`
	Uncertainty []string `json:"uncertainty_factors,omitempty"`
}

// BlockView is a halted slice's block record, in short.
type BlockView struct {
	AtPhase        string   `json:"blocked_at_phase"`
	LKGPhase       string   `json:"lkg_phase"`
	FailureMode    string   `json:"failure_mode,omitempty"`
	Reason         string   `json:"block_reason"`
	Since          string   `json:"rollback_timestamp"`
	Escalation     string   `json:"escalation,omitempty"`
	AwaitingBy     []string `json:"awaiting_sign_off,omitempty"`
	Paused         []string `json:"paused_agents,omitempty"`
	FeatureBranch  string   `json:"feature_branch,omitempty"`
	ReviewRequired string   `json:"review_required,omitempty"`
}

// LockView is a slice's lease.
type LockView struct {
	Holder    string `json:"holder"`
	Requester string `json:"requester,omitempty"`
	Expires   string `json:"expires"`
	Expired   bool   `json:"expired"`
}

// BoardHeartbeat is one agent's heartbeat with its age.
type BoardHeartbeat struct {
	Agent      string `json:"agent"`
	Status     string `json:"status"`
	Slice      string `json:"current_slice,omitempty"`
	Wave       *int   `json:"current_wave,omitempty"`
	Done       *int   `json:"tasks_completed,omitempty"`
	Remaining  *int   `json:"tasks_remaining,omitempty"`
	Last       string `json:"last_execution"`
	AgeSeconds *int64 `json:"age_seconds,omitempty"`
	// Stale: ACTIVE and silent for longer than the heartbeat timeout.
	Stale bool `json:"stale"`
	// RetryRequestedAt and EscalatedAt: what the monitor did about silence.
	RetryRequestedAt string `json:"retry_requested_at,omitempty"`
	EscalatedAt      string `json:"escalated_at,omitempty"`
}

// NewBoard builds the board of m at time now (for heartbeat ages, stale
// heartbeats and expired leases).
func NewBoard(m *Manifest, cfg *Config, now time.Time) Board {
	b := Board{Revision: m.Revision, Sprint: m.ProjectContext.CurrentSprint, GlobalConfidence: m.ProjectContext.GlobalConfidenceScore,
		Slices: []BoardSlice{}, Escalations: []EscalationView{}, Heartbeats: []BoardHeartbeat{}, NeedsReview: m.NeedsReview()}
	for _, s := range m.Slices {
		bs := BoardSlice{ID: s.SliceID, Name: s.Name, Type: s.Type, Status: s.Status, CCS: s.CCS, NeedsReview: s.NeedsHumanReview, Retro: RetroOf(s)}
		if wl, ok := WeakLink(s, cfg); ok {
			bs.WeakLink = &WeakLinkView{Agent: wl.Agent, Score: wl.Score, Uncertainty: wl.UncertaintyFactors}
		}
		if s.Status == Blocked {
			var awaiting []string
			required := s.SignOffsRequired
			if len(required) == 0 { // a block record written by hand or by a rebuild
				required = cfg.Escalation.SignOff
			}
			for _, r := range required {
				if !slices.ContainsFunc(s.SignOffs, func(x SignOff) bool { return x.Role == r }) {
					awaiting = append(awaiting, r)
				}
			}
			bs.Block = &BlockView{AtPhase: s.BlockedAtPhase, LKGPhase: s.LKGPhase, FailureMode: s.FailureMode, Reason: s.BlockReason,
				Since: s.RollbackTimestamp, Escalation: s.EscalationID, AwaitingBy: awaiting, Paused: s.PausedAgents,
				FeatureBranch: s.FeatureBranch, ReviewRequired: s.ReviewRequired}
		}
		if s.Lock != nil {
			exp, ok := ParseTimestamp(s.Lock.Expires)
			bs.Lock = &LockView{Holder: s.Lock.Holder, Requester: s.Lock.Requester, Expires: s.Lock.Expires, Expired: ok && !now.Before(exp)}
		}
		for _, t := range s.Tasks {
			bs.TasksTotal++
			if t.Status == TaskDone {
				bs.TasksDone++
			}
		}
		for _, t := range Ready(s) {
			bs.TasksReady = append(bs.TasksReady, t.ID)
		}
		b.Slices = append(b.Slices, bs)
	}
	b.Escalations = m.Escalations("", false)
	slices.SortStableFunc(b.Slices, func(x, y BoardSlice) int { return boardOrder(x) - boardOrder(y) })
	for _, k := range slices.Sorted(maps.Keys(m.AgentHeartbeats)) {
		h := m.AgentHeartbeats[k]
		bh := BoardHeartbeat{Agent: k, Status: h.Status, Slice: h.CurrentSlice, Wave: h.CurrentWave, Done: h.TasksCompleted, Remaining: h.TasksRemaining, Last: h.LastExecution, RetryRequestedAt: h.RetryRequestedAt, EscalatedAt: h.EscalatedAt}
		if t, ok := ParseTimestamp(h.LastExecution); ok {
			age := int64(now.Sub(t) / time.Second)
			bh.AgeSeconds = &age
			bh.Stale = h.Status == HeartbeatActive && now.Sub(t) > cfg.Heartbeat.Timeout.D()
		}
		b.Heartbeats = append(b.Heartbeats, bh)
	}
	return b
}

// Escalations lists the open escalations (every one with all) of the
// slice id, or of every slice when id is "", in manifest order.
func (m *Manifest) Escalations(id string, all bool) []EscalationView {
	list := []EscalationView{}
	for _, s := range m.Slices {
		if id != "" && s.SliceID != id {
			continue
		}
		for _, e := range s.Escalations {
			if all || e.Status == EscalationOpen {
				list = append(list, EscalationView{Slice: s.SliceID, Escalation: e})
			}
		}
	}
	return list
}

// boardOrder sorts slices by phase: the lifecycle in order, then BLOCKED
// (by the phase it was halted at), QUICK_FIX, others.
func boardOrder(s BoardSlice) int {
	switch {
	case s.Status == Blocked && s.Block != nil:
		return PhaseIndex(s.Block.AtPhase)*10 + 5
	case PhaseIndex(s.Status) >= 0:
		return PhaseIndex(s.Status) * 10
	case s.Status == QuickFix:
		return 1000
	}
	return 2000
}
