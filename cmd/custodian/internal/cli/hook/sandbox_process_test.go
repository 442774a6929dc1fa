package hook_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/managed"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// srtTool returns Anthropic's sandbox runtime CLI (srt, which reads the
// filesystem and network settings of Claude Code's sandbox block) with Node
// first on PATH, installed by .ci/install in testdata/npm. Missing, or with
// a bubblewrap that cannot run, the test is skipped on a developer's
// machine and FAILS in CI ($CI set).
func srtTool(t *testing.T) (srt, nodeBin string) {
	t.Helper()
	need := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("CI") != "" {
			t.Fatalf("%s, but $CI is set: the real-sandbox tests must run in CI (.ci/install installs bubblewrap, socat, ripgrep and npm ci in cmd/custodian/internal/cli/hook/testdata/npm)", msg)
		}
		t.Skip(msg)
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "srt")); err != nil {
		need("srt is not installed: run `npm ci --prefix cmd/custodian/internal/cli/hook/testdata/npm` (as .ci/install does)")
	}
	for _, b := range []string{"bwrap", "socat", "rg"} {
		if _, err := exec.LookPath(b); err != nil {
			need("%s is not installed (apt-get install bubblewrap socat ripgrep)", b)
		}
	}
	if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "true").CombinedOutput(); err != nil {
		need("bubblewrap cannot run here (no user namespaces?): %v %s", err, out)
	}
	return filepath.Join(dir, "srt"), dir
}

// sandboxProject is a project whose state lives under the custodian, with
// the Claude Code protection installed, its daemon started by the
// SessionStart hook, and a sandbox configured as the settings say.
type sandboxProject struct {
	t        *testing.T
	dir, srt string
	env      []string
	settings string // the srt settings file
}

func (p *sandboxProject) run(sandboxed bool, script string) (string, int) {
	p.t.Helper()
	for try := 1; ; try++ {
		out, code := p.runOnce(sandboxed, script)
		// srt checks its dependencies (bwrap, socat, rg) by running
		// them, with a deadline a loaded machine can miss: then the
		// command did not run at all, and runs again.
		if !sandboxed || !strings.Contains(out, "Sandbox dependencies not available") || try == 5 {
			return out, code
		}
		p.t.Logf("srt's dependency check failed (try %d), again: %s", try, strings.TrimSpace(out))
	}
}

func (p *sandboxProject) runOnce(sandboxed bool, script string) (string, int) {
	p.t.Helper()
	var cmd *exec.Cmd
	if sandboxed {
		cmd = exec.Command(p.srt, "--settings", p.settings, "-c", script)
	} else {
		cmd = exec.Command("bash", "-c", script)
	}
	cmd.Dir, cmd.Env = p.dir, p.env
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		p.t.Fatalf("%s: %v", script, err)
	}
	return string(out), code
}

func (p *sandboxProject) must(sandboxed bool, script string) string {
	p.t.Helper()
	out, code := p.run(sandboxed, script)
	if code != 0 {
		p.t.Fatalf("%q (sandboxed %v): exit %d\n%s", script, sandboxed, code, out)
	}
	return out
}

