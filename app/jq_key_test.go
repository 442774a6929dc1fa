package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// `apply` (a jq program) changes only the documents on its one list, the
// agent state and the dev cycles, in direct mode as through the daemon:
// any other JSON file of the project (package.json, the hook's settings,
// a file in the custodian's state or escalation directories, a cycle's
// progress file, git's files) is INVALID_INPUT and is neither created nor
// changed; the manifests change only through their operations.
func TestApplyChangesOnlyTheDocumentsOnItsList(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		p.write(t, "package.json", `{"name":"app"}`)
		p.write(t, ".claude/settings.json", `{"hooks":{"PreToolUse":[]}}`)
		if _, err := p.svc.UpdateState(p.ctx(false), wire.StateRequest{Op: "init", Task: "auth"}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, key := range []string{"package.json", ".claude/settings.json", ".asdd/state/evil.json", ".asdd/escalations/x.json",
			".workflow/.cycle/cycle-v1-20261125T120000-abcdef.progress/ep/plan.json", ".git/info/x.json", ".asdd/state/manifest.json",
			".impl/manifest.json", ".agents/tmp/state.json"} {
			program := `del(.hooks) | .evil = true`
			if key == ".agents/tmp/state.json" {
				program = `.currentPhase = "1.1"`
			}
			_, err := p.svc.ApplyJQ(p.ctx(false), wire.JQRequest{Key: key, Program: program})
			got = append(got, key+": "+string(reason.CodeOf(err)))
		}
		want := []string{"package.json: INVALID_INPUT", ".claude/settings.json: INVALID_INPUT", ".asdd/state/evil.json: INVALID_INPUT",
			".asdd/escalations/x.json: INVALID_INPUT", ".workflow/.cycle/cycle-v1-20261125T120000-abcdef.progress/ep/plan.json: INVALID_INPUT",
			".git/info/x.json: INVALID_INPUT", ".asdd/state/manifest.json: INVALID_INPUT", ".impl/manifest.json: INVALID_INPUT", ".agents/tmp/state.json: "}
		for i := range want {
			if i >= len(got) || got[i] != want[i] {
				t.Errorf("apply: got %q, want %q", got, want)
				break
			}
		}
		for _, f := range []string{".asdd/state/evil.json", ".asdd/escalations/x.json", ".git/info/x.json", ".workflow"} {
			if _, err := os.Lstat(filepath.Join(p.root, f)); err == nil {
				t.Errorf("%s was created", f)
			}
		}
		for f, content := range map[string]string{"package.json": `{"name":"app"}`, ".claude/settings.json": `{"hooks":{"PreToolUse":[]}}`} {
			if b, _ := os.ReadFile(filepath.Join(p.root, f)); string(b) != content {
				t.Errorf("%s changed: %s", f, b)
			}
		}
		return got
	})
}
