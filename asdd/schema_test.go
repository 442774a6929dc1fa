package asdd

import (
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// A manifest that fails its schema is refused with INVALID_INPUT naming
// the innermost member that fails and why, in the same words whichever
// part (whole document, one slice, one heartbeat) is checked.
func TestValidateNamesTheMemberAndTheReason(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"project_context":{},"slices":[{"slice_id":"A","status":"SPEC","ccs":1.2}],"agent_heartbeats":{}}`,
			"manifest does not match its schema: at /slices/0/ccs: maximum: got 1.2, want 1"},
		{`{"project_context":{"global_confidence_score":"x"},"slices":[],"agent_heartbeats":{}}`,
			"manifest does not match its schema: at /project_context/global_confidence_score: got string, want number"},
		{`{"project_context":{},"slices":[{"status":"SPEC"}],"agent_heartbeats":{}}`,
			"manifest does not match its schema: at /slices/0: missing property 'slice_id'"},
		{`{"project_context":{},"slices":[{"slice_id":"A","status":"NOPE"}],"agent_heartbeats":{}}`,
			"manifest does not match its schema: at /slices/0/status: value must be one of 'DISCOVERY', 'SPEC', 'VALIDATION', 'DESIGN', 'IMPLEMENTATION', 'CI_CD', 'OBSERVABILITY', 'DONE', 'BLOCKED', 'PARTIAL', 'QUICK_FIX', 'BEHAVIOR_CAPTURE', 'NEEDS_HUMAN_REVIEW'"},
		{`{"project_context":{},"slices":[{"slice_id":"A","status":"BLOCKED"}],"agent_heartbeats":{}}`,
			"manifest does not match its schema: at /slices/0: missing properties 'blocked_at_phase', 'lkg_phase', 'block_reason', 'rollback_timestamp'"},
		{`{"project_context":{},"slices":[{"slice_id":"","status":"SPEC"}],"agent_heartbeats":{}}`,
			"manifest does not match its schema: at /slices/0/slice_id: '' does not match pattern '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$'"},
		{`{"project_context":{},"slices":[],"agent_heartbeats":{"spec":{"last_execution":"t","status":"ACTIVE","tasks_completed":-1}}}`,
			"manifest does not match its schema: at /agent_heartbeats/spec/tasks_completed: minimum: got -1, want 0"},
		{`{"project_context":{},"slices":[],"agent_heartbeats":{"spec":{"status":"ACTIVE"}}}`,
			"manifest does not match its schema: at /agent_heartbeats/spec: missing property 'last_execution'"},
		{`{"slices":[]}`,
			"manifest does not match its schema: at /: missing properties 'project_context', 'agent_heartbeats'"},
		{`[1]`, "manifest does not match its schema: at /: got array, want object"},
		{`{"project_context":{},"slices":[{"slice_id":"A","status":"SPEC"},{"slice_id":"A","status":"SPEC"}],"agent_heartbeats":{}}`,
			`manifest does not match its schema: slices[1]: duplicate slice_id "A"`},
		{`{"project_context":{},"slices":[],"agent_heartbeats":{}} x`,
			"manifest is not valid JSON: invalid character 'x' after top-level value"},
	} {
		err := Validate([]byte(tc.doc))
		if reason.CodeOf(err) != reason.InvalidInput || err.Error() != "INVALID_INPUT: "+tc.want {
			t.Errorf("%s:\n got %v\nwant INVALID_INPUT: %s", tc.doc, err, tc.want)
		}
	}
	if err := Validate([]byte(`{"project_context":{},"slices":[{"slice_id":"A","status":"SPEC","ccs":0.5}],"agent_heartbeats":{}}`)); err != nil {
		t.Errorf("a valid manifest: %v", err)
	}
}

// A part validated on its own names its place in the manifest.
func TestValidatePartNamesItsPlace(t *testing.T) {
	err := validatePart(partSlice, []byte(`{"slice_id":"A","status":"SPEC","ccs":-0.5}`), "/slices/7")
	want := "encoded manifest fails its schema: manifest does not match its schema: at /slices/7/ccs: minimum: got -0.5, want 0"
	if reason.CodeOf(err) != reason.InvalidInput || err.Error() != "INVALID_INPUT: "+want {
		t.Errorf("got %v\nwant INVALID_INPUT: %s", err, want)
	}
}
