package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/version"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every command that has subcommands, at any depth, answers an unknown word
// or a bare noun with exit 2 and a message naming the command.
func TestUnknownSubcommandEverywhere(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	root := NewRoot(&cmdutil.App{Now: time.Now})
	var nouns [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			nouns = append(nouns, path)
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(root, nil)
	if len(nouns) < 8 {
		t.Fatalf("only %d commands with subcommands found: %v", len(nouns), nouns)
	}
	for _, path := range nouns {
		name := strings.Join(append([]string{"custodian"}, path...), " ")
		_, stderr, code := runCLI(dir, "", now, append(path, "nosuchcommand", "x")...)
		if code != 2 || !strings.Contains(stderr, `unknown command "nosuchcommand" for "`+name+`"`) {
			t.Errorf("%s nosuchcommand: exit %d, stderr %q; want exit 2 and unknown command", name, code, stderr)
		}
		if len(path) == 0 {
			continue
		}
		_, stderr, code = runCLI(dir, "", now, path...)
		if code != 2 || !strings.Contains(stderr, name+" needs a subcommand: ") {
			t.Errorf("bare %s: exit %d, stderr %q; want exit 2 and the list of subcommands", name, code, stderr)
		}
	}
}

func TestUnknownSubcommandSuggests(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tasks", "complete", "SLICE-001", "T1"}, `custodian: unknown command "complete" for "custodian tasks": did you mean "done"? (custodian tasks: add, claim, done, ready)`},
		{[]string{"slcie", "list"}, `custodian: unknown command "slcie" for "custodian": did you mean "slice"? (see custodian --help)`},
		{[]string{"slice", "foo"}, `custodian: unknown command "foo" for "custodian slice" (custodian slice: add, list, show)`},
		{[]string{"state", "foo"}, `custodian: unknown command "foo" for "custodian state" (custodian state: compact, init, read, record-failure, record-output, update)`},
		{[]string{"cycle", "creat"}, `custodian: unknown command "creat" for "custodian cycle": did you mean "create"? (see custodian cycle --help)`},
		{[]string{"hook", "instal"}, `custodian: unknown command "instal" for "custodian hook": did you mean "install"? (custodian hook: claude, doctor, install, uninstall)`},
	} {
		_, stderr, code := runCLI(dir, "", now, tc.args...)
		if code != 2 || strings.TrimSpace(stderr) != tc.want {
			t.Errorf("custodian %s: exit %d\n got %q\nwant %q", strings.Join(tc.args, " "), code, strings.TrimSpace(stderr), tc.want)
		}
	}
	// The bare root is the overview, exit 0.
	out, _, code := runCLI(dir, "", now)
	if code != 0 || !strings.Contains(out, "Available Commands:") {
		t.Errorf("bare custodian: exit %d, %q", code, out)
	}
}

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	out, _, code := runCLI(dir, "", now, "version")
	if code != 0 || !strings.HasPrefix(out, "custodian ") || !strings.Contains(out, " go1.") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	flagOut, _, code := runCLI(dir, "", now, "--version")
	if code != 0 || flagOut != out {
		t.Errorf("--version: exit %d, %q; want %q", code, flagOut, out)
	}
	js, _, code := runCLI(dir, "", now, "version", "--json")
	var b version.BuildInfo
	if err := json.Unmarshal([]byte(js), &b); err != nil || code != 0 || b.Version == "" || b.Go == "" || b.Platform == "" {
		t.Errorf("version --json: exit %d, %q (%v)", code, js, err)
	}
	// The one-line form names the commit, its date and a linked build date.
	s := version.BuildInfo{Version: "v1.2.0", Commit: "0123456789abcdef0123", Modified: true, CommitDate: "2026-11-25T17:00:00Z", BuildDate: "2026-11-25T18:00:00Z", Go: "go1.26.8", Platform: "linux/amd64"}.String()
	if want := "custodian v1.2.0 (commit 0123456789ab-dirty, committed 2026-11-25T17:00:00Z, built 2026-11-25T18:00:00Z) go1.26.8 linux/amd64"; s != want {
		t.Errorf("String:\n got %q\nwant %q", s, want)
	}
}

