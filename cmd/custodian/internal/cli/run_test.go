package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

// runGolden compares got with testdata/run/name (-update rewrites).
func runGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "run", name)
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got; go test -update rewrites it):\n%s", path, d)
	}
}

var cfgAgentLine = regexp.MustCompile(`(?m)^  - name: (\w+)\n`)

// withCommands is the default configuration with a command for every agent
// but the knowledge and domain agents (domain neither completes nor gates
// DESIGN: it is skipped).
func withCommands() string {
	return cfgAgentLine.ReplaceAllStringFunc(string(asdd.DefaultConfigYAML), func(m string) string {
		switch cfgAgentLine.FindStringSubmatch(m)[1] {
		case "knowledge", "domain":
			return m
		}
		return m + "    command: [./agents/run.sh, --fast]\n"
	})
}

// The dry run: the projected runs of each slice from its committed state,
// as text and JSON; nothing starts, nothing is committed.
func TestRunDryRunGolden(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.write(asdd.ConfigPath, withCommands())
	e.must("slice", "add", "SLICE-001", "--name", "Login")
	e.must("slice", "add", "SLICE-002", "--name", "Reports")
	e.write("specs/intent.md", "# intent\n")
	e.must("propose", "--agent", "discovery", "--slice", "SLICE-002", "--score", "0.97", "--artifact", "intent=specs/intent.md")
	e.must("tasks", "add", "SLICE-002", "T1", "--wave", "1")
	e.must("tasks", "add", "SLICE-002", "T2", "--wave", "2", "--depends-on", "T1")
	e.must("slice", "add", "SLICE-003", "--name", "Halted")
	e.write("specs/low.md", "# low\n")
	e.want(3, "propose", "--agent", "discovery", "--slice", "SLICE-003", "--score", "0.5", "--artifact", "intent=specs/low.md", "--uncertainty", "vague")
	rev := e.manifest().Revision
	e.log.Reset()
	e.must("run", "--dry-run")
	e.must("run", "--dry-run", "SLICE-002", "--until", "ci_cd")
	e.must("--json", "run", "--dry-run", "SLICE-001", "--until", "VALIDATION")
	runGolden(t, "dry_run.golden", e.log.String())
	if m := e.manifest(); m.Revision != rev {
		t.Errorf("the dry run committed: revision %d, was %d", m.Revision, rev)
	}
	// Only the .gitignore custodian init wrote.
	if entries, _ := os.ReadDir(filepath.Join(e.dir, ".asdd", "runs")); len(entries) != 1 || entries[0].Name() != ".gitignore" {
		t.Errorf("the dry run wrote run files: %v", entries)
	}
}

func TestRunUsage(t *testing.T) {
	e := newASDDEnv(t)
	e.want(int(reason.ExitCode(appl.ErrNoManifest)), "run", "--dry-run")
	e.must("init")
	e.must("slice", "add", "S")
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run", "S", "--quick", "fix"}, 2, "--quick records its own slice"},
		{[]string{"run", "--quick", "fix", "--dry-run"}, 2, "do not go together"},
		{[]string{"run", "--until", "CODING"}, 2, `--until "CODING" is not valid: allowed values are DISCOVERY, SPEC,`},
		{[]string{"run", "--dry-run", "--until", "CODING"}, 2, `--until "CODING" is not valid`},
		{[]string{"run", "NOPE"}, 3, "no slice"},
	} {
		out := e.want(c.code, c.args...)
		if !strings.Contains(out, c.msg) {
			t.Errorf("%v: %q lacks %q", c.args, out, c.msg)
		}
	}
	// No agent has a command in the default configuration: the slice stops
	// and says why, nothing runs.
	out := e.want(3, "run", "S")
	if !strings.Contains(out, "has no command in .asdd/config.yaml") {
		t.Errorf("default config run:\n%s", out)
	}
}
