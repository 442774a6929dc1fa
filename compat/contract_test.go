package compat_test

// Contract tests of the drop-ins, written from the plugins' documented
// interfaces (their code is not copied here; the "original" scripts below
// are stand-ins written for these tests). Every custodian call is a real
// process of the built binary.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

type env struct {
	t    *testing.T
	bin  string
	path string // PATH with the custodian binary first
}

func newEnv(t *testing.T) *env {
	bin := testbin.Path(t)
	return &env{t: t, bin: bin, path: filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH")}
}

// run runs a command in dir and returns stdout, stderr and the exit code.
func (e *env) run(dir, stdin string, name string, args ...string) (string, string, int) {
	e.t.Helper()
	c := exec.Command(name, args...)
	c.Dir = dir
	c.Stdin = strings.NewReader(stdin)
	c.Env = append(os.Environ(), "PATH="+e.path, "CLAUDE_PROJECT_DIR="+dir, "CUSTODIAN_SERVER=", "CUSTODIAN_STORE=")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("%s %v: %v", name, args, err)
	}
	return out.String(), errb.String(), code
}

func (e *env) ok(dir string, name string, args ...string) string {
	e.t.Helper()
	out, errs, code := e.run(dir, "", name, args...)
	if code != 0 {
		e.t.Fatalf("%s %v: exit %d\n%s%s", name, args, code, out, errs)
	}
	return out
}

func write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			fi, _ := os.Stat(p)
			rel, _ := filepath.Rel(dir, p)
			m[rel] = fmt.Sprintf("%v|%s", fi.Mode(), b)
		}
		return nil
	})
	return m
}

// The five skills that carry a copy of task-manifest.sh, and the copy-drift
// rule the plugin documents: every copy is byte-identical.
var principledCopies = []string{"decompose", "spawn", "check-impl", "merge-work", "orchestrate"}

func principledPlugin(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "principled-implementation")
	write(t, filepath.Join(dir, ".claude-plugin", "plugin.json"), `{"name": "principled-implementation", "version": "0.3.0"}`+"\n", 0o644)
	for _, s := range principledCopies {
		write(t, filepath.Join(dir, "skills", s, "scripts", "task-manifest.sh"), "#!/usr/bin/env bash\n# stand-in for the plugin's task-manifest.sh (test fixture)\necho original \"$@\"\n", 0o755)
	}
	write(t, filepath.Join(dir, "skills", "spawn", "SKILL.md"), "# spawn\n", 0o644)
	return dir
}

func copiesIdentical(t *testing.T, dir string) string {
	t.Helper()
	var first []byte
	for i, s := range principledCopies {
		b, err := os.ReadFile(filepath.Join(dir, "skills", s, "scripts", "task-manifest.sh"))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("copy-drift: skills/%s/scripts/task-manifest.sh differs from skills/decompose's", s)
		}
	}
	return string(first)
}

