package asdd

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/custodian-dev/custodian/reason"
)

// branchRE is a conservative git branch name: what git check-ref-format
// accepts, minus the exotic.
var branchRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$`) })

// ValidBranch reports whether name is a branch name the custodian records.
func ValidBranch(name string) bool {
	return branchRE().MatchString(name) && !strings.Contains(name, "..") && !strings.Contains(name, "//") &&
		!strings.HasSuffix(name, "/") && !strings.HasSuffix(name, ".lock") && !strings.HasSuffix(name, ".")
}

// FeatureBranchName is the branch `custodian run` commits a halted agent's
// work to: asdd/<slice>/<agent>-attempt-<n>.
func FeatureBranchName(slice, agent string, attempt int) string {
	return fmt.Sprintf("asdd/%s/%s-attempt-%d", slice, agent, attempt)
}

// belowAction carries out the agent's below_action on a halt below its
// minimum (seed 004's action table): the feature branch and the code
// review it requires, or a steering-update proposal awaiting approval.
func (t *tx) belowAction(s *Slice, ag *Agent, p Proposal, e ChainEntry) {
	esc := s.OpenEscalation()
	switch ag.BelowAction {
	case BelowFeatureBranch:
		s.ReviewRequired = fmt.Sprintf("human code review of the %s agent's work before it is merged (TL)", ag.Name)
		if p.FeatureBranch != "" {
			s.FeatureBranch = p.FeatureBranch
			s.ReviewRequired = fmt.Sprintf("human code review of branch %s before it is merged (TL)", p.FeatureBranch)
		}
		if esc != nil {
			esc.FeatureBranch, esc.ReviewRequired = s.FeatureBranch, s.ReviewRequired
			t.refreshEscalation(s, esc)
		}
	case BelowSteeringUpdate:
		if esc == nil {
			return
		}
		u := SteeringUpdate{
			Path: SteeringProposalDir + "/" + esc.ID + ".md", Escalation: esc.ID, Agent: ag.Name, Score: p.Score,
			Artifacts: maps.Clone(s.HaltedArtifacts), Status: SteeringPending,
		}
		s.SteeringUpdates = append(s.SteeringUpdates, u)
		esc.SteeringProposal = u.Path
		t.refreshEscalation(s, esc)
		t.event("steering_update_proposed", s.SliceID, ag.Name, map[string]any{"path": u.Path, "escalation": esc.ID})
	}
}

// refreshEscalation replaces the effects already queued for esc by ones
// derived from it as it is now.
func (t *tx) refreshEscalation(s *Slice, esc *Escalation) {
	t.out.Effects = slices.DeleteFunc(t.out.Effects, func(e Effect) bool {
		return e.Path == esc.Path || (e.Kind == EffectUpsertRow && e.Key == esc.ID)
	})
	t.out.Effects = append(t.out.Effects, EscalationEffects(s, esc)...)
}

// decideSteering records the human decision on the steering update the
// escalation proposed: approved (it takes effect: its artifacts are the
// slice's) when the halted output is accepted, rejected otherwise.
func (t *tx) decideSteering(s *Slice, escID, action, by string) {
	for i := range s.SteeringUpdates {
		u := &s.SteeringUpdates[i]
		if u.Escalation != escID || u.Status != SteeringPending {
			continue
		}
		u.Status, u.DecidedBy, u.DecidedAt = SteeringRejected, by, t.ts
		if action == ActionResume {
			u.Status = SteeringApproved
		}
		t.event("steering_update_"+strings.ToLower(u.Status), s.SliceID, u.Agent, map[string]any{"path": u.Path, "by": by})
	}
}

// steeringUpdateOf returns the steering update an escalation proposed.
func steeringUpdateOf(s *Slice, escID string) *SteeringUpdate {
	for i := range s.SteeringUpdates {
		if s.SteeringUpdates[i].Escalation == escID {
			return &s.SteeringUpdates[i]
		}
	}
	return nil
}

// SteeringProposalText is the steering-update proposal file: what the
// Knowledge Agent proposed and its status; it takes effect only once a
// human approves it.
func SteeringProposalText(s *Slice, e *Escalation, u *SteeringUpdate) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Steering update proposal %s\n\n", e.ID)
	fmt.Fprintf(&b, "- Status: %s\n", u.Status)
	fmt.Fprintf(&b, "- Slice: %s\n", s.SliceID)
	fmt.Fprintf(&b, "- Proposed by: the %s agent, confidence %s (below its minimum)\n", u.Agent, FormatScore(u.Score))
	fmt.Fprintf(&b, "- Escalation: %s\n", e.Path)
	if u.DecidedBy != "" {
		fmt.Fprintf(&b, "- Decided by: %s at %s\n", u.DecidedBy, u.DecidedAt)
	}
	b.WriteString("\n## Proposed changes\n\n")
	if len(u.Artifacts) == 0 {
		b.WriteString("(no artifact: see the escalation's uncertainty factors)\n")
	}
	for _, name := range slices.Sorted(maps.Keys(u.Artifacts)) {
		fmt.Fprintf(&b, "- %s: %s\n", name, u.Artifacts[name])
	}
	if len(e.Uncertainty) > 0 {
		b.WriteString("\n## Uncertainty factors\n\n")
		for _, f := range e.Uncertainty {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	b.WriteString("\n## Approval\n\n")
	switch u.Status {
	case SteeringPending:
		fmt.Fprintf(&b, "Not in effect. It takes effect only once a human approves it:\n\n    custodian approve %s --role TL --rationale TEXT\n\nor is rejected with `custodian resolve %s --role TL --rationale TEXT --action rerun`.\n", s.SliceID, s.SliceID)
	case SteeringApproved:
		b.WriteString("Approved: in effect.\n")
	default:
		b.WriteString("Rejected: not in effect.\n")
	}
	return b.String()
}

// AttachBranch records the feature branch holding a halted agent's work
// (the runner commits it there when the project is a git repository).
type AttachBranch struct {
	Slice  string `json:"slice,omitempty"`
	Agent  string `json:"agent,omitempty"`
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"` // the commit's hash, optional
}