// Every enumerated flag, on every command, rejects a value outside its set
// while the flags are parsed: INVALID_INPUT, exit 2, the allowed values
// named, nothing created; a value in another case is accepted.
func TestEnumeratedFlags(t *testing.T) {
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	root := NewRoot(&cmdutil.App{Now: time.Now})
	type flagAt struct {
		path    []string
		name    string
		allowed []string
	}
	var found []flagAt
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if ev, ok := f.Value.(*cmdutil.EnumValue); ok {
				found = append(found, flagAt{path, f.Name, ev.Allowed})
			}
		})
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(root, nil)
	want := map[string]bool{"slice list --status": true, "slice add --type": true, "heartbeat --status": true, "resolve --action": true, "resolve --to": true, "halt --mode": true, "run --until": true, "serve --log-level": true, "cycle change --action": true, "cycle feedback --type": true, "hook install --scope": true, "hook uninstall --scope": true, "hook doctor --scope": true, "mcp --log-level": true}
	for _, f := range found {
		delete(want, strings.Join(f.path, " ")+" --"+f.name)
	}
	if len(want) > 0 {
		t.Errorf("not enumerated: %v", want)
	}
	for _, f := range found {
		dir := t.TempDir()
		args := append(append([]string(nil), f.path...), "--"+f.name, "FOO")
		out, stderr, code := runCLI(dir, "", now, args...)
		wantMsg := `custodian: INVALID_INPUT: --` + f.name + ` "FOO" is not valid: allowed values are ` + strings.Join(f.allowed, ", ")
		// An ASDD operation's refusal also says that nothing changed.
		if code != 2 || strings.Replace(strings.TrimSpace(stderr), "rejected, nothing changed: ", "", 1) != wantMsg {
			t.Errorf("custodian %s: exit %d, stdout %q\n got %q\nwant %q", strings.Join(args, " "), code, out, strings.TrimSpace(stderr), wantMsg)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("custodian %s created %v", strings.Join(args, " "), entries)
		}
		js, _, _ := runCLI(dir, "", now, append([]string{"--json"}, args...)...)
		if !strings.Contains(js, `"code": "INVALID_INPUT"`) {
			t.Errorf("custodian %s --json: %s", strings.Join(args, " "), js)
		}
	}

	// The case does not matter, the canonical spelling is kept.
	dir := t.TempDir()
	if _, stderr, code := runCLI(dir, "", now, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	if _, stderr, code := runCLI(dir, "", now, "slice", "add", "SLICE-001", "--type", "retro_spec"); code != 0 {
		t.Fatalf("slice add --type retro_spec: exit %d %s", code, stderr)
	}
	out, stderr, code := runCLI(dir, "", now, "slice", "list", "--status", "behavior_capture")
	if code != 0 || !strings.Contains(out, "SLICE-001") || !strings.Contains(out, "RETRO_SPEC") {
		t.Errorf("slice list --status behavior_capture: exit %d %q %q", code, out, stderr)
	}
}

// In a directory with no project, the commands that need one create
// nothing (no .asdd/state/.lock, no .asdd/runs/runner.lock) and say to run
// custodian init.
func TestNoProject(t *testing.T) {
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	for _, args := range [][]string{
		{"slice", "add", "SLICE-001"},
		{"slice", "list"},
		{"propose", "--agent", "spec", "--slice", "SLICE-001", "--score", "0.9"},
		{"run"},
		{"run", "--dry-run"},
		{"run", "--quick", "Fix a typo"},
		{"quick", "Fix a typo"},
		{"heartbeat", "--agent", "spec"},
		{"lock", "SLICE-001", "--holder", "spec"},
		{"tasks", "add", "SLICE-001", "T1", "--wave", "1"},
		{"resolve", "SLICE-001", "--role", "TL", "--rationale", "ok"},
		{"status"},
	} {
		dir := t.TempDir()
		_, stderr, code := runCLI(dir, "", now, args...)
		want := "custodian: NOT_FOUND: no ASDD manifest at .asdd/state/manifest.json: run `custodian init` first\n"
		if code != 3 || strings.Replace(stderr, "rejected, nothing changed: ", "", 1) != want {
			t.Errorf("custodian %s: exit %d, %q; want exit 3, %q", strings.Join(args, " "), code, stderr, want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("custodian %s left %v behind", strings.Join(args, " "), entries)
		}
	}
}

// After custodian init, `git add -A` stages the configuration, the manifest
// and its journal, and nothing a run or a lock leaves behind.
func TestInitGitignore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	git("init", "-q")
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	if _, stderr, code := runCLI(dir, "", now, "init"); code != 0 {
		t.Fatalf("init: %s", stderr)
	}
	// What a run and the daemon leave behind.
	for _, f := range []string{".asdd/runs/runner.lock", ".asdd/runs/runner.json", ".asdd/runs/20261125-180000/001-SLICE-001-spec-1.json", ".asdd/runs/20261125-180000/001-SLICE-001-spec-1.log", ".asdd/state/.lock", ".asdd/state/statcache", ".asdd/state/custodian.sock", ".asdd/state/manifest.json.tmp"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "-A")
	staged := strings.Fields(git("diff", "--cached", "--name-only"))
	// The journal's anchor (.head) is versioned with the journal: a
	// checkout that rewinds one rewinds the other.
	want := []string{".asdd/config.yaml", ".asdd/state/.gitignore", ".asdd/state/.head", ".asdd/state/journal.ndjson", ".asdd/state/manifest.json"}
	if strings.Join(staged, " ") != strings.Join(want, " ") {
		t.Errorf("git add -A staged %v, want %v", staged, want)
	}
}

