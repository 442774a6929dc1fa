package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/google/go-cmp/cmp"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/integrity"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

var volatileStats = regexp.MustCompile(`"(hashed|from_stat_cache|bytes_hashed)": \d+`)

// integrityClock is the fixed time of the integrity transcripts.
var integrityClock = time.Date(2026, 4, 20, 15, 0, 0, 0, time.UTC)

// ip is a project driven through the CLI in-process, with a transcript.
type ip struct {
	t   *testing.T
	dir string
	now time.Time
	log bytes.Buffer
}

func newIP(t *testing.T) *ip {
	t.Helper()
	return &ip{t: t, dir: t.TempDir(), now: integrityClock}
}

// run executes one command line as Main would and returns its output and
// exit code.
func (p *ip) run(args ...string) (string, string, int) {
	p.t.Helper()
	return runCLI(p.dir, "", p.now, args...)
}

// must runs a command that must succeed.
func (p *ip) must(args ...string) string {
	p.t.Helper()
	out, errs, code := p.run(args...)
	if code != 0 {
		p.t.Fatalf("custodian %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// step runs a command, records it in the transcript and checks its exit
// code.
func (p *ip) step(want int, args ...string) string {
	p.t.Helper()
	out, errs, code := p.run(args...)
	fmt.Fprintf(&p.log, "$ custodian %s\n%s", shellLine(args), out)
	if errs != "" {
		fmt.Fprintf(&p.log, "[stderr] %s", errs)
	}
	fmt.Fprintf(&p.log, "[exit %d]\n\n", code)
	if code != want {
		p.t.Fatalf("custodian %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errs)
	}
	return out
}

func (p *ip) note(format string, args ...any) { fmt.Fprintf(&p.log, "# "+format+"\n\n", args...) }

func (p *ip) path(rel string) string { return filepath.Join(p.dir, filepath.FromSlash(rel)) }

func (p *ip) write(rel, content string) {
	p.t.Helper()
	if err := os.MkdirAll(filepath.Dir(p.path(rel)), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(p.path(rel), []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// golden compares the transcript with testdata/integrity/name.golden.
func (p *ip) golden(name string) {
	p.t.Helper()
	got := strings.ReplaceAll(p.log.String(), p.dir, "$PROJECT")
	// How many files came from the stat cache depends on how fast the test
	// ran (the racy window); the findings do not.
	got = volatileStats.ReplaceAllString(got, `"$1": N`)
	path := filepath.Join("testdata", "integrity", name+".golden")
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			p.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			p.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		p.t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		p.t.Errorf("transcript differs from %s (-want +got):\n%s", path, diff)
	}
}

// agentRun is one agent finishing its work on a slice: it writes its
// artifact (if any) and its reasoning trace, then proposes.
type agentRun struct {
	agent, artifact, file, score string
}

// pipeline is the order agents work in, with what each writes.
var pipeline = []agentRun{
	{"discovery", "intent", "intent.md", "0.96"},
	{"spec", "requirements", "requirements.md", "0.95"},
	{"validation", "", "", "0.97"},
	{"domain", "domain_model", "domain-model.md", "0.96"},
	{"design", "design", "design.md", "0.95"},
	{"task_planning", "tasks", "tasks.md", "0.97"},
	{"refactor", "", "", "0.96"},
	{"implementation", "", "", "0.95"},
	{"qa", "", "", "0.97"},
	{"security", "", "", "0.98"},
	{"devops", "", "", "0.97"},
	{"observability", "", "", "0.96"},
}

// drive adds a slice whose specs live in dir and runs the first n agents of
// the pipeline on it.
func (p *ip) drive(id, name, dir string, n int) {
	p.t.Helper()
	p.must("slice", "add", id, "--name", name)
	for _, r := range pipeline[:n] {
		args := []string{"propose", "--agent", r.agent, "--slice", id, "--score", r.score}
		if r.artifact != "" {
			rel := ".asdd/specs/" + dir + "/" + r.file
			head := ""
			if r.artifact == "intent" && dir != id {
				head = "slice_id: " + id + "\n"
			}
			p.write(rel, fmt.Sprintf("%s# %s — %s\n\nWritten by the %s agent.\n", head, name, r.artifact, r.agent))
			args = append(args, "--artifact", r.artifact+"="+rel)
		}
		trace := ".asdd/traces/" + id + "-" + r.agent + ".md"
		p.write(trace, "Why the "+r.agent+" agent decided as it did.\n")
		args = append(args, "--trace", trace)
		p.must(args...)
	}
}

// stamp gives every file under the project a fixed mtime, so that rebuilt
// times are stable.
func (p *ip) stamp() {
	p.t.Helper()
	i := 0
	err := filepath.WalkDir(p.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSymlink != 0 || strings.Contains(path, "/.asdd/state/") {
			return err
		}
		ts := integrityClock.Add(-time.Hour).Add(time.Duration(i) * time.Second)
		i++
		return os.Chtimes(path, ts, ts)
	})
	if err != nil {
		p.t.Fatal(err)
	}
}

// several builds a project with slices at different phases, one halted.
func several(t *testing.T) *ip {
	p := newIP(t)
	p.must("init", "--sprint", "2026-Q2-S3")
	p.drive("SLICE-001", "User Authentication Flow", "auth", len(pipeline)) // DONE
	p.drive("SLICE-002", "Settlement", "SLICE-002", 4)                      // DESIGN
	p.drive("SLICE-003", "Search", "SLICE-003", 1)                          // SPEC
	p.drive("SLICE-004", "Checkout", "SLICE-004", 6)                        // IMPLEMENTATION
	p.drive("SLICE-005", "Reports", "SLICE-005", 2)                         // VALIDATION
	// SLICE-006: the design agent falls below its minimum and halts it.
	p.drive("SLICE-006", "Audit Trail", "SLICE-006", 4)
	p.write(".asdd/specs/SLICE-006/design.md", "# Audit Trail — design\n")
	p.write(".asdd/traces/SLICE-006-design.md", "unsure\n")
	_, _, code := p.run("propose", "--agent", "design", "--slice", "SLICE-006", "--score", "0.70",
		"--uncertainty", "retention policy unknown", "--artifact", "design=.asdd/specs/SLICE-006/design.md", "--trace", ".asdd/traces/SLICE-006-design.md")
	if code != reason.ExitRejected {
		t.Fatalf("halting proposal: exit %d", code)
	}
	p.stamp()
	return p
}

// statuses reads each slice's status from the manifest.
func (p *ip) statuses() map[string]string {
	p.t.Helper()
	var m asdd.Manifest
	b, err := os.ReadFile(p.path(asdd.Key))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		p.t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range m.Slices {
		out[s.SliceID] = s.Status
	}
	return out
}

func TestRebuildAfterManifestAndJournalAreLost(t *testing.T) {
	p := several(t)
	before := p.statuses()
	if diff := cmp.Diff(map[string]string{"SLICE-001": "DONE", "SLICE-002": "DESIGN", "SLICE-003": "SPEC", "SLICE-004": "IMPLEMENTATION", "SLICE-005": "VALIDATION", "SLICE-006": "BLOCKED"}, before); diff != "" {
		t.Fatalf("the project was not set up as intended: %s", diff)
	}
	p.note("six slices at different phases; SLICE-006 halted by the design agent")
	p.step(0, "check")
	p.step(reason.ExitRejected, "rebuild")

	p.note("the manifest alone is lost: the intact journal is preferred, nothing is guessed")
	if err := os.Remove(p.path(asdd.Key)); err != nil {
		t.Fatal(err)
	}
	p.step(0, "rebuild")
	if diff := cmp.Diff(before, p.statuses()); diff != "" {
		t.Fatalf("journal replay changed the slices: %s", diff)
	}

	p.note("manifest and journal are lost")
	for _, f := range []string{asdd.Key, integrity.JournalFile} {
		if err := os.Remove(p.path(f)); err != nil {
			t.Fatal(err)
		}
	}
	p.step(reason.ExitIntegrity, "check")
	p.step(0, "rebuild")
	if diff := cmp.Diff(before, p.statuses()); diff != "" {
		t.Errorf("rebuilt slices are not at their phases (-before +rebuilt):\n%s", diff)
	}
	p.step(reason.ExitIntegrity, "check")
	p.note("propose refuses while guesses await review")
	p.step(reason.ExitRejected, "propose", "--agent", "discovery", "--slice", "SLICE-003", "--score", "0.96")
	for _, id := range []string{"SLICE-001", "SLICE-002", "SLICE-003", "SLICE-004", "SLICE-005"} {
		p.must("review", id, "--role", "TL")
	}
	p.step(0, "review", "SLICE-006", "--role", "TL", "--rationale", "design draft is halted; block record checked")
	p.step(reason.ExitIntegrity, "check")
	p.step(0, "review", "--project", "--role", "PO")
	p.step(0, "check")
	p.golden("rebuild")
}

func TestRebuildCorruptManifestWithoutJournal(t *testing.T) {
	p := several(t)
	before := p.statuses()
	if err := os.WriteFile(p.path(asdd.Key), []byte(`{"slices": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p.path(integrity.JournalFile)); err != nil {
		t.Fatal(err)
	}
	out := p.step(0, "rebuild")
	if !strings.Contains(out, "kept aside: "+asdd.Key+".before-rebuild-") {
		t.Errorf("the corrupt manifest was not kept aside:\n%s", out)
	}
	aside, err := os.ReadFile(p.path(asdd.Key + ".before-rebuild-20260420T150000Z"))
	if err != nil || string(aside) != `{"slices": [` {
		t.Errorf("kept-aside file: %q, %v", aside, err)
	}
	if diff := cmp.Diff(before, p.statuses()); diff != "" {
		t.Errorf("(-before +rebuilt):\n%s", diff)
	}
}

func TestRebuildCorruptJournal(t *testing.T) {
	p := several(t)
	before := p.statuses()
	j, err := os.ReadFile(p.path(integrity.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(j, []byte(`"actor":"`))
	copy(j[i:], `"actor":"X`) // a record mid-chain no longer matches its hash
	if err := os.WriteFile(p.path(integrity.JournalFile), j, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := p.run("check"); code != reason.ExitIntegrity || !strings.Contains(errs, "CORRUPT_STATE") {
		t.Fatalf("check on a corrupt journal: exit %d %s", code, errs)
	}
	out := p.step(0, "rebuild")
	// The manifest, its journal and the journal's anchor.
	if !strings.Contains(out, "cannot be recovered from its journal") || strings.Count(out, "kept aside: ") != 3 {
		t.Errorf("rebuild:\n%s", out)
	}
	if diff := cmp.Diff(before, p.statuses()); diff != "" {
		t.Errorf("(-before +rebuilt):\n%s", diff)
	}
	// --force rebuilds an intact manifest too, keeping it aside.
	p.now = p.now.Add(time.Minute)
	out = p.step(0, "rebuild", "--force")
	if !strings.Contains(out, "--force") || strings.Count(out, "kept aside: ") != 3 {
		t.Errorf("rebuild --force:\n%s", out)
	}
}

func TestCheckFindings(t *testing.T) {
	p := several(t)
	p.note("a clean project")
	p.step(0, "check")
	p.step(0, "check", "--full")

	p.note("requirements of SLICE-002 edited by hand; design of DONE SLICE-001 deleted; intent of SLICE-004 replaced by a symlink to outside")
	p.write(".asdd/specs/SLICE-002/requirements.md", "# Settlement — requirements\n\nEdited behind the custodian's back.\n")
	if err := os.Remove(p.path(".asdd/specs/auth/design.md")); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(outside, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p.path(".asdd/specs/SLICE-004/intent.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, p.path(".asdd/specs/SLICE-004/intent.md")); err != nil {
		t.Fatal(err)
	}
	p.step(reason.ExitIntegrity, "check")
	out := p.step(reason.ExitIntegrity, "check", "--halt", "--json")
	var rep integrity.CheckReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"SLICE-002"}, rep.Halted); diff != "" {
		t.Errorf("halted: %s", diff)
	}
	got := map[string]string{}
	for _, s := range rep.Slices {
		for _, f := range s.Findings {
			got[s.ID+" "+f.Artifact] = string(f.Code)
		}
	}
	want := map[string]string{"SLICE-001 design": "STATE_INCONSISTENCY", "SLICE-002 requirements": "STATE_DRIFT", "SLICE-004 intent": "INVALID_INPUT"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings: %s", diff)
	}
	if p.statuses()["SLICE-002"] != asdd.Blocked {
		t.Error("drifted SLICE-002 not halted")
	}
	p.note("the halted slice stays halted; a second check --halt does not halt it again")
	p.step(reason.ExitIntegrity, "check", "--halt")

	p.note("the Tech Lead approves the edit; the files are repaired")
	p.step(0, "approve", "SLICE-002", "--role", "TL", "--rationale", "the edit clarifies REQ-002")
	p.write(".asdd/specs/auth/design.md", "# User Authentication Flow — design\n\nWritten by the design agent.\n")
	if err := os.Remove(p.path(".asdd/specs/SLICE-004/intent.md")); err != nil {
		t.Fatal(err)
	}
	p.write(".asdd/specs/SLICE-004/intent.md", "# Checkout — intent\n\nWritten by the discovery agent.\n")
	p.step(0, "check")
	p.golden("check")
}

// TestCheckRefusesPathsOutsideTheProject commits, through the store, a
// manifest naming ../../etc/passwd and an absolute path (the rules refuse
// such proposals, so only a hand-made commit can hold them).
func TestCheckRefusesPathsOutsideTheProject(t *testing.T) {
	p := newIP(t)
	p.must("init")
	p.must("slice", "add", "SLICE-001", "--name", "Evil")
	st, err := file.Open(p.dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Update(context.Background(), asdd.Key, func(cur store.Document) (store.Change, error) {
		m, err := asdd.Decode(cur.Value)
		if err != nil {
			return store.Change{}, err
		}
		m.Slices[0].PhaseData = map[string]string{"requirements": "../../etc/passwd", "design": "/etc/passwd"}
		m.Revision = cur.Revision + 1
		raw, err := json.Marshal(m)
		return store.Change{Value: raw, Actor: "test", Reason: "a hand-made commit"}, err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	p.step(reason.ExitIntegrity, "check")
	p.golden("outside")
}

func TestMonitorRetryEscalateRecover(t *testing.T) {
	p := newIP(t)
	p.must("init")
	p.must("slice", "add", "SLICE-003", "--name", "Search")
	start := integrityClock
	p.must("heartbeat", "--agent", "implementation", "--slice", "SLICE-003", "--wave", "2", "--done", "7", "--remaining", "4")
	p.must("heartbeat", "--agent", "discovery", "--status", "IDLE")

	at := func(d time.Duration) { p.now = start.Add(d); p.note("at +%s", d) }
	at(10 * time.Minute)
	p.step(0, "monitor", "--once")
	at(16 * time.Minute)
	p.step(0, "monitor", "--once")
	hb := p.heartbeat("implementation_agent")
	if hb.RetryRequestedAt != "2026-04-20T15:16:00Z" || hb.EscalatedAt != "" {
		t.Fatalf("after the timeout: %+v", hb)
	}
	at(20 * time.Minute)
	p.step(0, "monitor", "--once")
	at(32 * time.Minute)
	p.step(0, "monitor", "--once", "--json")
	if hb := p.heartbeat("implementation_agent"); hb.EscalatedAt != "2026-04-20T15:32:00Z" {
		t.Fatalf("not escalated: %+v", hb)
	}
	notice, err := os.ReadFile(p.path(".asdd/escalations/ESC-SLICE-003-r6.md"))
	if err != nil || !strings.Contains(string(notice), asdd.ModeAgentTimeout) {
		t.Fatalf("escalation notice: %v\n%s", err, notice)
	}
	log, err := os.ReadFile(p.path(asdd.FailureLogPath))
	if err != nil || !strings.Contains(string(log), "ESC-SLICE-003-r6") {
		t.Fatalf("failure log: %v\n%s", err, log)
	}
	if st := p.statuses()["SLICE-003"]; st != asdd.Blocked {
		t.Fatalf("the silent agent's slice is %s, not halted", st)
	}
	at(40 * time.Minute)
	p.step(0, "monitor", "--once")
	p.note("the agent speaks again")
	p.must("heartbeat", "--agent", "implementation", "--slice", "SLICE-003", "--wave", "2", "--done", "8", "--remaining", "3")
	if hb := p.heartbeat("implementation_agent"); hb.RetryRequestedAt != "" || hb.EscalatedAt != "" {
		t.Fatalf("a heartbeat did not clear the markers: %+v", hb)
	}
	at(41 * time.Minute)
	p.step(0, "monitor", "--once")
	p.golden("monitor")
}

func (p *ip) heartbeat(key string) asdd.Heartbeat {
	p.t.Helper()
	b, err := os.ReadFile(p.path(asdd.Key))
	if err != nil {
		p.t.Fatal(err)
	}
	m, err := asdd.Decode(b)
	if err != nil {
		p.t.Fatal(err)
	}
	h := m.AgentHeartbeats[key]
	if h == nil {
		p.t.Fatalf("no heartbeat %s", key)
	}
	return *h
}

// A project of the other documents only (here .impl) has no ASDD state to
// check: a warning, exit 0. With no project at all, see
// TestCheckAndVerifyOutsideAProjectFail.
func TestCheckWithoutASDDState(t *testing.T) {
	p := newIP(t)
	if err := os.Mkdir(filepath.Join(p.dir, ".impl"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, code := p.run("check")
	if code != 0 || !strings.Contains(out, "nothing to check") {
		t.Fatalf("exit %d: %s", code, out)
	}
}

func TestReviewUsage(t *testing.T) {
	p := newIP(t)
	p.must("init")
	p.must("slice", "add", "SLICE-001")
	for _, args := range [][]string{{"review"}, {"review", "SLICE-001", "--project", "--role", "TL"}, {"review", "SLICE-001"}} {
		if _, _, code := p.run(args...); code != reason.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, reason.ExitUsage)
		}
	}
	if _, _, code := p.run("review", "SLICE-001", "--role", "Nobody"); code != reason.ExitUsage {
		t.Errorf("unknown role: exit %d", code)
	}
	if _, errs, code := p.run("review", "SLICE-001", "--role", "TL"); code != reason.ExitRejected || !strings.Contains(errs, "nothing marked") {
		t.Errorf("nothing to review: exit %d %s", code, errs)
	}
}

// BenchmarkCheckCLI10k runs `custodian check` in-process on a project whose
// manifest names 10,000 artifacts of 10 KB (2,000 slices of five phase
// artifacts): cold (--full: every file hashed) against warm (stat cache).
// The figures include loading and validating the manifest. Reproduce with
//
//	go test ./internal/cli -run '^$' -bench CheckCLI10k -benchtime 10x
func BenchmarkCheckCLI10k(b *testing.B) {
	dir := b.TempDir()
	names := []string{"intent", "requirements", "domain_model", "design", "tasks"}
	m := asdd.New()
	buf := make([]byte, 10<<10)
	for i := range 2000 {
		id := fmt.Sprintf("SLICE-%04d", i)
		s := &asdd.Slice{SliceID: id, Name: id, Type: asdd.TypeFeature, Status: asdd.Implementation, PhaseData: map[string]string{}, ArtifactHashes: map[string]string{}}
		for j, n := range names {
			rel := fmt.Sprintf(".asdd/specs/%s/%s.md", id, n)
			for k := range buf {
				buf[k] = byte('a' + (i*7+j*13+k)%26)
			}
			full := filepath.Join(dir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(full, buf, 0o644); err != nil {
				b.Fatal(err)
			}
			s.PhaseData[n] = rel
			s.ArtifactHashes[rel] = store.HashBytes(buf)
		}
		m.Slices = append(m.Slices, s)
	}
	m.Revision = 1
	raw, err := asdd.Encode(m)
	if err != nil {
		b.Fatal(err)
	}
	st, err := file.Open(dir, file.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Update(context.Background(), asdd.Key, func(store.Document) (store.Change, error) {
		return store.Change{Value: raw, Actor: "bench", Reason: "10,000 artifacts"}, nil
	}, store.Create()); err != nil {
		b.Fatal(err)
	}
	st.Close()
	check := func(b *testing.B, args ...string) {
		var out, errb bytes.Buffer
		app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &errb, Now: time.Now}
		root := NewRoot(app)
		root.SetArgs(append([]string{"-C", dir, "check"}, args...))
		err := root.Execute()
		app.Close()
		if err != nil || !strings.HasPrefix(out.String(), "clean: 10000 artifacts") {
			b.Fatalf("check %v: %v\n%s%s", args, err, out.String(), errb.String())
		}
	}
	b.Run("cold-full", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			check(b, "--full")
		}
	})
	b.Run("warm", func(b *testing.B) {
		time.Sleep(2100 * time.Millisecond) // past the racy window
		check(b, "--full")
		defer cpuPerOp(b)()
		for b.Loop() {
			check(b)
		}
	})
}

// cpuPerOp reports the process's user+system CPU time per operation, less
// disturbed than wall time by other load on a shared machine.
func cpuPerOp(b *testing.B) func() {
	cpu := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return ru.Utime.Nano() + ru.Stime.Nano()
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op") }
}

// TestCheckCacheFollowsCommits: a warm check takes the manifest from its
// cache only while no commit happened; after one it sees the new state.
func TestCheckCacheFollowsCommits(t *testing.T) {
	t.Run("one journal", checkCacheFollowsCommits)
	t.Run("journal sealed at every commit", func(t *testing.T) {
		// The live journal is absent between commits.
		t.Setenv("CUSTODIAN_JOURNAL_SEGMENT_BYTES", "1")
		checkCacheFollowsCommits(t)
	})
}

func checkCacheFollowsCommits(t *testing.T) {
	p := newIP(t)
	p.must("init")
	p.write(".asdd/specs/S-1/intent.md", "# S — intent\n")
	p.must("slice", "add", "S-1")
	p.must("propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.96", "--artifact", "intent=.asdd/specs/S-1/intent.md")
	p.must("check")
	if _, err := os.Stat(p.path(integrity.CheckCachePath)); err != nil {
		t.Fatalf("no check cache: %v", err)
	}
	p.must("check") // from the cache
	// A commit that names a new, missing artifact.
	p.write(".asdd/specs/S-1/requirements.md", "# S — requirements\n")
	p.must("propose", "--agent", "spec", "--slice", "S-1", "--score", "0.96", "--artifact", "requirements=.asdd/specs/S-1/requirements.md")
	if err := os.Remove(p.path(".asdd/specs/S-1/requirements.md")); err != nil {
		t.Fatal(err)
	}
	out, _, code := p.run("check")
	if code != reason.ExitIntegrity || !strings.Contains(out, "S-1 (VALIDATION)") || !strings.Contains(out, "requirements") {
		t.Fatalf("the check did not see the new commit (exit %d):\n%s", code, out)
	}
	// A damaged cache is ignored.
	if err := os.WriteFile(p.path(integrity.CheckCachePath), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, code := p.run("check"); code != reason.ExitIntegrity {
		t.Fatalf("with a damaged cache: exit %d", code)
	}
}

// TestMonitorClearsLeftoverMarkers: markers on a heartbeat that is no
// longer ACTIVE (written by a tool that did not clear them) are cleared.
func TestMonitorClearsLeftoverMarkers(t *testing.T) {
	p := newIP(t)
	p.must("init")
	p.must("heartbeat", "--agent", "spec", "--status", "IDLE")
	st, err := file.Open(p.dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Update(context.Background(), asdd.Key, func(cur store.Document) (store.Change, error) {
		m, err := asdd.Decode(cur.Value)
		if err != nil {
			return store.Change{}, err
		}
		m.AgentHeartbeats["spec_agent"].RetryRequestedAt = "2026-04-20T14:00:00Z"
		m.Revision = cur.Revision + 1
		raw, err := json.Marshal(m)
		return store.Change{Value: raw, Actor: "test", Reason: "a marker left behind"}, err
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	out := p.must("monitor", "--once")
	if !strings.Contains(out, "cleared") || p.heartbeat("spec_agent").RetryRequestedAt != "" {
		t.Fatalf("marker not cleared:\n%s", out)
	}
	if out := p.must("monitor", "--once"); strings.Contains(out, "cleared") {
		t.Fatalf("cleared twice:\n%s", out)
	}
}

// TestRebuildRefusedWhileADaemonServes: the files are not moved under a
// running daemon.
func TestRebuildRefusedWhileADaemonServes(t *testing.T) {
	p := newIP(t)
	p.must("init")
	for _, f := range []string{asdd.Key, integrity.JournalFile} {
		if err := os.Remove(p.path(f)); err != nil {
			t.Fatal(err)
		}
	}
	fl := flock.New(p.path(file.DefaultPidFile))
	if ok, err := fl.TryLock(); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	_, errs, code := p.run("rebuild")
	fl.Unlock()
	if code != reason.ExitConflict || !strings.Contains(errs, "daemon") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, _, code := p.run("rebuild"); code != 0 {
		t.Fatalf("rebuild after the daemon stopped: exit %d", code)
	}
}

// A journal rotated into segments goes aside whole with the manifest:
// otherwise the store would replay the segments and the rebuild would find
// a manifest already there.
func TestRebuildForceWithSegments(t *testing.T) {
	t.Setenv("CUSTODIAN_JOURNAL_SEGMENT_BYTES", "4096")
	p := several(t)
	before := p.statuses()
	segs, err := filepath.Glob(p.path(".asdd/state/journal.*-*.ndjson"))
	if err != nil || len(segs) < 2 {
		t.Fatalf("segments %v, %v: want a rotated journal", segs, err)
	}
	out := p.step(0, "rebuild", "--force")
	for _, s := range segs {
		rel, _ := filepath.Rel(p.dir, s)
		if !strings.Contains(out, "kept aside: "+filepath.ToSlash(rel)+".before-rebuild-") {
			t.Errorf("segment %s not kept aside:\n%s", rel, out)
		}
	}
	// (The rebuilt manifest's own journal may rotate again, into new
	// segments from revision 1.)
	if chain := p.step(0, "verify", asdd.Key); !strings.Contains(chain, "ok") {
		t.Errorf("verify after the rebuild:\n%s", chain)
	}
	if diff := cmp.Diff(before, p.statuses()); diff != "" {
		t.Errorf("(-before +rebuilt):\n%s", diff)
	}
}

// TestCheckReadOnlyWritesNoFile: check --read-only (the pre-commit hook)
// leaves every file of the project as it was — bytes, mtimes, and the set
// of files — even where a plain check would write its caches (no stat
// cache, no check cache, no validity mark yet).
func TestCheckReadOnlyWritesNoFile(t *testing.T) {
	p := newIP(t)
	p.must("init")
	p.write(".asdd/specs/S-1/intent.md", "# S — intent\n")
	p.must("slice", "add", "S-1")
	p.must("propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.96", "--artifact", "intent=.asdd/specs/S-1/intent.md")
	// Without its caches a read would write them.
	for _, name := range []string{".asdd/state/.valid", integrity.CheckCachePath, ".asdd/state/statcache"} {
		if err := os.Remove(p.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
	type stamp struct {
		Bytes string
		Mtime time.Time
	}
	files := func() map[string]stamp {
		out := map[string]stamp{}
		err := filepath.WalkDir(p.path("."), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil && d.Type()&fs.ModeSymlink == 0 {
				return err
			}
			out[path] = stamp{string(b), info.ModTime()}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := files()
	for _, args := range [][]string{{"check", "--read-only"}, {"check", "--read-only", "--full"}} {
		p.must(args...)
		if diff := cmp.Diff(before, files()); diff != "" {
			t.Errorf("%v changed the project (-before +after):\n%s", args, diff)
		}
	}
}