// Actor is the agent whose work the branch holds.
func (o AttachBranch) Actor() string { return o.Agent }

func (o AttachBranch) apply(t *tx) error {
	ag, err := t.agent(o.Agent)
	if err != nil {
		return err
	}
	if !ValidBranch(o.Branch) {
		return reason.New(reason.InvalidInput, "feature branch %q is not a valid branch name", o.Branch)
	}
	if o.Commit != "" && !regexp.MustCompile(`^[0-9a-f]{7,64}$`).MatchString(o.Commit) {
		return reason.New(reason.InvalidInput, "commit %q is not a hex commit hash", o.Commit)
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if s.Status != Blocked || s.HaltedAgent != ag.Name || s.FailureMode != ModeBelowMinimum || ag.BelowAction != BelowFeatureBranch {
		return reason.New(reason.InvalidTransition, "slice %s is not halted by the %s agent below its minimum with a feature-branch action", s.SliceID, ag.Name)
	}
	s.FeatureBranch = o.Branch
	s.ReviewRequired = fmt.Sprintf("human code review of branch %s before it is merged (TL)", o.Branch)
	if o.Commit != "" {
		s.ReviewRequired = fmt.Sprintf("human code review of branch %s (commit %s) before it is merged (TL)", o.Branch, o.Commit)
	}
	if esc := s.OpenEscalation(); esc != nil {
		esc.FeatureBranch, esc.ReviewRequired = s.FeatureBranch, s.ReviewRequired
		t.out.Effects = append(t.out.Effects, EscalationEffects(s, esc)...)
	}
	t.touch(s)
	t.event("feature_branch", s.SliceID, ag.Name, map[string]any{"branch": o.Branch, "commit": o.Commit})
	t.summary("%s: the %s agent's work is on branch %s, for review", s.SliceID, ag.Name, o.Branch)
	return nil
}