// custodian watch follows from now by default (--from REV for history) and
// refuses a document that does not exist instead of waiting forever.
func TestWatchFromNow(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	for _, args := range [][]string{{"init"}, {"slice", "add", "SLICE-001"}} {
		if _, stderr, code := runCLI(dir, "", now, args...); code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	type result struct {
		out, stderr string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, stderr, code := runCLI(dir, "", now, "watch", "--count", "1")
		done <- result{out, stderr, code}
	}()
	// Commit until the watcher (which started at revision 2) has seen one.
	deadline := time.After(20 * time.Second)
	var got result
	for i := 3; ; i++ {
		if _, stderr, code := runCLI(dir, "", now, "heartbeat", "--agent", "spec"); code != 0 {
			t.Fatalf("heartbeat: %s", stderr)
		}
		select {
		case got = <-done:
		case <-time.After(100 * time.Millisecond):
			continue
		case <-deadline:
			t.Fatal("watch printed nothing")
		}
		break
	}
	if got.code != 0 || strings.HasPrefix(got.out, "1\t") || strings.HasPrefix(got.out, "2\t") || !strings.Contains(got.out, "heartbeat") {
		t.Errorf("watch from now: exit %d, %q %q; want a heartbeat commit after revision 2", got.code, got.out, got.stderr)
	}
	out, _, code := runCLI(dir, "", now, "watch", "--from", "0", "--count", "2")
	if code != 0 || !strings.HasPrefix(out, "1\t") || !strings.Contains(out, "\n2\t") {
		t.Errorf("watch --from 0: exit %d, %q", code, out)
	}
	_, stderr, code := runCLI(dir, "", now, "watch", "--key", "nope.json")
	if code != 3 || !strings.Contains(stderr, "NOT_FOUND: no document nope.json to watch") {
		t.Errorf("watch --key nope.json: exit %d, %q", code, stderr)
	}
}

// --role is the role that signs off and --by the person, in every command
// that takes a role (resolve, approve, review, unlock, assumption correct).
func TestRoleAndBy(t *testing.T) {
	root := NewRoot(&cmdutil.App{Now: time.Now})
	withRole := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.LocalFlags().Lookup("role"); f != nil {
			withRole++
			if !strings.Contains(f.Usage, "role") {
				t.Errorf("%s --role: %q does not name a role", c.CommandPath(), f.Usage)
			}
			if by := c.LocalFlags().Lookup("by"); by != nil && !strings.Contains(by.Usage, "person") {
				t.Errorf("%s --by: %q; with --role, --by is the person", c.CommandPath(), by.Usage)
			}
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	if withRole < 4 {
		t.Errorf("only %d commands take --role", withRole)
	}
	// review --by ROLE, as it was spelled before, says what changed.
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	_, stderr, code := runCLI(dir, "", now, "review", "SLICE-001", "--by", "TL")
	if code != 2 || !strings.Contains(stderr, "review needs --role ROLE") {
		t.Errorf("review --by TL: exit %d, %q", code, stderr)
	}
}

// Wording: a quick fix that stays in QUICK_FIX says so (not "QUICK_FIX →
// QUICK_FIX"); run with nothing to do says so instead of an empty table.
func TestWording(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	must := func(args ...string) string {
		t.Helper()
		out, stderr, code := runCLI(dir, "", now, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, stderr)
		}
		return out
	}
	must("init")
	if out := must("run"); strings.Contains(out, "SLICE") || !strings.Contains(out, "nothing to run: no slice is waiting for an agent") {
		t.Errorf("run with nothing to do:\n%s", out)
	}
	must("quick", "Fix a typo in the login header")
	out := must("propose", "--agent", "implementation", "--slice", "QUICK-001", "--score", "0.96")
	if want := "revision 3: QUICK-001 (quick fix): implementation scored 0.960 in QUICK_FIX\n"; out != want {
		t.Errorf("quick proposal: %q, want %q", out, want)
	}
}

// A binary built from a git checkout reports its commit and, when the
// release build sets it, its build date.
func TestVersionOfABuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	head, err := exec.Command("git", "-C", filepath.Join("..", "..", "..", ".."), "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	// A clone, as a user builds from (go does not stamp a git worktree's
	// checkout: its .git is a file).
	root := filepath.Join(t.TempDir(), "clone")
	if out, err := exec.Command("git", "clone", "-q", filepath.Join("..", "..", "..", ".."), root).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	bin := filepath.Join(t.TempDir(), "custodian")
	// -trimpath: the compiled packages do not depend on the clone's
	// directory, so the go command's cache serves them from one run of
	// the tests to the next (it changes nothing of what version says).
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-ldflags", "-X github.com/custodian-dev/custodian/cmd/custodian/internal/cli/version.buildDate=2026-11-25T18:00:00Z", "-o", bin, "./cmd/custodian")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	commit := strings.TrimSpace(string(head))[:12]
	if !strings.HasPrefix(string(out), "custodian ") || !strings.Contains(string(out), "commit "+commit) || !strings.Contains(string(out), "built 2026-11-25T18:00:00Z") {
		t.Errorf("version: %q; want commit %s and the build date", out, commit)
	}
	flag, _ := exec.Command(bin, "--version").Output()
	if string(flag) != string(out) {
		t.Errorf("--version %q, version %q", flag, out)
	}
}
