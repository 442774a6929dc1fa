package asdd

import (
	"fmt"
	"strings"
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

// A large manifest is validated slice by slice, with the same words and
// the slice's place in the document.
func TestValidateLargeManifestNamesTheSlice(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"project_context":{},"agent_heartbeats":{},"slices":[`)
	for i := range 400 {
		if i > 0 {
			b.WriteByte(',')
		}
		ccs := "0.5"
		if i == 321 {
			ccs = "1.5"
		}
		fmt.Fprintf(&b, `{"slice_id":"S-%d","status":"SPEC","ccs":%s,"description":%q}`, i, ccs, strings.Repeat("x", 200))
	}
	b.WriteString(`]}`)
	if b.Len() <= wholeBelow {
		t.Fatalf("the manifest is %d bytes, not above %d", b.Len(), wholeBelow)
	}
	err := Validate([]byte(b.String()))
	want := "INVALID_INPUT: manifest does not match its schema: at /slices/321/ccs: maximum: got 1.5, want 1"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	dup := strings.Replace(b.String(), `"slice_id":"S-7"`, `"slice_id":"S-3"`, 1)
	dup = strings.Replace(dup, `"ccs":1.5`, `"ccs":1`, 1)
	err = Validate([]byte(dup))
	want = `INVALID_INPUT: manifest does not match its schema: slices[7]: duplicate slice_id "S-3"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
