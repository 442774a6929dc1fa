package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
)

// TestReadCommandsPrintOnlyDataOnStdout: a read command that finds a
// direct edit to adopt (or a state.json replaced by its temp file) tells
// so on stderr, and its stdout is the data alone: it parses as JSON, as
// `custodian state read | jq` and the plugins' callers need.
func TestReadCommandsPrintOnlyDataOnStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testbin.Path(t)
	edit := func(p *proc, key, from, to string) {
		full := filepath.Join(p.dir, filepath.FromSlash(key))
		b, err := os.ReadFile(full)
		if err != nil || !bytes.Contains(b, []byte(from)) {
			t.Fatalf("%s: %v\n%s", key, err, b)
		}
		if err := os.WriteFile(full, bytes.Replace(b, []byte(from), []byte(to), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	asdd := func(p *proc) {
		p.want(0, "init", "--sprint", "S1")
		p.want(0, "slice", "add", "SLICE-001", "--name", "Login")
		edit(p, ".asdd/state/manifest.json", `"S1"`, `"S2"`)
	}
	impl := func(p *proc) {
		p.want(0, "impl", "--init", "--plan-path", "docs/plan.md", "--plan-number", "1", "--plan-title", "Auth")
		p.want(0, "impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "login")
		edit(p, ".impl/manifest.json", `"login"`, `"login page"`)
	}
	state := func(p *proc) {
		p.want(0, "state", "init", "Add rate limiting")
		p.want(0, "state", "update", `{"currentStage":"PLAN"}`)
		// The state-manager's write cut short: state.json gone, its temp
		// file complete (seed 002's recovery).
		full := filepath.Join(p.dir, ".agents", "tmp", "state.json")
		b, err := os.ReadFile(full)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(full)
		if err := os.WriteFile(full+".tmp", bytes.Replace(b, []byte(`"PLAN"`), []byte(`"IMPLEMENT"`), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cycle := func(p *proc) {
		p.want(0, "cycle", "create", "Implement OAuth", "--id", "c1")
		edit(p, ".workflow/.cycle/c1.json", `"Implement OAuth"`, `"Implement OAuth login"`)
	}
	for _, c := range []struct {
		setup func(*proc)
		args  []string
	}{
		{asdd, []string{"get", ".asdd/state/manifest.json"}},
		{asdd, []string{"--json", "status"}},
		{asdd, []string{"--json", "history", ".asdd/state/manifest.json"}},
		{asdd, []string{"--json", "slice", "show", "SLICE-001"}},
		{impl, []string{"get", ".impl/manifest.json"}},
		{impl, []string{"--json", "impl", "--get-task", "--task-id", "1.1"}},
		{impl, []string{"--json", "impl", "--list-tasks"}},
		{impl, []string{"--json", "impl", "--summary"}},
		{impl, []string{"--json", "history", ".impl/manifest.json"}},
		{state, []string{"state", "read"}},
		{state, []string{"get", ".agents/tmp/state.json"}},
		{state, []string{"--json", "history", ".agents/tmp/state.json"}},
		{cycle, []string{"--json", "cycle", "show", "c1"}},
		{cycle, []string{"--json", "cycle", "list"}},
		{cycle, []string{"get", ".workflow/.cycle/c1.json"}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			p := &proc{t: t, bin: bin, dir: t.TempDir()}
			c.setup(p)
			cmd := exec.Command(bin, append([]string{"-C", p.dir}, c.args...)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Fatal(err)
				}
				t.Fatalf("exit %d\n%s%s", exit.ExitCode(), stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), "adopted as revision") {
				t.Errorf("no notice of the adopted edit on stderr: %q", stderr.String())
			}
			var v any
			if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
				t.Fatalf("stdout is not JSON (%v):\n%s", err, stdout.String())
			}
		})
	}
}