// TestPrincipledDropin: install replaces the five copies with one shim (the
// drift check passes), task-manifest.sh's interface — arguments, output,
// exit codes — holds when called as the plugin calls it (`bash <path>`), the
// file on disk is current after every commit for the plugin's jq readers,
// and uninstall restores the originals byte for byte.
func TestPrincipledDropin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plugin := principledPlugin(t)
	before := snapshotDir(t, plugin)

	// Directories that are not the plugin: refused, nothing changed.
	other := filepath.Join(t.TempDir(), "other")
	write(t, filepath.Join(other, ".claude-plugin", "plugin.json"), `{"name":"principled-docs"}`, 0o644)
	write(t, filepath.Join(other, "skills", "x", "scripts", "task-manifest.sh"), "x\n", 0o755)
	otherBefore := snapshotDir(t, other)
	for _, dir := range []string{other, t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		_, errs, code := e.run(t.TempDir(), "", e.bin, "compat", "install", "principled", "--plugin-dir", dir)
		if code != 2 || !strings.Contains(errs, "INVALID_INPUT") {
			t.Errorf("install into %s: exit %d %s", dir, code, errs)
		}
	}
	if fmt.Sprint(snapshotDir(t, other)) != fmt.Sprint(otherBefore) {
		t.Error("a refused install changed the directory")
	}
	if _, _, code := e.run(t.TempDir(), "", e.bin, "compat", "uninstall", "principled", "--plugin-dir", plugin); code != 2 {
		t.Errorf("uninstall before install: exit %d", code)
	}

	out := e.ok(t.TempDir(), e.bin, "compat", "install", "principled", "--plugin-dir", plugin)
	if strings.Count(out, "replaced ") != 5 {
		t.Errorf("install: %s", out)
	}
	if shim := copiesIdentical(t, plugin); shim != compat.PrincipledShim {
		t.Errorf("copies are not the shim: %q", shim)
	}
	if out := e.ok(t.TempDir(), e.bin, "compat", "install", "principled", "--plugin-dir", plugin); strings.Count(out, "unchanged ") != 5 {
		t.Errorf("second install: %s", out)
	}

	// The interface, through the shim as the plugin runs it.
	proj := t.TempDir()
	tm := func(skill string, args ...string) (string, string, int) {
		return e.run(proj, "", "bash", append([]string{filepath.Join(plugin, "skills", skill, "scripts", "task-manifest.sh")}, args...)...)
	}
	expect := func(skill string, wantOut string, wantCode int, args ...string) {
		t.Helper()
		o, errs, code := tm(skill, args...)
		if code != wantCode || !strings.Contains(o, wantOut) {
			t.Errorf("task-manifest.sh %v: exit %d, out %q, err %q; want exit %d and %q", args, code, o, errs, wantCode, wantOut)
		}
		if wantCode == 1 && !strings.HasPrefix(errs, "Error: ") {
			t.Errorf("task-manifest.sh %v: stderr %q, want Error: …", args, errs)
		}
	}
	expect("decompose", "Manifest initialized at .impl/manifest.json", 0, "--init", "--plan-path", "docs/plans/001-auth.md", "--plan-number", "001", "--plan-title", "Auth")
	expect("decompose", "", 1, "--init", "--plan-path", "x", "--plan-number", "001", "--plan-title", "again")
	expect("decompose", "Added task 1.1 to phase 1", 0, "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "Login form")
	expect("decompose", "Added task 1.2 to phase 1", 0, "--add-task", "--task-id", "1.2", "--phase", "1", "--description", "Session store", "--bounded-contexts", "auth,store")
	expect("spawn", "Task 1.1 status updated to in_progress", 0, "--update-status", "--task-id", "1.1", "--status", "in_progress", "--branch", "impl/1.1")
	expect("check-impl", "status=in_progress", 0, "--get-task", "--task-id", "1.1")
	expect("check-impl", "branch=impl/1.1", 0, "--get-task", "--task-id", "1.1")
	expect("orchestrate", "1.1|1|in_progress|Login form", 0, "--list-tasks", "--phase", "1")
	expect("orchestrate", "total=2", 0, "--phase-status", "--phase", "1")
	expect("merge-work", "total_tasks=2", 0, "--summary")
	expect("merge-work", "docs/plans/001-auth.md", 0, "--get-plan-path")
	expect("spawn", "", 1, "--update-status", "--task-id", "1.1", "--status", "bogus")
	expect("spawn", "", 1, "--get-task", "--task-id", "9.9")
	// The plugin's hooks read the file with jq: it is current after each commit.
	var m struct {
		Tasks []struct{ ID, Status string } `json:"tasks"`
	}
	b, _ := os.ReadFile(filepath.Join(proj, ".impl", "manifest.json"))
	if err := json.Unmarshal(b, &m); err != nil || len(m.Tasks) != 2 || m.Tasks[0].Status != "in_progress" {
		t.Errorf("manifest on disk: %s (%v)", b, err)
	}
	if _, err := exec.LookPath("jq"); err == nil {
		if s := strings.TrimSpace(e.ok(proj, "jq", "-r", `.tasks[] | select(.id == "1.1") | .status`, ".impl/manifest.json")); s != "in_progress" {
			t.Errorf("jq reads %q", s)
		}
	}
	// Every change is a journalled commit.
	var hist []json.RawMessage
	json.Unmarshal([]byte(e.ok(proj, e.bin, "--json", "history", ".impl/manifest.json")), &hist)
	if len(hist) != 4 {
		t.Errorf("%d commits, want 4 (init, 2 add-task, update-status)", len(hist))
	}

	out = e.ok(t.TempDir(), e.bin, "compat", "uninstall", "principled", "--plugin-dir", plugin)
	if strings.Count(out, "restored ") != 5 {
		t.Errorf("uninstall: %s", out)
	}
	if after := snapshotDir(t, plugin); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("uninstall did not restore the plugin byte for byte:\n%v\n%v", before, after)
	}
}