// fingerprint hashes every custodian file of the project (names, modes
// and contents).
func (p *sandboxProject) fingerprint() string {
	p.t.Helper()
	h := sha256.New()
	var names []string
	for _, rel := range managed.SandboxPaths() {
		_ = filepath.WalkDir(filepath.Join(p.dir, filepath.FromSlash(rel)), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.Type()&fs.ModeSocket == 0 && !strings.HasSuffix(path, "daemon.log") {
				names = append(names, path)
			}
			return nil
		})
	}
	sort.Strings(names)
	for _, n := range names {
		fi, _ := os.Lstat(n)
		b, _ := os.ReadFile(n)
		fmt.Fprintf(h, "%s %v %d\n", n, fi.Mode(), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// returnsTo reports whether the custodian's files have (or soon have) the
// fingerprint want.
func (p *sandboxProject) returnsTo(want string) bool {
	for i := 0; i < 50; i++ {
		if p.fingerprint() == want {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// settled waits until the custodian's files stop changing (the daemon
// rewrites its snapshots shortly after a commit) and returns their
// fingerprint.
func (p *sandboxProject) settled() string {
	p.t.Helper()
	last := p.fingerprint()
	for i := 0; i < 100; i++ {
		time.Sleep(100 * time.Millisecond)
		cur := p.fingerprint()
		if cur == last {
			return cur
		}
		last = cur
	}
	p.t.Fatal("the custodian's files never settle")
	return ""
}

func newSandboxProject(t *testing.T) *sandboxProject {
	srt, nodeBin := srtTool(t)
	bin := testbin.Path(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "TMPDIR=" + os.TempDir(),
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + nodeBin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "NO_COLOR=1"}
	p := &sandboxProject{t: t, dir: t.TempDir(), srt: srt, env: env}
	p.must(false, `git init -q && custodian init --sprint S1 >/dev/null && custodian hook install --claude >/dev/null && git add -A && git commit -qm start`)
	// The daemon, started as Claude Code's SessionStart hook would,
	// outside the sandbox; stopped when the test ends.
	p.must(false, `echo '{"hook_event_name":"SessionStart","session_id":"s","cwd":"'"$PWD"'"}' | custodian hook claude >/dev/null`)
	t.Cleanup(func() {
		if pid, err := daemonPid(filepath.Join(p.dir, ".asdd", "state", "custodian.pid")); err == nil {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			for i := 0; i < 200 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
	// srt's settings are the sandbox block hook install wrote: the same
	// filesystem and network keys, plus what Claude Code grants by
	// default (writes in the session's directory; no network).
	var s struct {
		Sandbox struct {
			Filesystem map[string]any
			Network    map[string]any
		}
	}
	b, err := os.ReadFile(filepath.Join(p.dir, ".claude", "settings.json"))
	if err != nil || json.Unmarshal(b, &s) != nil {
		t.Fatalf("settings: %v\n%s", err, b)
	}
	s.Sandbox.Filesystem["allowWrite"] = []string{"."}
	s.Sandbox.Network["allowedDomains"] = []string{}
	s.Sandbox.Network["deniedDomains"] = []string{}
	out, _ := json.Marshal(map[string]any{"filesystem": s.Sandbox.Filesystem, "network": s.Sandbox.Network})
	p.settings = filepath.Join(t.TempDir(), "srt-settings.json")
	if err := os.WriteFile(p.settings, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("srt settings: %s", out)
	return p
}

// Under the settings `hook install --claude` writes, inside the real
// sandbox: no program can write the custodian's files (shell redirection,
// python, cp, mv, ln, sed -i, git stash and checkout), the agents'
// operations succeed through the daemon, the human decisions are
// UNAUTHORIZED (exit 6); outside, the human's approve works.
func TestRealSandboxLeavesCustodianTheOnlyWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs bubblewrap")
	}
	p := newSandboxProject(t)

	// A change since the last git commit, so that git has something
	// to rewind.
	p.must(false, `custodian slice add SLICE-000 >/dev/null`)
	before := p.settled()
	attacks := []string{
		`echo {} > .asdd/state/manifest.json`,
		`python3 -c "open('.asdd/state/manifest.json','w').write('{}')"`,
		`python3 -c "open('.asdd/state/journal.ndjson','a').write('{}\n')"`,
		`cp /dev/null .asdd/state/manifest.json`,
		`echo {} > evil.json && mv evil.json .asdd/state/manifest.json`,
		`mv .asdd/state .asdd/state.old`,
		`ln -sf /dev/null .asdd/state/manifest.json`,
		`sed -i s/SLICE-000/SLICE-999/ .asdd/state/manifest.json`,
		`rm -f .asdd/state/.lock .asdd/state/manifest.json`,
		`echo x > .asdd/config.yaml`,
		`mkdir -p .workflow/.cycle && echo {} > .workflow/.cycle/c.json`,
		`echo {} > .impl/manifest.json`,
		`echo {} > .agents/tmp/state.json`,
		`echo '{}' > .claude/settings.json`,
		`git stash -u`,
		`git checkout -- .asdd`,
		`git reset -q --hard HEAD`,
		`rm -rf .git/custodian`,
		`echo '{"rev":1,"hash":"sha256:0"}' > .git/custodian/.asdd%2Fstate%2Fmanifest.json.head`,
		`cat "$XDG_CONFIG_HOME"/custodian/*/admin-token`,
	}
	for _, a := range attacks {
		out, code := p.run(true, a)
		t.Logf("sandboxed %q: exit %d: %s", a, code, strings.TrimSpace(out))
		if code == 0 {
			t.Errorf("sandboxed %q succeeded:\n%s", a, out)
		}
		// srt removes the mount points it made for denied paths that
		// did not exist once the command is over: the files must be as
		// they were by then.
		if !p.returnsTo(before) {
			t.Fatalf("sandboxed %q changed the custodian's files", a)
		}
	}
	if out := p.must(false, `git status --porcelain .claude`); out != "" {
		t.Fatalf("the settings changed: %s", out)
	}

	// The agents' operations, through the daemon.
	lib := filepath.Join(t.TempDir(), "state.sh")
	if err := os.WriteFile(lib, []byte(compat.StateBlock+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.must(false, `custodian state init T-1 >/dev/null && custodian impl --init --plan-path plans/001.md --plan-number 001 --plan-title Plan >/dev/null && custodian impl --add-task --task-id 1.1 --phase 1 --description Model >/dev/null`)
	for _, op := range []string{
		`custodian slice add SLICE-001`,
		`mkdir -p specs/SLICE-001 && echo '# intent' > specs/SLICE-001/intent.md && custodian propose --agent discovery --slice SLICE-001 --score 0.97 --artifact intent=specs/SLICE-001/intent.md`,
		`custodian heartbeat --agent spec --status ACTIVE --slice SLICE-001`,
		`custodian impl --update-status --task-id 1.1 --status in_progress`,
		`source ` + lib + ` && state_update '.n = 7'`,
	} {
		p.must(true, op)
	}
	if out := p.must(false, `custodian state read n`); strings.TrimSpace(out) != "7" {
		t.Errorf("state_update through the daemon: n = %q", out)
	}
	// A halt only a human may settle.
	p.must(true, `echo '# requirements' > specs/SLICE-001/requirements.md`)
	if out, code := p.run(true, `custodian propose --agent spec --slice SLICE-001 --score 0.84 --artifact requirements=specs/SLICE-001/requirements.md --uncertainty unsure`); code != 3 {
		t.Fatalf("a low-confidence spec: exit %d, want 3 (halted)\n%s", code, out)
	}
	for _, decision := range []string{
		`custodian approve SLICE-001 --role TL --rationale "an agent's own approval"`,
		`custodian resolve SLICE-001 --role TL --rationale "an agent's own resolution"`,
		`custodian rollback .asdd/state/manifest.json --to 1 --reason "an agent rewinds"`,
	} {
		out, code := p.run(true, decision)
		if code != 6 || !strings.Contains(out, "UNAUTHORIZED") {
			t.Errorf("sandboxed %q: exit %d, want 6 UNAUTHORIZED\n%s", decision, code, out)
		}
	}
	// The human, outside the sandbox, notices nothing.
	p.must(false, `custodian approve SLICE-001 --role TL --rationale "accept the spec as is"`)
	if out := p.must(false, `custodian slice show SLICE-001 --json`); !bytes.Contains([]byte(out), []byte("SLICE-001")) {
		t.Errorf("slice show: %s", out)
	}
	// With the daemon stopped, the agent's change has nowhere to go: it
	// fails, saying what starts the daemon, and changes nothing.
	p.must(false, `kill "$(head -1 .asdd/state/custodian.pid)" && while [ -S .asdd/state/custodian.sock ]; do sleep 0.1; done`)
	before = p.settled()
	if out, code := p.run(true, `custodian slice add SLICE-002`); code == 0 || !strings.Contains(out, "SessionStart") {
		t.Errorf("sandboxed slice add without a daemon: exit %d\n%s", code, out)
	}
	if !p.returnsTo(before) {
		t.Error("a sandboxed slice add without a daemon changed the files")
	}
}

// Two SessionStart hooks at once (two sessions opening together) both
// return with a daemon answering; exactly one daemon serves, the other
// start exits having changed nothing.
func TestTwoSessionStartsLeaveOneDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, runs the daemon")
	}
	bin := testbin.Path(t)
	dir := t.TempDir()
	env := append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	run := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"-C", dir}, args...)...)
		cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("", "init"); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	pidFile := filepath.Join(dir, ".asdd", "state", "custodian.pid")
	t.Cleanup(func() {
		if pid, err := daemonPid(pidFile); err == nil {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			for i := 0; i < 200 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
	var wg sync.WaitGroup
	outs := make([]string, 4)
	errs := make([]error, 4)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = run(`{"hook_event_name":"SessionStart","session_id":"s"}`, "hook", "claude")
		}()
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil || strings.Contains(outs[i], "custodian: ") {
			t.Errorf("SessionStart %d: %v\n%s", i, errs[i], outs[i])
		}
	}
	// One daemon serves: it answers, and holds the pid file's lock.
	if out, err := run("", "slice", "add", "S-1"); err != nil {
		t.Fatalf("through the daemon: %v\n%s", err, out)
	}
	pid, err := daemonPid(pidFile)
	if err != nil || syscall.Kill(pid, 0) != nil {
		t.Fatalf("pid file: no live daemon (%v)", err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, ".asdd", "state", "daemon.log"))
	t.Logf("daemon log:\n%s", log)
	t.Logf("%d starts lost the race and exited", strings.Count(string(log), "already serves this project"))
	// No second daemon is left: every other custodian serve exits (a
	// start that lost the race may still be on its way out when the
	// winner answers, so its exit is waited for, a few seconds at most).
	var out []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out, _ = exec.Command("pgrep", "-f", "-c", bin+" -C "+dir+" serve").Output()
		if strings.TrimSpace(string(out)) == "1" || time.Now().After(deadline) {
			break
		}
	}
	if strings.TrimSpace(string(out)) != "1" {
		t.Errorf("custodian serve processes for the project: %s, want 1", out)
	}
}

// daemonPid reads the daemon's pid from its pid file (the first line).
func daemonPid(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// Without the sandbox runtime the real-sandbox tests skip, saying why, on a
// developer's machine, and fail in CI ($CI set): the test binary is run
// again with a PATH on which there is no bubblewrap.
func TestSandboxTestsNeedTheRuntimeInCI(t *testing.T) {
	if os.Getenv("HOOK_SANDBOX_CHILD") != "" {
		t.Skip("the child run")
	}
	empty := t.TempDir()
	run := func(ci string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestRealSandboxLeavesCustodianTheOnlyWriter$", "-test.v", "-test.count=1")
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "CI=") {
				env = append(env, kv)
			}
		}
		env = append(env, "PATH="+empty, "HOOK_SANDBOX_CHILD=1")
		if ci != "" {
			env = append(env, "CI="+ci)
		}
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil || !strings.Contains(out, "--- SKIP: TestRealSandboxLeavesCustodianTheOnlyWriter") || !strings.Contains(out, "not installed") {
		t.Errorf("without bubblewrap, outside CI: %v\n%s", err, out)
	}
	out, err = run("true")
	if err == nil || !strings.Contains(out, "--- FAIL: TestRealSandboxLeavesCustodianTheOnlyWriter") || !strings.Contains(out, "$CI is set") {
		t.Errorf("without bubblewrap, in CI: %v\n%s", err, out)
	}
}
