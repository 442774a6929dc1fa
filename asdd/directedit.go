package asdd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// A manifest written behind the custodian's back (a direct edit: an
// editor, a script) is adopted as a commit only when it passes this rule
// (docs/store.md, "Direct edits"): it may change what no rule decides — a
// slice's name or description, the sprint, the product goals, members the
// custodian does not know — and nothing the rules own. What the rules own
// changes only through the operations that check them (propose, resolve,
// approve, lock, tasks, heartbeat…): a direct edit that moves a slice to
// DONE is refused, whatever the schema allows.

// sliceEditable are the members of a slice a direct edit may change; the
// other members the custodian knows are the rules'.
var sliceEditable = []string{"name", "description", "updated_at"}

// sliceKnown are the members of a slice the custodian writes.
var sliceKnown = []string{
	"slice_id", "name", "type", "status", "governance_mode", "phase_data", "confidence_chain", "ccs",
	"blockers", "dissent_notices", "reasoning_traces", "blocked_at_phase", "lkg_phase", "block_reason",
	"uncertainty_factors", "rollback_timestamp", "failure_mode", "halted_agent", "action_required",
	"paused_agents", "halted_artifacts", "resume_phase", "sign_offs_required", "sign_offs", "escalation_id",
	"validation_status", "requirements_validated", "requirements_corrected", "requirements_missing",
	"assumptions", "description", "artifact_hashes", "lock", "attempts", "raised_minimums", "tasks",
	"escalations", "needs_human_review", "created_at", "updated_at",
}

// projectOwned are the project context's members the rules compute.
var projectOwned = []string{"global_confidence_score", "needs_human_review"}

// CheckDirectEdit reports whether next, a manifest found on disk in place
// of prev (the committed one), changes only what a direct edit may: an
// INVALID_TRANSITION naming the first member it may not change otherwise.
func CheckDirectEdit(prev, next []byte) error {
	p, err := decodeLoose(prev)
	if err != nil {
		return nil // a damaged committed value binds nothing
	}
	n, err := decodeLoose(next)
	if err != nil {
		return reason.New(reason.InvalidInput, "the edited manifest does not parse: %v", err)
	}
	refuse := func(what, how string) error {
		return reason.New(reason.InvalidTransition, "a direct edit may not change %s: %s", what, how).With("member", what)
	}
	for _, k := range []string{"agent_heartbeats", "revision"} {
		if !reflect.DeepEqual(p[k], n[k]) {
			return refuse(k, "heartbeats are reported with `custodian heartbeat`; the revision is the custodian's")
		}
	}
	pc, _ := p["project_context"].(map[string]any)
	nc, _ := n["project_context"].(map[string]any)
	for _, k := range projectOwned {
		if !reflect.DeepEqual(pc[k], nc[k]) {
			return refuse("project_context."+k, "it is computed by the rules (or cleared with `custodian review --project`)")
		}
	}
	ps, ns := slicesByID(p), slicesByID(n)
	for id := range ns {
		if _, ok := ps[id]; !ok {
			return refuse("the slices", fmt.Sprintf("slice %s is added with `custodian slice add`", id))
		}
	}
	for id, before := range ps {
		after, ok := ns[id]
		if !ok {
			return refuse("the slices", fmt.Sprintf("slice %s was removed; slices are never removed by hand", id))
		}
		for _, k := range sliceKnown {
			if slices.Contains(sliceEditable, k) {
				continue
			}
			if !reflect.DeepEqual(before[k], after[k]) {
				return refuse(fmt.Sprintf("%s of slice %s", k, id), ownerOf(k))
			}
		}
	}
	return nil
}

// ownerOf says which operations change a slice member.
func ownerOf(k string) string {
	switch k {
	case "status", "confidence_chain", "ccs", "artifact_hashes", "attempts", "raised_minimums", "phase_data":
		return "it changes with an agent's `custodian propose` (the lifecycle, the gates and the confidence chain are checked there)"
	case "lock":
		return "leases change with `custodian lock` / `custodian unlock`"
	case "tasks":
		return "tasks change with `custodian tasks add|complete`"
	case "needs_human_review":
		return "review marks are cleared with `custodian review`"
	}
	return "it is the rules' (halts, escalations and sign-offs change with `custodian halt`, `resolve` and `approve`)"
}

func decodeLoose(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func slicesByID(m map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	list, _ := m["slices"].([]any)
	for i, s := range list {
		obj, ok := s.(map[string]any)
		if !ok {
			continue
		}
		id, _ := obj["slice_id"].(string)
		if strings.TrimSpace(id) == "" {
			id = fmt.Sprintf("#%d", i)
		}
		out[id] = obj
	}
	return out
}
