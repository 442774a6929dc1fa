package asdd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

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

// The members the rules own are derived from the types the rules write
// (their JSON names), so that a member a new rule adds is owned from the
// start: every member of Slice but the ones a direct edit may change
// (sliceEditable), every member of ProjectContext but the sprint and the
// goals, and the manifest's own members but project_context and slices
// (checked member by member). A member the custodian does not know (kept
// in Extra) is the editor's.
var (
	sliceEditable   = []string{"name", "description", "updated_at"}
	projectEditable = []string{"current_sprint", "product_goals"}

	sliceOwned    = sync.OnceValue(func() []string { return owned(reflect.TypeFor[Slice](), sliceEditable) })
	projectOwned  = sync.OnceValue(func() []string { return owned(reflect.TypeFor[ProjectContext](), projectEditable) })
	manifestOwned = sync.OnceValue(func() []string {
		return owned(reflect.TypeFor[Manifest](), []string{"project_context", "slices"})
	})
)

// jsonMembers returns the JSON member names of a struct type's fields (not
// the inline Extra, nor fields never serialized).
func jsonMembers(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" {
			continue
		}
		out = append(out, name)
	}
	return out
}

func owned(t reflect.Type, editable []string) []string {
	return slices.DeleteFunc(jsonMembers(t), func(k string) bool { return slices.Contains(editable, k) })
}

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
	for _, k := range manifestOwned() {
		if !reflect.DeepEqual(p[k], n[k]) {
			return refuse(k, "heartbeats are reported with `custodian heartbeat`; the revision is the custodian's")
		}
	}
	pc, _ := p["project_context"].(map[string]any)
	nc, _ := n["project_context"].(map[string]any)
	for _, k := range projectOwned() {
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
		for _, k := range sliceOwned() {
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
	case "steering_updates":
		return "a steering update is approved or rejected by a human with `custodian approve` / `custodian resolve`"
	case "confidence_chain_history":
		return "the chain's history is the rules' record of earlier attempts"
	case "feature_branch", "review_required":
		return "the feature branch is attached by `custodian run` after a halt and cleared by the resolution"
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
