package cli

// What a new user meets in the first minutes and every day after: a
// command run in the wrong directory, a port taken, a key mistyped, a
// path given from a subdirectory.

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/testbin"
)

var firstUseNow = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// serve in a directory that is no project refuses with the init hint, as
// every other command does, and creates nothing there.
func TestServeOutsideAProjectRefusesAndCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI(dir, "", firstUseNow, "serve", "--addr", "", "--monitor-every", "0")
	if code != 3 || !strings.Contains(stderr, "NOT_FOUND") || !strings.Contains(stderr, "custodian init") {
		t.Fatalf("serve outside a project: exit %d, %q; want exit 3 with the init hint", code, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("serve created %v", entries)
	}
}

// serve on a TCP address another process holds says which address, that
// --addr picks another, and, when a custodian daemon answers its health
// check there, says so.
func TestServeOnATakenAddressSaysWhoHoldsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken := l.Addr().String()
	dir := t.TempDir()
	if _, stderr, code := runCLI(dir, "", firstUseNow, "init"); code != 0 {
		t.Fatal(stderr)
	}
	_, stderr, code := runCLI(dir, "", firstUseNow, "serve", "--addr", taken, "--socket", "", "--monitor-every", "0")
	l.Close()
	for _, want := range []string{"CONFLICT", taken, "--addr", "another process listens there"} {
		if code != 4 || !strings.Contains(stderr, want) {
			t.Fatalf("serve on a taken port: exit %d, %q; want exit 4 naming %q", code, stderr, want)
		}
	}

	other := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	other.want(0, "init")
	l, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	d := startServe(t, other.dir, "--addr", addr)
	defer func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		d.wait(t)
	}()
	_, stderr, code = runCLI(dir, "", firstUseNow, "serve", "--addr", addr, "--socket", "", "--monitor-every", "0")
	if code != 4 || !strings.Contains(stderr, "a custodian daemon") || !strings.Contains(stderr, addr) || !strings.Contains(stderr, "--addr") {
		t.Fatalf("serve where a daemon listens: exit %d, %q; want exit 4 saying a custodian daemon answers at %s", code, stderr, addr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".asdd", "state", "custodian.sock")); !os.IsNotExist(err) {
		t.Fatalf("a socket was left behind: %v", err)
	}
}

// check and verify in a directory that is no project fail with NOT_FOUND
// (exit 3) and the init hint, instead of passing having checked nothing: a
// CI job pointed at the wrong directory goes red. They write nothing there.
func TestCheckAndVerifyOutsideAProjectFail(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"check"}, {"check", "--full"}, {"check", "--read-only"}, {"verify"}, {"--json", "verify"}} {
		stdout, stderr, code := runCLI(dir, "", firstUseNow, args...)
		if code != 3 || !strings.Contains(stdout+stderr, "NOT_FOUND") || !strings.Contains(stdout+stderr, "no custodian project at or above "+dir) || !strings.Contains(stdout+stderr, "custodian init") {
			t.Errorf("custodian %s outside a project: exit %d\n%s%s\nwant exit 3, NOT_FOUND naming %s and the init hint", strings.Join(args, " "), code, stdout, stderr, dir)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("check or verify created %v", entries)
	}
	// In a project without documents verify has nothing to say, and says so.
	if stdout, stderr, code := runCLI(dir, "", firstUseNow, "init"); code != 0 {
		t.Fatal(stdout, stderr)
	}
	if stdout, stderr, code := runCLI(dir, "", firstUseNow, "verify"); code != 0 || !strings.Contains(stdout, "ok") {
		t.Fatalf("verify in a project: exit %d\n%s%s", code, stdout, stderr)
	}
}

