package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVerifyRepairGolden: what a user sees when history
// is lost (issue 18 item 7: exit 5, both files kept, an explicit repair)
// and after an ordinary crash (item 11: verify says what recovery will do
// and exits 0).
func TestVerifyRepairGolden(t *testing.T) {
	s := &storeTranscript{t: t, dir: t.TempDir(), now: time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)}
	doc := filepath.Join(s.dir, "notes", "doc.json")
	journal := filepath.Join(s.dir, "notes", "doc.journal.ndjson")
	s.run("debug", "write", "notes/doc.json", "--writer", "a", "--count", "3")
	s.run("verify")

	// The journal loses its last record: every command refuses, verify
	// too, and nothing is changed until a person chooses.
	data, _ := os.ReadFile(journal)
	lines := bytes.SplitAfter(data, []byte("\n"))
	os.WriteFile(journal, bytes.Join(lines[:len(lines)-2], nil), 0o644)
	snap, _ := os.ReadFile(doc)
	if code := s.run("get", "notes/doc.json"); code != 5 {
		t.Errorf("get with a lost record: exit %d, want 5", code)
	}
	if code := s.run("verify"); code != 5 {
		t.Errorf("verify with a lost record: exit %d, want 5", code)
	}
	if now, _ := os.ReadFile(doc); !bytes.Equal(now, snap) {
		t.Error("the snapshot newer than its journal was changed")
	}
	s.run("repair", "notes/doc.json", "--keep", "snapshot", "--reason", "the lost commit stands", "--actor", "tl")
	s.run("history", "notes/doc.json", "--from", "3")
	s.run("verify")

	// A crash between the journal's fsync and the snapshot's rename.
	before, _ := os.ReadFile(doc)
	s.run("debug", "write", "notes/doc.json", "--writer", "b", "--count", "1")
	after, _ := os.ReadFile(doc)
	os.WriteFile(doc, before, 0o644)
	os.WriteFile(doc+".tmp", after[:len(after)/2], 0o644)
	if code := s.run("verify"); code != 0 {
		t.Errorf("verify of a crash image: exit %d, want 0", code)
	}
	s.run("get", "notes/doc.json")
	s.run("verify")

	// The journal deleted: reported, not "no documents".
	os.Remove(journal)
	if code := s.run("verify"); code != 5 {
		t.Errorf("verify with the journal deleted: exit %d, want 5", code)
	}
	s.run("repair", "notes/doc.json", "--keep", "snapshot", "--reason", "journal lost", "--actor", "tl")
	s.run("verify")

	// A directory where the journal belongs.
	os.MkdirAll(filepath.Join(s.dir, "other"), 0o755)
	os.Mkdir(filepath.Join(s.dir, "other", "x.journal.ndjson"), 0o755)
	if code := s.run("verify"); code != 5 {
		t.Errorf("verify with a directory as a journal: exit %d, want 5", code)
	}
	checkGolden(t, filepath.Join("testdata", "store", "repair.golden"), hashRE.ReplaceAllString(pidRE.ReplaceAllString(s.buf.String(), `"PID/`), "sha256:HASH"))
}

// TestDirectEditsGolden: a direct edit without a daemon is
// adopted when valid (direct_edits: adopt, the default) and otherwise kept
// aside with an escalation notice (direct_edits: reject); both reported on
// stderr.
func TestDirectEditsGolden(t *testing.T) {
	s := &storeTranscript{t: t, dir: t.TempDir(), now: time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)}
	doc := filepath.Join(s.dir, "notes", "doc.json")
	s.run("debug", "write", "notes/doc.json", "--writer", "a", "--count", "2")
	os.WriteFile(doc, []byte(`{"a-0": "by hand"}`), 0o644)
	s.run("get", "notes/doc.json")
	s.run("history", "notes/doc.json", "--from", "3")

	os.MkdirAll(filepath.Join(s.dir, ".asdd"), 0o755)
	os.WriteFile(filepath.Join(s.dir, ".asdd", "config.yaml"), []byte("direct_edits: reject\n"), 0o644)
	os.WriteFile(doc, []byte(`{"a-0": "again"}`), 0o644)
	s.run("get", "notes/doc.json")
	notices, _ := filepath.Glob(filepath.Join(s.dir, ".asdd", "escalations", "direct-edit-*.md"))
	if len(notices) != 1 {
		t.Fatalf("escalation notices: %v", notices)
	}
	b, _ := os.ReadFile(notices[0])
	s.buf.WriteString("--- " + strings.TrimPrefix(notices[0], s.dir+"/") + "\n" + string(b))

	os.WriteFile(filepath.Join(s.dir, ".asdd", "config.yaml"), []byte("direct_edits: maybe\n"), 0o644)
	if code := s.run("get", "notes/doc.json"); code != 2 {
		t.Errorf("a bad policy: exit %d, want 2", code)
	}
	checkGolden(t, filepath.Join("testdata", "store", "direct-edits.golden"), hashRE.ReplaceAllString(pidRE.ReplaceAllString(s.buf.String(), `"PID/`), "sha256:HASH"))
}