// stateSh is a stand-in for a state-manager plugin's hooks/lib/state.sh,
// written from its documented interface: read_state, state_get EXPR,
// state_write JSON, state_update EXPR (sets updatedAt), with jq, a temp file
// and mv, and no lock.
const stateSh = `#!/usr/bin/env bash
set -euo pipefail
STATE_DIR="${CLAUDE_PROJECT_DIR:-.}/.agents/tmp"
STATE_FILE="$STATE_DIR/state.json"
read_state() { if [[ -f "$STATE_FILE" ]]; then cat "$STATE_FILE"; else echo '{}'; fi; }
state_get() { read_state | jq -r "$1"; }
state_write() { mkdir -p "$STATE_DIR"; local tmp; tmp=$(mktemp "$STATE_FILE.XXXXXX"); echo "$1" | jq '.' > "$tmp"; mv "$tmp" "$STATE_FILE"; }
state_update() {
  local cur; cur="$(read_state)"
  state_write "$(echo "$cur" | jq --arg ts "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1 | .updatedAt = \$ts")"
}
`

func stateN(t *testing.T, proj string) (int, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(proj, ".agents", "tmp", "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("state.json: %v\n%s", err, b)
	}
	n, _ := m["n"].(float64)
	return int(n), m
}

func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}

// TestStateManagerDropin: 20 concurrent `state_update '.n += 1'` through
// the drop-in end with n = 20 (through the stand-in original they race);
// update_state and state_write keep their interface; uninstall restores
// state.sh byte for byte.
func TestStateManagerDropin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plugin := filepath.Join(t.TempDir(), "subagents")
	write(t, filepath.Join(plugin, "hooks", "lib", "state.sh"), stateSh, 0o644)
	before := snapshotDir(t, plugin)
	lib := filepath.Join(plugin, "hooks", "lib", "state.sh")

	notPlugin := t.TempDir()
	write(t, filepath.Join(notPlugin, "hooks", "lib", "state.sh"), "echo hi\n", 0o644)
	if _, errs, code := e.run(t.TempDir(), "", e.bin, "compat", "install", "state-manager", "--plugin-dir", notPlugin); code != 2 {
		t.Errorf("install into a dir that is not the plugin: exit %d %s", code, errs)
	}

	const writers = 20
	if _, err := exec.LookPath("jq"); err == nil {
		// The original, for comparison: unlocked read-modify-write.
		proj := t.TempDir()
		e.ok(proj, "bash", "-c", `source "$1"; state_write '{"version":2,"n":0}'`, "_", lib)
		concurrently(writers, func(int) { e.run(proj, "", "bash", "-c", `source "$1"; state_update '.n += 1'`, "_", lib) })
		n, _ := stateN(t, proj)
		t.Logf("through the original functions, %d concurrent increments left n = %d", writers, n)
	}

	e.ok(t.TempDir(), e.bin, "compat", "install", "state-manager", "--plugin-dir", plugin)
	proj := t.TempDir()
	e.ok(proj, e.bin, "state", "init", "contract test")
	e.ok(proj, "bash", "-c", `source "$1"; state_update '.n = 0'`, "_", lib)
	var failed sync.Map
	concurrently(writers, func(i int) {
		if o, errs, code := e.run(proj, "", "bash", "-c", `source "$1"; state_update '.n += 1'`, "_", lib); code != 0 {
			failed.Store(i, o+errs)
		}
	})
	failed.Range(func(k, v any) bool { t.Errorf("writer %v: %v", k, v); return true })
	n, st := stateN(t, proj)
	if n != writers {
		t.Errorf("n = %d after %d concurrent state_update through the drop-in, want %d", n, writers, writers)
	}
	if ts, _ := st["updatedAt"].(string); !strings.HasSuffix(ts, "Z") {
		t.Errorf("updatedAt = %v", st["updatedAt"])
	}
	var hist []json.RawMessage
	json.Unmarshal([]byte(e.ok(proj, e.bin, "--json", "history", ".agents/tmp/state.json")), &hist)
	if len(hist) != 2+writers {
		t.Errorf("%d commits, want %d", len(hist), 2+writers)
	}
	// update_state (the minions form): jq options, then the filter; $ts given.
	e.ok(proj, "bash", "-c", `source "$1"; update_state --arg who w1 --argjson k '[1,2]' '.owner = $who | .k = $k | .touchedAt = $ts'`, "_", lib)
	_, st = stateN(t, proj)
	if st["owner"] != "w1" || fmt.Sprint(st["k"]) != "[1 2]" || st["touchedAt"] == nil {
		t.Errorf("update_state: %v", st)
	}
	// A write the rules reject changes nothing and fails.
	raw, _ := os.ReadFile(filepath.Join(proj, ".agents", "tmp", "state.json"))
	if _, _, code := e.run(proj, "", "bash", "-c", `source "$1"; state_write '{"version":2,"status":"bogus"}'`, "_", lib); code == 0 {
		t.Error("an invalid state_write succeeded")
	}
	if again, _ := os.ReadFile(filepath.Join(proj, ".agents", "tmp", "state.json")); !bytes.Equal(raw, again) {
		t.Error("a rejected state_write changed state.json")
	}

	e.ok(t.TempDir(), e.bin, "compat", "uninstall", "state-manager", "--plugin-dir", plugin)
	if after := snapshotDir(t, plugin); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("uninstall did not restore state.sh byte for byte")
	}
}