// check only reports: a drifted slice stays as it is, with no escalation
// notice, unless --halt; --no-halt, from when check halted by default, is
// still accepted and changes nothing.
func TestCheckOnlyReportsUnlessHalt(t *testing.T) {
	p := newIP(t)
	p.must("init")
	p.must("slice", "add", "S-1")
	p.write(".asdd/specs/S-1/intent.md", "# S — intent\n")
	p.must("propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.96", "--artifact", "intent=.asdd/specs/S-1/intent.md")
	p.write(".asdd/specs/S-1/intent.md", "# S — intent, edited by hand\n")
	before := p.statuses()["S-1"]
	for _, args := range [][]string{{"check"}, {"check", "--full"}, {"check", "--no-halt"}, {"check", "--full", "--no-halt"}, {"check", "--read-only"}} {
		out, errOut, code := p.run(args...)
		if code != 5 || !strings.Contains(out, "STATE_DRIFT") || strings.Contains(out, "halted") {
			t.Fatalf("custodian %s: exit %d\n%s%s\nwant exit 5 reporting STATE_DRIFT, halting nothing", strings.Join(args, " "), code, out, errOut)
		}
		if got := p.statuses()["S-1"]; got != before {
			t.Fatalf("custodian %s moved S-1 from %s to %s", strings.Join(args, " "), before, got)
		}
		if entries, _ := os.ReadDir(p.path(".asdd/escalations")); len(entries) != 0 {
			t.Fatalf("custodian %s wrote escalation notices %v", strings.Join(args, " "), entries)
		}
	}
	out, _, code := p.run("check", "--halt")
	if code != 5 || !strings.Contains(out, "halted S-1") || p.statuses()["S-1"] != "BLOCKED" {
		t.Fatalf("check --halt: exit %d, S-1 %s\n%s", code, p.statuses()["S-1"], out)
	}
	if _, _, code := p.run("check", "--halt", "--read-only"); code != 2 {
		t.Fatalf("check --halt --read-only: exit %d, want 2", code)
	}
	if help, _, _ := p.run("check", "--help"); strings.Contains(help, "  --no-halt") || !strings.Contains(help, "  --halt ") {
		t.Fatalf("check --help lists --no-halt among its flags or lacks --halt:\n%s", help)
	}
}

// A yes/no flag's help never shows a value after it: pflag takes the first
// backquoted word of a usage as the value's name, so `hook install --help`
// once read "--claude custodian hook claude".
func TestYesNoFlagsShowNoValueInHelp(t *testing.T) {
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() != "bool" {
				return
			}
			seen++
			if name, _ := pflag.UnquoteUsage(f); name != "" {
				t.Errorf("%s --%s: help shows a value %q after a yes/no flag (usage %q)", c.CommandPath(), f.Name, name, f.Usage)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewRoot(&cmdutil.App{Now: time.Now}))
	if seen < 20 {
		t.Fatalf("only %d yes/no flags found", seen)
	}
	stdout, _, _ := runCLI(t.TempDir(), "", firstUseNow, "hook", "install", "--help")
	if !strings.Contains(stdout, "--claude ") || strings.Contains(stdout, "--claude custodian") {
		t.Errorf("hook install --help:\n%s", stdout)
	}
}

// Wherever an install hint names the module's go install …@latest (which
// works only once the module is published), the clone's go install
// ./cmd/… (which works today) comes first: the README, the docs and the
// pre-commit hook's message when custodian is not on PATH. (The demo's
// hint: internal/cli/demo's TestCommandName.)
func TestInstallHintsNameTheCloneFirst(t *testing.T) {
	texts := map[string]string{}
	docs, _ := filepath.Glob("../../../../docs/*.md")
	for _, p := range append(docs, "../../../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts[p] = string(b)
	}
	if _, err := exec.LookPath("git"); err == nil {
		dir := t.TempDir()
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		if _, stderr, code := runCLI(dir, "", firstUseNow, "hook", "install"); code != 0 {
			t.Fatalf("hook install: %s", stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, ".git", "hooks", "pre-commit"))
		if err != nil {
			t.Fatal(err)
		}
		texts["the pre-commit hook"] = string(b)
	}
	hints := 0
	for name, text := range texts {
		for i := 0; ; {
			j := strings.Index(text[i:], "/cmd/custodian")
			if j < 0 {
				break
			}
			i += j + len("/cmd/custodian")
			rest := text[i:]
			if !strings.HasPrefix(rest, "@latest") && !strings.HasPrefix(rest, "-hook@latest") {
				continue
			}
			hints++
			before := text[max(0, i-800):i] // the same paragraph or the one before
			if !strings.Contains(before, "go install ./cmd/custodian") {
				t.Errorf("%s: %q names the module's install without the clone's go install ./cmd/… before it", name, strings.TrimSpace(text[max(0, i-120):min(len(text), i+20)]))
			}
		}
	}
	if hints < 3 {
		t.Fatalf("only %d install hints found", hints)
	}
}

