package asdd

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/custodian-dev/custodian/reason"
)

// PatchOp is one operation of an RFC 6902 patch.
type PatchOp struct {
	Op    string         `json:"op"`
	Path  string         `json:"path"`
	Value jsontext.Value `json:"value,omitzero"`
}

// Patch returns the RFC 6902 patch from prev to next, a manifest Apply or
// ApplyFinalized made from prev, from what the operation changed: the
// slices it copied or added (SlicesChanged, else a comparison of the
// slices' pointers), the heartbeats whose pointers differ, the project
// context and the revision. Only those parts are encoded, and each is
// checked against its part of the schema (the rest passed before), so a
// heartbeat on a manifest of a thousand slices costs what the heartbeat
// changed. ok is false when next is not made from prev that way (slices
// removed, unknown members changed): the caller encodes and validates the
// whole manifest instead (Encode).
func Patch(prev, next *Manifest) (patch []byte, ok bool, err error) {
	if len(next.Slices) < len(prev.Slices) || !bytes.Equal(prev.Extra, next.Extra) || (prev.Extra == nil) != (next.Extra == nil) {
		return nil, false, nil
	}
	var ops []PatchOp
	changed, known := next.SlicesChanged(prev)
	if !known {
		changed = nil
		for i, s := range next.Slices {
			if i >= len(prev.Slices) || s != prev.Slices[i] {
				changed = append(changed, i)
			}
		}
	}
	added := false
	for _, i := range changed {
		s := next.Slices[i]
		if s == nil {
			return nil, false, reason.New(reason.InvalidInput, "encoded manifest fails its schema: slices[%d] is null", i)
		}
		if i < len(prev.Slices) && s == prev.Slices[i] {
			continue
		}
		at := "/slices/" + strconv.Itoa(i)
		b, err := Marshal(s)
		if err != nil {
			return nil, false, fmt.Errorf("encode manifest: slice %s: %w", s.SliceID, err)
		}
		if !SliceSurelyValid(s) {
			if err := ValidatePart(PartSlice, b, at); err != nil {
				return nil, false, err
			}
		}
		op := "replace"
		if i >= len(prev.Slices) {
			op, added = "add", true
		}
		ops = append(ops, PatchOp{Op: op, Path: at, Value: b})
	}
	if added {
		seen := make(map[string]bool, len(next.Slices))
		for i, s := range next.Slices {
			if seen[s.SliceID] {
				return nil, false, reason.New(reason.InvalidInput, "encoded manifest fails its schema: slices[%d]: duplicate slice_id %q", i, s.SliceID)
			}
			seen[s.SliceID] = true
		}
	}
	if !sameContext(&prev.ProjectContext, &next.ProjectContext) {
		b, err := Marshal(&next.ProjectContext)
		if err != nil {
			return nil, false, fmt.Errorf("encode manifest: project_context: %w", err)
		}
		if err := ValidatePart(PartContext, b, "/project_context"); err != nil {
			return nil, false, err
		}
		ops = append(ops, PatchOp{Op: "replace", Path: "/project_context", Value: b})
	}
	// Heartbeats added or changed (in key order), then those removed.
	for _, k := range slices.Sorted(maps.Keys(next.AgentHeartbeats)) {
		h := next.AgentHeartbeats[k]
		if h == nil {
			return nil, false, reason.New(reason.InvalidInput, "encoded manifest fails its schema: agent_heartbeats.%s is null", k)
		}
		if prev.AgentHeartbeats[k] == h {
			continue
		}
		at := "/agent_heartbeats/" + escapePointer(k)
		b, err := Marshal(h)
		if err != nil {
			return nil, false, fmt.Errorf("encode manifest: heartbeat %s: %w", k, err)
		}
		if !HeartbeatSurelyValid(h) {
			if err := ValidatePart(PartHeartbeat, b, at); err != nil {
				return nil, false, err
			}
		}
		ops = append(ops, PatchOp{Op: "add", Path: at, Value: b})
	}
	for _, k := range slices.Sorted(maps.Keys(prev.AgentHeartbeats)) {
		if _, ok := next.AgentHeartbeats[k]; !ok {
			ops = append(ops, PatchOp{Op: "remove", Path: "/agent_heartbeats/" + escapePointer(k)})
		}
	}
	if next.Revision != prev.Revision {
		// "add" sets the member whether or not the document has one: a
		// manifest another tool wrote may have none.
		ops = append(ops, PatchOp{Op: "add", Path: "/revision", Value: jsontext.Value(strconv.FormatUint(next.Revision, 10))})
	}
	if len(ops) == 0 {
		return []byte("[]"), true, nil
	}
	b, err := marshal(ops)
	if err != nil {
		return nil, false, fmt.Errorf("encode patch: %w", err)
	}
	return b, true, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// sameContext reports whether two project contexts certainly encode alike
// (Apply copies the context on every operation, so pointers say nothing).
func sameContext(a, b *ProjectContext) bool {
	scoreEq := a.GlobalConfidenceScore == b.GlobalConfidenceScore ||
		a.GlobalConfidenceScore != nil && b.GlobalConfidenceScore != nil &&
			math.Float64bits(*a.GlobalConfidenceScore) == math.Float64bits(*b.GlobalConfidenceScore)
	return scoreEq && a.CurrentSprint == b.CurrentSprint && a.ConfigSHA256 == b.ConfigSHA256 &&
		slices.Equal(a.ProductGoals, b.ProductGoals) && (a.ProductGoals == nil) == (b.ProductGoals == nil) &&
		slices.Equal(a.NeedsHumanReview, b.NeedsHumanReview) && (a.NeedsHumanReview == nil) == (b.NeedsHumanReview == nil) &&
		(a.Extra == nil) == (b.Extra == nil) && bytes.Equal(a.Extra, b.Extra)
}