// TestFIFOsThroughTheCLI: a FIFO where the config, the
// journal, the lock or the snapshot belongs: each command answers at once
// with exit 2 (config) or 5 (state file), never hangs.
func TestFIFOsThroughTheCLI(t *testing.T) {
	for _, tc := range []struct {
		file string
		exit int
	}{
		{".asdd/config.yaml", 2},
		{".asdd/state/journal.ndjson", 5},
		{".asdd/state/.lock", 5},
		{".asdd/state/manifest.json", 5},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s := &storeTranscript{t: t, dir: t.TempDir(), now: time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)}
			if code := s.run("init"); code != 0 {
				t.Fatalf("init: %s", s.buf.String())
			}
			p := filepath.Join(s.dir, filepath.FromSlash(tc.file))
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			done := make(chan int, 1)
			go func() { done <- s.run("status") }()
			select {
			case code := <-done:
				if code != tc.exit || !strings.Contains(s.buf.String(), filepath.Base(tc.file)) {
					t.Fatalf("status with a FIFO as %s: exit %d, want %d\n%s", tc.file, code, tc.exit, s.buf.String())
				}
			case <-time.After(3 * time.Second):
				t.Fatalf("status hangs on a FIFO as %s", tc.file)
			}
		})
	}
}

// TestDirectEditOfTheTaskManifest: the case the issue names —
// a direct edit of .impl/manifest.json, as the original task-manifest.sh
// makes — is adopted when the task manifest's rules accept it (its diff in
// the history), and kept aside with the committed value when they do not
// (a merged task moved back).
func TestDirectEditOfTheTaskManifest(t *testing.T) {
	s := &storeTranscript{t: t, dir: t.TempDir(), now: time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)}
	s.run("impl", "--init", "--plan-path", "docs/plan.md", "--plan-number", "1", "--plan-title", "Auth")
	s.run("impl", "--add-task", "--task-id", "1.1", "--phase", "1", "--description", "login")
	s.run("impl", "--update-status", "--task-id", "1.1", "--status", "merged")
	m := filepath.Join(s.dir, ".impl", "manifest.json")
	edit := func(from, to string) {
		b, err := os.ReadFile(m)
		if err != nil || !strings.Contains(string(b), from) {
			t.Fatalf("manifest: %v\n%s", err, b)
		}
		os.WriteFile(m, []byte(strings.Replace(string(b), from, to, 1)), 0o644)
	}
	edit(`"login"`, `"login and logout"`)
	if code := s.run("impl", "--get-task", "--task-id", "1.1"); code != 0 {
		t.Fatalf("get-task after a valid edit: exit %d", code)
	}
	if !strings.Contains(s.buf.String(), "adopted as revision") || !strings.Contains(s.buf.String(), "login and logout") {
		t.Fatalf("valid edit not adopted:\n%s", s.buf.String())
	}
	edit(`"merged"`, `"pending"`)
	s.run("impl", "--get-task", "--task-id", "1.1")
	if !strings.Contains(s.buf.String(), "rejected (INVALID_TRANSITION") {
		t.Fatalf("a merged task moved back was not rejected:\n%s", s.buf.String())
	}
	b, _ := os.ReadFile(m)
	if !strings.Contains(string(b), `"merged"`) || !strings.Contains(string(b), "login and logout") {
		t.Fatalf("the committed value is not back on disk:\n%s", b)
	}
	s.run("history", ".impl/manifest.json")
	if !strings.Contains(s.buf.String(), "direct-edit") {
		t.Fatalf("no direct-edit commit in the history:\n%s", s.buf.String())
	}
}