// The document commands say what went wrong in words a user can act on: a
// revision before the first commit gives the valid range; an unknown key
// lists the keys there are (and suggests the one it is the end of); a
// missing KEY says what is expected; the short names asdd, impl, state and
// cycle/<id> work in get, history, diff, rollback, watch and verify alike;
// apply on a document with operations names them.
func TestDocumentCommandsExplainKeysAndRevisions(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S-1")
	e.must("impl", "--init", "--plan-path", "plans/p.md", "--plan-number", "1", "--plan-title", "P")
	e.must("state", "init", "the task")

	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"get", ".asdd/state/manifest.json", "--at", "0"}, 3, []string{"before its first commit", "revisions are 1–2", "custodian history"}},
		{[]string{"get", "asdd", "--at", "0"}, 3, []string{"revisions are 1–2"}},
		{[]string{"history", "manifest.json"}, 3, []string{"no document manifest.json", "did you mean .asdd/state/manifest.json or .impl/manifest.json?", ".agents/tmp/state.json", "short names: asdd, impl, state, cycle/<id>"}},
		{[]string{"get", "nope.json"}, 3, []string{"no document nope.json;", "the documents here: .agents/tmp/state.json, .asdd/state/manifest.json, .impl/manifest.json"}},
		{[]string{"history"}, 2, []string{"history needs the document's KEY: custodian history KEY", ".impl/manifest.json", "short names"}},
		{[]string{"get"}, 2, []string{"get needs the document's KEY"}},
		{[]string{"diff", "asdd", "1"}, 2, []string{"diff needs REV2 after the KEY: custodian diff KEY REV1 REV2"}},
		{[]string{"rollback", "--to", "1", "--reason", "x"}, 2, []string{"rollback needs the document's KEY"}},
		{[]string{"watch", "--key", "cycle/c-1"}, 3, []string{"no document cycle/c-1 (.workflow/.cycle/c-1.json) to watch", "the documents here:"}},
		{[]string{"apply", "--key", "asdd", "--jq", ".x = 1"}, 2, []string{"custodian slice add, propose", "not a jq program"}},
		{[]string{"apply", "--key", ".impl/manifest.json", "--jq", ".x = 1"}, 2, []string{"custodian impl --init, --add-task, --update-status"}},
	} {
		stdout, stderr, code := e.run(tc.args...)
		for _, w := range tc.want {
			if code != tc.code || !strings.Contains(stderr, w) {
				t.Errorf("custodian %s: exit %d\n%s%s\nwant exit %d and %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.code, w)
				break
			}
		}
		if strings.Contains(stderr, "accepts 1 arg(s)") || strings.Contains(stderr, "indent:") {
			t.Errorf("custodian %s: %s", strings.Join(tc.args, " "), stderr)
		}
	}

	// The short names read the same documents as the keys.
	for short, key := range map[string]string{"asdd": ".asdd/state/manifest.json", "impl": ".impl/manifest.json", "state": ".agents/tmp/state.json"} {
		for _, args := range [][]string{{"get", "%s"}, {"get", "%s", "--at", "1"}, {"history", "%s"}, {"diff", "%s", "1", "1"}, {"verify", "%s"}} {
			byKey, byShort := make([]string, len(args)), make([]string, len(args))
			for i, a := range args {
				byKey[i], byShort[i] = strings.ReplaceAll(a, "%s", key), strings.ReplaceAll(a, "%s", short)
			}
			want := e.must(byKey...)
			if got := e.must(byShort...); got != want {
				t.Errorf("custodian %s differs from custodian %s:\n%s\n---\n%s", strings.Join(byShort, " "), strings.Join(byKey, " "), got, want)
			}
		}
	}
	e.must("cycle", "create", "Do it", "--id", "c-1")
	if got, want := e.must("history", "cycle/c-1"), e.must("history", ".workflow/.cycle/c-1.json"); got != want {
		t.Errorf("history cycle/c-1:\n%s\nwant\n%s", got, want)
	}
	e.must("slice", "add", "S-2")
	out := e.must("rollback", "asdd", "--to", "2", "--reason", "undo S-2")
	if !strings.Contains(out, ".asdd/state/manifest.json rolled back to revision 2") {
		t.Errorf("rollback asdd: %s", out)
	}
	e.want(0, "watch", "--key", "asdd", "--from", "0", "--count", "1")
}

