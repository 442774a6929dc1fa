package asdd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// Failure modes an agent detects and reports (seed 004's table).
const (
	ModeHallucinatedSpec      = "HALLUCINATED_SPEC_SECTION"
	ModeContradictorySteering = "CONTRADICTORY_STEERING_RULES"
)

// Reportable describes the failure modes an agent may report with
// ReportFailure: who detects it and the seed's response.
var Reportable = map[string]struct{ Detector, Detection, Response string }{
	ModeHallucinatedSpec:      {"validation", "Validation Agent detects undefined domain terms", "Block pipeline; flag section; notify TL"},
	ModeConflict:              {"design", "Design Agent output contradicts domain contract", "Pause pipeline; log conflict; escalate to TL"},
	ModeContradictorySteering: {"security", "Security Agent detects rule conflict", "Block deployment; log conflict; notify TL"},
}

// ReportFailure is an agent reporting a failure it detected (a
// hallucinated spec section, outputs that contradict each other,
// contradictory steering rules): the slice halts as for any failure mode,
// with the seed's response as the action required.
type ReportFailure struct {
	Agent     string     `json:"agent,omitempty"`
	Slice     string     `json:"slice,omitempty"`
	Mode      string     `json:"mode,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Flagged   []string   `json:"flagged,omitempty"`   // sections flagged (REQ-004, "## Settlement")
	Artifacts []Artifact `json:"artifacts,omitempty"` // the conflicting artifacts, listed in the notice
	// Marked maps artifact paths of the slice to the hash each will have
	// once marked DRAFT — AGENT HALTED (MarkContent), as the door read them;
	// the marked phase artifacts' new hashes are recorded from it.
	Marked map[string]string `json:"marked,omitempty"`
}

// Actor is the reporting agent.
func (o ReportFailure) Actor() string { return o.Agent }

func (o ReportFailure) apply(t *tx) error {
	ag, err := t.agent(o.Agent)
	if err != nil {
		return err
	}
	r, ok := Reportable[o.Mode]
	if !ok {
		modes := make([]string, 0, len(Reportable))
		for m := range Reportable {
			modes = append(modes, m)
		}
		slices.Sort(modes)
		return reason.New(reason.InvalidInput, "failure mode %q cannot be reported (one of %s)", o.Mode, strings.Join(modes, ", "))
	}
	if strings.TrimSpace(o.Reason) == "" {
		return reason.New(reason.InvalidInput, "a failure report needs a reason")
	}
	if err := checkArtifacts(o.Artifacts); err != nil {
		return err
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if err := t.checkLock(s, ag.Name); err != nil {
		return err
	}
	if s.Status == Blocked {
		return t.haltedError(s, ag.Name)
	}
	if !Active(s.Status) {
		return reason.New(reason.InvalidTransition, "slice %s is %s", s.SliceID, s.Status)
	}
	var flagged, arts []string
	for _, f := range o.Flagged {
		if strings.TrimSpace(f) != "" {
			flagged = append(flagged, "flagged: "+f)
		}
	}
	for _, a := range o.Artifacts {
		arts = append(arts, a.Path)
	}
	for p, hs := range o.Marked {
		if err := CleanPath(p); err != nil {
			return err
		}
		if !hashRE().MatchString(hs) {
			return reason.New(reason.InvalidInput, "marked hash %q of %s is not sha256:<64 hex>", hs, p)
		}
	}
	// Seed 004's rollback procedure, step 1: the current phase's artifact
	// is marked DRAFT — AGENT HALTED. That is what the report names (the
	// reporting agent's output, not accepted: it goes to halted_artifacts,
	// as a halted proposal's does); a report that names none marks the
	// phase's accepted artifacts (docs/manifest.md).
	halted := map[string]string{}
	marks := map[string]string{}
	record := func(p, hs string) {
		if hs == "" {
			return
		}
		if s.ArtifactHashes == nil {
			s.ArtifactHashes = map[string]string{}
		}
		s.ArtifactHashes[p] = hs
	}
	if len(o.Artifacts) > 0 {
		for _, a := range o.Artifacts {
			halted[a.Name] = a.Path
			marks[a.Path] = a.SHA256
			record(a.Path, a.MarkedSHA256)
		}
	} else {
		halted = t.cfg.PhaseArtifacts(s, s.Status)
		for _, p := range halted {
			marks[p] = s.ArtifactHashes[p]
			record(p, o.Marked[p])
		}
	}
	t.halt(s, haltSpec{
		mode: o.Mode, agent: ag.Name, phase: s.Status, resume: s.Status,
		reason: fmt.Sprintf("the %s agent reports: %s", ag.Name, o.Reason),
		action: r.Response, route: t.cfg.Escalation, uncertainty: flagged, arts: arts,
		halted: halted, marks: marks, marker: DefaultMarker,
	})
	t.beat(ag.Name)
	return nil
}
