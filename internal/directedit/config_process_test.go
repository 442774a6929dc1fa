package directedit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/testbin"
)

// The config is state too: a script lowering a minimum in
// .asdd/config.yaml (as `perl -pi -e` would) does not let a 0.70 pass.
// Every operation is STATE_DRIFT (exit 5) and `custodian verify` fails
// until a human accepts the new config with `custodian approve --config`,
// a journaled commit; then the accepted rules apply.
func TestConfigEditedBehindTheCustodianDecidesNothingUntilAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	p := &project{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want("init")
	p.want("slice", "add", "S-1")
	intent := filepath.Join(p.dir, ".asdd", "specs", "s1", "intent.md")
	os.MkdirAll(filepath.Dir(intent), 0o755)
	os.WriteFile(intent, []byte("# intent\n"), 0o644)
	propose := []string{"propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.70",
		"--artifact", "intent=.asdd/specs/s1/intent.md", "--uncertainty", "unsure"}

	cfgPath := filepath.Join(p.dir, filepath.FromSlash(asdd.ConfigPath))
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	lowered := bytes.Replace(b, []byte("min_confidence: 0.85"), []byte("min_confidence: 0.60"), 1)
	if bytes.Equal(lowered, b) {
		t.Fatal("the config has no discovery minimum of 0.85")
	}
	if err := os.WriteFile(cfgPath, lowered, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{propose, {"verify"}, {"slice", "add", "S-2"}} {
		out, code := p.run(args...)
		if code != 5 || !strings.Contains(out, asdd.ConfigPath) {
			t.Fatalf("%v with the config changed: exit %d, want 5 naming the config\n%s", args, code, out)
		}
		t.Logf("%v: exit %d: %s", args, code, strings.TrimSpace(out))
	}
	p.want("approve", "--config", "--role", "TL", "--rationale", "discovery may be rougher this sprint")
	if hist := p.want("history", asdd.Key); !strings.Contains(hist, "accepted "+asdd.ConfigPath) {
		t.Fatalf("the acceptance is not in the history:\n%s", hist)
	}
	p.want(propose...) // the accepted rules: 0.70 passes 0.60
	p.want("verify")
}
