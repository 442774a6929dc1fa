package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

// storeTranscript runs commands in-process against one project with a
// fixed clock and records what a user sees: the command, stdout, stderr and
// the exit code.
type storeTranscript struct {
	t   *testing.T
	dir string
	now time.Time
	buf bytes.Buffer
}

func (s *storeTranscript) run(args ...string) int {
	var out, errb bytes.Buffer
	s.now = s.now.Add(time.Second)
	now := s.now
	app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &errb, Now: func() time.Time { return now }}
	code := Run(app, append([]string{"-C", s.dir}, args...))
	fmt.Fprintf(&s.buf, "$ custodian %s\n", strings.Join(args, " "))
	s.buf.WriteString(strings.ReplaceAll(out.String(), s.dir, "$DIR"))
	for _, l := range strings.Split(strings.TrimRight(errb.String(), "\n"), "\n") {
		if l != "" && !strings.Contains(l, " WARN ") {
			fmt.Fprintf(&s.buf, "stderr: %s\n", strings.ReplaceAll(l, s.dir, "$DIR"))
		}
	}
	fmt.Fprintf(&s.buf, "[exit %d]\n\n", code)
	return code
}

func TestStoreVerbsGolden(t *testing.T) {
	s := &storeTranscript{t: t, dir: t.TempDir(), now: time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)}
	s.run("debug", "write", "notes/doc.json", "--writer", "a", "--count", "3", "--cycle", "2")
	s.run("get", "notes/doc.json")
	s.run("get", "notes/doc.json", "--at", "1", "--json")
	s.run("history", "notes/doc.json")
	s.run("diff", "notes/doc.json", "1", "3")
	s.run("diff", "notes/doc.json", "0", "1", "--json")
	s.run("rollback", "notes/doc.json", "--to", "1", "--reason", "undo the experiment", "--actor", "tl")
	s.run("history", "notes/doc.json", "--from", "4", "--json")
	s.run("verify")
	// Bad input: each is a clear error, with a reason code and exit code.
	s.run("get", "missing.json")
	s.run("get", "../outside.json")
	s.run("get", "notes/doc.json", "--at", "99")
	s.run("get", "notes/doc.json", "--at", "two")
	s.run("diff", "notes/doc.json", "1")
	s.run("rollback", "notes/doc.json", "--to", "1")
	s.run("get", "missing.json", "--json")
	// A journal edited behind the custodian's back: verify exits 5 and
	// names the revision; nothing is repaired.
	j := filepath.Join(s.dir, "notes", "doc.journal.ndjson")
	data, err := os.ReadFile(j)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(j, bytes.Replace(data, []byte(`"actor":"a"`), []byte(`"actor":"z"`), 1), 0o644)
	if code := s.run("verify"); code != 5 {
		t.Errorf("verify of a tampered journal: exit %d, want 5", code)
	}
	if code := s.run("get", "notes/doc.json"); code != 5 {
		t.Errorf("get of a tampered journal: exit %d, want 5", code)
	}
	// Volatile parts: process ids in values, hashes.
	got := pidRE.ReplaceAllString(s.buf.String(), `"PID/`)
	got = hashRE.ReplaceAllString(got, "sha256:HASH")
	checkGolden(t, filepath.Join("testdata", "store", "transcript.golden"), got)
}

var (
	pidRE  = regexp.MustCompile(`"[0-9]+/`)
	hashRE = regexp.MustCompile(`sha256:[0-9a-f]+`)
)

// TestRollbackKeepsDomainRules: a generic rollback cannot do what the
// domain's own commands refuse — here, shorten a cycle's append-only change
// log.
func TestRollbackKeepsDomainRules(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) (string, int) {
		var out, errb bytes.Buffer
		app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &errb, Now: time.Now}
		code := Run(app, append([]string{"-C", dir}, args...))
		return out.String() + errb.String(), code
	}
	out, code := run("cycle", "create", "Ship OAuth", "--json")
	if code != 0 {
		t.Fatalf("create: %d %s", code, out)
	}
	id := regexp.MustCompile(`cycle-v1-[0-9T]+-[a-z0-9]+`).FindString(out)
	if id == "" {
		t.Fatalf("no cycle id in %s", out)
	}
	if out, code := run("cycle", "iterate", id); code != 0 {
		t.Fatalf("iterate: %d %s", code, out)
	}
	for _, f := range []string{"a.go", "b.go"} {
		if out, code := run("cycle", "change", id, "--file", f, "--action", "create", "-m", "add "+f); code != 0 {
			t.Fatalf("change: %d %s", code, out)
		}
	}
	key := ".workflow/.cycle/" + id + ".json"
	out, code = run("rollback", key, "--to", "2", "--reason", "try to drop the change log")
	if code != 3 || !strings.Contains(out, "INVALID_TRANSITION") {
		t.Fatalf("rollback that shortens the change log: exit %d\n%s", code, out)
	}
	hist, _ := run("history", key, "--json")
	if n := strings.Count(hist, `"rev":`); n != 4 {
		t.Fatalf("history has %d commits after a refused rollback, want 4", n)
	}
}