// Artifact and trace paths are taken from the current directory, as git
// takes paths: intent.md given in docs/ is docs/intent.md in the manifest,
// and an error names the path it resolved to.
func TestArtifactPathsAreTakenFromTheCurrentDirectory(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S-1")
	e.must("slice", "add", "S-2")
	e.write("docs/intent.md", "# intent\n")
	e.write("docs/traces/S-1.md", "# trace\n")
	e.write("README.md", "# top\n")
	docs := filepath.Join(e.dir, "docs")
	run := func(args ...string) (string, string, int) {
		var out, errb strings.Builder
		code := Run(&cmdutil.App{Out: &out, Err: &errb, Now: func() time.Time { return firstUseNow }}, append([]string{"-C", docs}, args...))
		return out.String(), errb.String(), code
	}
	_, stderr, code := run("propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.96", "--artifact", "intent=missing.md")
	if code != 5 || !strings.Contains(stderr, "docs/missing.md does not exist") {
		t.Fatalf("a missing artifact from docs/: exit %d, %q; want the resolved path docs/missing.md", code, stderr)
	}
	if _, stderr, code := run("propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.96", "--artifact", "intent=intent.md", "--trace", "traces/S-1.md"); code != 0 {
		t.Fatalf("propose from docs/: exit %d, %s", code, stderr)
	}
	// From docs/, ../README.md and the absolute path of a file in the
	// project are inside it; ../../x is not, and is refused naming ../x.
	if _, stderr, code := run("propose", "--agent", "discovery", "--slice", "S-2", "--score", "0.96", "--artifact", "intent=../README.md", "--artifact", "notes="+filepath.Join(docs, "intent.md")); code != 0 {
		t.Fatalf("propose ../README.md and an absolute path: exit %d, %s", code, stderr)
	}
	m := e.manifest()
	s1, s2 := m.Slice("S-1"), m.Slice("S-2")
	if s1.PhaseData["intent"] != "docs/intent.md" || s2.PhaseData["intent"] != "README.md" || s2.PhaseData["notes"] != "docs/intent.md" {
		t.Errorf("phase data: S-1 %v, S-2 %v; want docs/intent.md, README.md and docs/intent.md", s1.PhaseData, s2.PhaseData)
	}
	if traces := e.read(".asdd/state/manifest.json"); !strings.Contains(traces, `"docs/traces/S-1.md"`) {
		t.Errorf("the trace is not recorded as docs/traces/S-1.md")
	}
	_, stderr, code = run("quick", "a fix", "--artifact", "x=../../outside.md")
	if code == 0 || !strings.Contains(stderr, "../outside.md") {
		t.Errorf("an artifact outside the project: exit %d, %q; want a refusal naming ../outside.md", code, stderr)
	}
	out, stderr, code := run("--json", "halt", "S-2", "--agent", "design", "--mode", "CONFLICTING_AGENT_OUTPUTS", "--reason", "contradicts the contract", "--artifact", "design=intent.md")
	if code != 0 || !strings.Contains(out, `"docs/intent.md"`) {
		t.Errorf("halt from docs/: exit %d\n%s%s\nwant the artifact as docs/intent.md", code, out, stderr)
	}
}

// A rollback of the ASDD manifest changes only the manifest: the
// escalation notice and the failure-log row of a rolled-back halt stay (the
// record of what happened), and the rollback lists them, in text and JSON;
// its help says so.
func TestRollbackListsTheEscalationNoticesItLeaves(t *testing.T) {
	e := newASDDEnv(t)
	e.must("init")
	e.must("slice", "add", "S-1")
	e.write("specs/i.md", "# intent\n")
	e.want(3, "propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.5", "--artifact", "intent=specs/i.md")
	notices, _ := filepath.Glob(filepath.Join(e.dir, ".asdd", "escalations", "*.md"))
	if len(notices) != 1 {
		t.Fatalf("escalation notices: %v", notices)
	}
	notice := ".asdd/escalations/" + filepath.Base(notices[0])
	before, failureLog := e.read(notice), e.read("docs/agent-failure-log.md")
	out := e.must("rollback", "asdd", "--to", "2", "--reason", "undo the halt")
	if !strings.Contains(out, "left in place: 1 escalation notice and its row in docs/agent-failure-log.md") || !strings.Contains(out, notice+"  OPEN, no longer in the manifest") {
		t.Errorf("rollback output:\n%s", out)
	}
	if e.read(notice) != before || e.read("docs/agent-failure-log.md") != failureLog {
		t.Error("the rollback changed the notice or the failure log")
	}
	if len(e.manifest().Slice("S-1").Escalations) != 0 {
		t.Error("the manifest still names the escalation")
	}
	// Rolled forward again, through --json: the escalation is back in the
	// manifest, nothing is listed.
	out = e.must("--json", "rollback", "asdd", "--to", "3", "--reason", "redo")
	var res struct {
		Left []map[string]string `json:"escalations_left"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Left == nil || len(res.Left) != 0 {
		t.Errorf("rollback --json: %v %s", err, out)
	}
	if help := e.must("rollback", "--help"); !strings.Contains(help, "escalation notices") || !strings.Contains(help, "agent-failure-log.md") {
		t.Errorf("rollback --help does not say what stays:\n%s", help)
	}
}