// TestCycleCASAndAppend: 32 concurrent writers (processes) rewrite one
// cycle document with put --if-revision (read, modify, compare-and-swap,
// retry on CONFLICT): no update is lost. 32 concurrent writers append to a
// coordination log: every record is there once, whole, one per line.
func TestCycleCASAndAppend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	proj := t.TempDir()
	e.ok(proj, e.bin, "cycle", "create", "CAS contract", "--id", "cas1")
	// Each conflict costs a writer two more processes: 12 writers by
	// default, 32 in a soak run.
	writers := testenv.Rounds(12, 32)
	var conflicts sync.Map
	concurrently(writers, func(i int) {
		for attempt := 0; ; attempt++ {
			out, errs, code := e.run(proj, "", e.bin, "--json", "get", ".workflow/.cycle/cas1.json")
			if code != 0 {
				t.Errorf("get: %d %s", code, errs)
				return
			}
			var doc struct {
				Revision uint64         `json:"revision"`
				Value    map[string]any `json:"value"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Errorf("get output: %v", err)
				return
			}
			writersDone, _ := doc.Value["writers_done"].([]any)
			doc.Value["writers_done"] = append(writersDone, float64(i))
			body, _ := json.Marshal(doc.Value)
			_, errs, code = e.run(proj, string(body), e.bin, "cycle", "put", "cas1", "--if-revision", fmt.Sprint(doc.Revision))
			if code == 0 {
				conflicts.Store(i, attempt)
				return
			}
			if code != 4 {
				t.Errorf("writer %d: put exit %d: %s", i, code, errs)
				return
			}
			time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
		}
	})
	var doc struct {
		Revision uint64 `json:"revision"`
		Value    struct {
			WritersDone []int `json:"writers_done"`
		} `json:"value"`
	}
	json.Unmarshal([]byte(e.ok(proj, e.bin, "--json", "get", ".workflow/.cycle/cas1.json")), &doc)
	seen := map[int]bool{}
	for _, w := range doc.Value.WritersDone {
		seen[w] = true
	}
	if len(doc.Value.WritersDone) != writers || len(seen) != writers || doc.Revision != uint64(1+writers) {
		t.Errorf("after %d CAS writers: %d entries (%d distinct), revision %d; want %d, %d, %d",
			writers, len(doc.Value.WritersDone), len(seen), doc.Revision, writers, writers, 1+writers)
	}
	retries := 0
	conflicts.Range(func(_, v any) bool { retries += v.(int); return true })
	t.Logf("%d writers, %d CONFLICT retries", writers, retries)

	const perWriter = 4
	log := "coordination/discoveries.ndjson"
	concurrently(writers, func(i int) {
		for k := range perWriter {
			rec := fmt.Sprintf(`{"ts":"2026-11-25T12:00:00Z","worker":"W-%02d","seq":%d,"type":"found","data":{"pad":"%s"}}`, i, k, strings.Repeat("x", 3000))
			if _, errs, code := e.run(proj, "", e.bin, "cycle", "append", "cas1", "--log", log, "--line", rec); code != 0 {
				t.Errorf("append: %d %s", code, errs)
			}
		}
	})
	b, err := os.ReadFile(filepath.Join(proj, ".workflow", ".cycle", "cas1.progress", log))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	got := map[string]bool{}
	for _, l := range lines {
		var r struct {
			Worker string `json:"worker"`
			Seq    int    `json:"seq"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("torn or bad line (%d bytes): %v", len(l), err)
		}
		k := fmt.Sprintf("%s/%d", r.Worker, r.Seq)
		if got[k] {
			t.Errorf("record %s twice", k)
		}
		got[k] = true
	}
	if len(lines) != writers*perWriter || len(got) != writers*perWriter {
		t.Errorf("%d lines, %d distinct records; want %d", len(lines), len(got), writers*perWriter)
	}
}

// TestDropinsUnderServe: with `custodian serve` running, the drop-ins go
// through the daemon, and the files the plugins read back from disk right
// after a change (jq on .impl/manifest.json, state.json) already hold it.
func TestDropinsUnderServe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	plugin := principledPlugin(t)
	e.ok(t.TempDir(), e.bin, "compat", "install", "principled", "--plugin-dir", plugin)
	lib := filepath.Join(t.TempDir(), "subagents")
	write(t, filepath.Join(lib, "hooks", "lib", "state.sh"), stateSh, 0o644)
	e.ok(t.TempDir(), e.bin, "compat", "install", "state-manager", "--plugin-dir", lib)
	stateLib := filepath.Join(lib, "hooks", "lib", "state.sh")
	shim := filepath.Join(plugin, "skills", "spawn", "scripts", "task-manifest.sh")

	proj := t.TempDir()
	e.ok(proj, "bash", shim, "--init", "--plan-path", "p.md", "--plan-number", "001", "--plan-title", "T")
	e.ok(proj, "bash", shim, "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "x")
	e.ok(proj, e.bin, "state", "init", "under serve")

	serve := exec.Command(e.bin, "serve", "--addr", "", "--monitor-every", "0", "--log-level", "warn")
	serve.Dir = proj
	var serveOut bytes.Buffer
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
	}()
	sock := filepath.Join(proj, ".asdd", "state", "custodian.sock")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no daemon socket\n%s", serveOut.String())
		}
	}

	// The daemon holds the documents' locks for its lifetime: a command
	// that did not go through it could not commit at all.
	for i, status := range []string{"in_progress", "validating", "passed", "failed", "in_progress", "validating", "passed", "failed"} {
		e.ok(proj, "bash", shim, "--update-status", "--task-id", "1.1", "--status", status)
		var m struct {
			Tasks []struct{ Status string } `json:"tasks"`
		}
		b, _ := os.ReadFile(filepath.Join(proj, ".impl", "manifest.json"))
		if json.Unmarshal(b, &m); len(m.Tasks) != 1 || m.Tasks[0].Status != status {
			t.Errorf("update %d: the file read right after says %+v, want %s", i, m.Tasks, status)
		}
	}
	concurrently(10, func(int) { e.run(proj, "", "bash", "-c", `source "$1"; state_update '.n += 1'`, "_", stateLib) })
	if n, _ := stateN(t, proj); n != 10 {
		t.Errorf("n = %d after 10 concurrent state_update through the daemon", n)
	}
}
