package asdd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

// The configuration is state too: init pins the SHA-256 of
// .asdd/config.yaml in the manifest; a configuration changed behind the
// custodian (a minimum lowered so that 0.70 passes) decides nothing —
// every operation is STATE_DRIFT — until a human accepts it, which is a
// journaled commit like any other.
func TestConfigChangedBehindTheCustodianDecidesNothing(t *testing.T) {
	w := newWorld(t)
	if got := w.m.ProjectContext.ConfigSHA256; got != DefaultConfig().SHA256() || got == "" {
		t.Fatalf("init pinned %q, want the config's %q", got, DefaultConfig().SHA256())
	}
	w.do(AddSlice{ID: "S"})
	lowered, err := ParseConfig(bytes.Replace(DefaultConfigYAML, []byte("min_confidence: 0.85"), []byte("min_confidence: 0.60"), 1))
	if err != nil {
		t.Fatal(err)
	}
	w.cfg = lowered
	for _, op := range []Op{
		prop("discovery", "S", 0.70, artsFor("discovery", "S")...),
		AddSlice{ID: "T"},
		Beat{Agent: "spec", Status: HeartbeatActive},
		Approve{Slice: "S", Role: "TL", Rationale: "x"},
		ClearReview{Role: "TL", Rationale: "x"},
	} {
		if e := w.reject(op, reason.StateDrift); e.Details["path"] != ConfigPath {
			t.Fatalf("%T: %v", op, e)
		}
	}
	w.reject(ClearReview{Role: "TL", Config: true}, reason.InvalidInput)                     // no rationale
	w.reject(ClearReview{Role: "intern", Rationale: "x", Config: true}, reason.InvalidInput) // not a role
	w.reject(ClearReview{Slice: "S", Role: "TL", Rationale: "x", Config: true}, reason.InvalidInput)
	out := w.do(ClearReview{Role: "TL", Rationale: "discovery may be rougher this sprint", Config: true})
	if w.m.ProjectContext.ConfigSHA256 != lowered.SHA256() || len(out.Events) != 1 || out.Events[0].Type != "config_accepted" {
		t.Fatalf("after acceptance: pin %q, events %+v", w.m.ProjectContext.ConfigSHA256, out.Events)
	}
	w.reject(ClearReview{Role: "TL", Rationale: "again", Config: true}, reason.InvalidTransition)
	w.do(prop("discovery", "S", 0.70, artsFor("discovery", "S")...)) // the accepted rules
	// A hand edit of the pin is refused like any rule-owned member.
	prev, _ := Encode(w.m)
	m, _ := decodeLoose(prev)
	m["project_context"].(map[string]any)["config_sha256"] = DefaultConfig().SHA256()
	edited, _ := json.Marshal(m)
	if err := CheckDirectEdit(prev, edited); reason.CodeOf(err) != reason.InvalidTransition {
		t.Fatalf("a hand edit of the pin: %v", err)
	}
	// A configuration built by hand (not read from a file) is not checked.
	w.cfg = &Config{}
	*w.cfg = *lowered
	w.cfg.source = ""
	w.do(AddSlice{ID: "U"})
}

// The pin covers what decides the rules, not what only `custodian run`
// reads nor how the file is written: giving the agents a command (as the
// README's walkthrough does right after init) or a comment leaves it as
// it was; a lowered minimum, a gate or direct_edits do not.
func TestConfigPinCoversTheRulesOnly(t *testing.T) {
	base, err := ParseConfig(DefaultConfigYAML)
	if err != nil {
		t.Fatal(err)
	}
	if base.SHA256() != DefaultConfig().SHA256() {
		t.Fatalf("the default file and no file differ: %s %s", base.SHA256(), DefaultConfig().SHA256())
	}
	for _, tc := range []struct {
		name string
		yaml string
		same bool
	}{
		{"a comment", string(DefaultConfigYAML) + "\n# by hand\n", true},
		{"agents given a command", string(DefaultConfigYAML) + "\nagent_defaults:\n  command: [./agents/run.sh]\n  timeout: 3s\n", true},
		{"a minimum lowered", strings.Replace(string(DefaultConfigYAML), "min_confidence: 0.85", "min_confidence: 0.60", 1), false},
		{"direct edits rejected", string(DefaultConfigYAML) + "\ndirect_edits: reject\n", false},
		{"the refinement loop", strings.Replace(string(DefaultConfigYAML), "refinement_loop_limit: 3", "refinement_loop_limit: 9", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if (c.SHA256() == base.SHA256()) != tc.same {
				t.Fatalf("sum %s, default %s: want same=%v", c.SHA256(), base.SHA256(), tc.same)
			}
		})
	}
}
