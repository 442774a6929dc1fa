package asdd

import "strings"

// What each operation says about itself (Op): its name, the slice it is
// about, whether it is a human decision, and the canonical form of its
// enumerated fields. A new operation gets a line in Ops and its methods
// here; the doors (wire, app, server, MCP, CLI) need no change.

// Ops returns a zero value of every operation type, in the order the
// documentation lists them.
func Ops() []Op {
	return []Op{
		Init{}, AddSlice{}, Quick{}, LockSlice{}, UnlockSlice{}, Beat{},
		Proposal{}, Resolve{}, Approve{}, AddTask{}, CompleteTask{},
		ClaimTask{}, ClearReview{}, CorrectAssumption{}, ReportFailure{},
		FlagDrift{}, AgentTimeout{}, ClearMarkers{}, AttachBranch{},
	}
}

// normalizer is an operation with enumerated fields (a phase, a status, a
// mode) that a caller may give in any case: Apply takes the canonical
// form, so that every door accepts what one does.
type normalizer interface {
	normalized() Op
}

// Normalize returns op with its enumerated fields in their canonical case
// (phases, statuses and modes upper case, a resolution's action lower
// case), as Apply reads them.
func Normalize(op Op) Op {
	if n, ok := op.(normalizer); ok {
		return n.normalized()
	}
	return op
}

func (Init) OpName() string        { return "init" }
func (Init) SliceID() string       { return "" }
func (Init) HumanDecision() string { return "init" }

func (AddSlice) OpName() string        { return "add-slice" }
func (o AddSlice) SliceID() string     { return o.ID }
func (AddSlice) HumanDecision() string { return "" }
func (o AddSlice) normalized() Op {
	o.Type, o.GovernanceMode = strings.ToUpper(o.Type), strings.ToUpper(o.GovernanceMode)
	return o
}

func (Quick) OpName() string        { return "quick" }
func (o Quick) SliceID() string     { return o.ID }
func (Quick) HumanDecision() string { return "" }

func (LockSlice) OpName() string        { return "lock" }
func (o LockSlice) SliceID() string     { return o.Slice }
func (LockSlice) HumanDecision() string { return "" }

func (UnlockSlice) OpName() string    { return "unlock" }
func (o UnlockSlice) SliceID() string { return o.Slice }

// HumanDecision: breaking another holder's lease is a human's; releasing
// one's own is not.
func (o UnlockSlice) HumanDecision() string {
	if o.Force {
		return "a forced unlock"
	}
	return ""
}

func (Beat) OpName() string { return "heartbeat" }

// SliceID is "": a heartbeat names the slice its agent works on, it does
// not change it.
func (Beat) SliceID() string       { return "" }
func (Beat) HumanDecision() string { return "" }
func (o Beat) normalized() Op {
	o.Status = strings.ToUpper(o.Status)
	return o
}

func (Proposal) OpName() string        { return "propose" }
func (p Proposal) SliceID() string     { return p.Slice }
func (Proposal) HumanDecision() string { return "" }
func (p Proposal) normalized() Op {
	p.To = strings.ToUpper(p.To)
	return p
}

func (Resolve) OpName() string        { return "resolve" }
func (o Resolve) SliceID() string     { return o.Slice }
func (Resolve) HumanDecision() string { return "resolve" }

// normalized: with no action, a phase to return to means return and a
// favoured agent resume (rerun otherwise, in apply).
func (o Resolve) normalized() Op {
	o.Action, o.ReturnTo = strings.ToLower(o.Action), strings.ToUpper(o.ReturnTo)
	switch {
	case o.Action != "":
	case o.ReturnTo != "":
		o.Action = ActionReturn
	case o.Favour != "":
		o.Action = ActionResume
	}
	return o
}

func (Approve) OpName() string        { return "approve" }
func (o Approve) SliceID() string     { return o.Slice }
func (Approve) HumanDecision() string { return "approve" }

func (AddTask) OpName() string        { return "add-task" }
func (o AddTask) SliceID() string     { return o.Slice }
func (AddTask) HumanDecision() string { return "" }

func (CompleteTask) OpName() string        { return "complete-task" }
func (o CompleteTask) SliceID() string     { return o.Slice }
func (CompleteTask) HumanDecision() string { return "" }

func (ClaimTask) OpName() string        { return "claim-task" }
func (o ClaimTask) SliceID() string     { return o.Slice }
func (ClaimTask) HumanDecision() string { return "" }

func (ClearReview) OpName() string { return "clear-review" }

// SliceID is "": a review is cleared of the project context or of a
// slice, and the doors show neither.
func (ClearReview) SliceID() string       { return "" }
func (ClearReview) HumanDecision() string { return "clear-review" }

func (CorrectAssumption) OpName() string        { return "correct-assumption" }
func (o CorrectAssumption) SliceID() string     { return o.Slice }
func (CorrectAssumption) HumanDecision() string { return "correct-assumption" }

func (ReportFailure) OpName() string        { return "halt" }
func (o ReportFailure) SliceID() string     { return o.Slice }
func (ReportFailure) HumanDecision() string { return "" }
func (o ReportFailure) normalized() Op {
	o.Mode = strings.ToUpper(o.Mode)
	return o
}

func (FlagDrift) OpName() string        { return "flag-drift" }
func (o FlagDrift) SliceID() string     { return o.Slice }
func (FlagDrift) HumanDecision() string { return "" }

func (AgentTimeout) OpName() string        { return "agent-timeout" }
func (AgentTimeout) SliceID() string       { return "" }
func (AgentTimeout) HumanDecision() string { return "" }

func (ClearMarkers) OpName() string        { return "clear-markers" }
func (ClearMarkers) SliceID() string       { return "" }
func (ClearMarkers) HumanDecision() string { return "" }

func (AttachBranch) OpName() string { return "attach-branch" }

// SliceID is "": the branch is recorded on the slice, which the runner
// that attaches it does not read back.
func (AttachBranch) SliceID() string       { return "" }
func (AttachBranch) HumanDecision() string { return "" }
