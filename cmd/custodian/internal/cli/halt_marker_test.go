package cli

import (
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
)

// `custodian halt` marks DRAFT — AGENT HALTED on the artifacts the report
// names (the design the design agent found conflicting), not on the
// accepted spec; once the design agent passes again after `resolve
// --action rerun`, the marker is gone from its artifact, and `check` finds
// every recorded hash true both times.
func TestHaltMarksTheNamedArtifactUntilItsAgentPasses(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S2")
	e.advance("S2", "discovery", "spec", "validation", "domain")
	const design, spec = ".asdd/specs/S2/design.md", ".asdd/specs/S2/requirements.md"
	e.write(design, "# design of S2\n")
	specBefore := e.read(spec)
	e.must("halt", "S2", "--agent", "design", "--mode", "CONFLICTING_AGENT_OUTPUTS", "--reason", "the design contradicts the domain contract", "--artifact", "design="+design)
	if got := e.read(design); !strings.HasPrefix(got, asdd.DefaultMarker+"\n\n") {
		t.Errorf("the named artifact is not marked: %q", got)
	}
	if got := e.read(spec); got != specBefore {
		t.Errorf("the accepted spec was changed by the halt: %q", got)
	}
	if out := e.want(0, "check"); !strings.HasPrefix(out, "clean") {
		t.Errorf("check after the halt:\n%s", out)
	}
	e.must("resolve", "S2", "--role", "TL", "--rationale", "redo the design", "--action", "rerun")
	// The design agent runs again and passes, with the file as it left it.
	e.must("propose", "--agent", "design", "--slice", "S2", "--score", "0.97", "--artifact", "design="+design)
	if got := e.read(design); got != "# design of S2\n" {
		t.Errorf("the marker stayed after the design agent passed: %q", got)
	}
	if got := e.read(spec); got != specBefore {
		t.Errorf("the accepted spec: %q", got)
	}
	if out := e.want(0, "check"); !strings.HasPrefix(out, "clean") {
		t.Errorf("check after the design passed:\n%s", out)
	}
}
