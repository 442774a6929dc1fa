package effects

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
)

func open(t *testing.T) (*Project, string) {
	t.Helper()
	dir := t.TempDir()
	p, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, dir
}

func TestApplyIsIdempotent(t *testing.T) {
	p, dir := open(t)
	if err := os.MkdirAll(filepath.Join(dir, "specs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "specs/req.md"), []byte("# Requirements\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := p.Artifact("requirements", "specs/req.md", asdd.DefaultMarker)
	if err != nil {
		t.Fatal(err)
	}
	effs := []asdd.Effect{
		{Kind: asdd.EffectMarkArtifact, Path: "specs/req.md", Marker: asdd.DefaultMarker},
		{Kind: asdd.EffectWriteFile, Path: ".asdd/escalations/ESC-1.md", Content: "notice\n"},
		{Kind: asdd.EffectUpsertRow, Path: asdd.FailureLogPath, Key: "ESC-1", Content: "| a | open |", Header: asdd.FailureLogHeader()},
		{Kind: asdd.EffectUpsertRow, Path: asdd.FailureLogPath, Key: "ESC-2", Content: "| b | open |", Header: asdd.FailureLogHeader()},
	}
	for range 2 {
		if err := p.Apply(effs); err != nil {
			t.Fatal(err)
		}
	}
	marked, _ := os.ReadFile(filepath.Join(dir, "specs/req.md"))
	if string(marked) != "DRAFT — AGENT HALTED\n\n# Requirements\n" {
		t.Fatalf("marked file %q", marked)
	}
	if got, _ := p.Hash("specs/req.md"); got != a.MarkedSHA256 {
		t.Fatalf("marked hash %s, predicted %s", got, a.MarkedSHA256)
	}
	// resolve: row ESC-1 replaced in place
	if err := p.Apply([]asdd.Effect{{Kind: asdd.EffectUpsertRow, Path: asdd.FailureLogPath, Key: "ESC-1", Content: "| a | resolved |"}}); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, asdd.FailureLogPath))
	want := asdd.FailureLogHeader() + "| a | resolved | <!-- ESC-1 -->\n| b | open | <!-- ESC-2 -->\n"
	if string(log) != want {
		t.Fatalf("log\n%s\nwant\n%s", log, want)
	}
	if n, _ := os.ReadDir(filepath.Join(dir, ".asdd/escalations")); len(n) != 1 {
		t.Fatalf("leftover files: %v", n)
	}
}

func TestPathsStayInside(t *testing.T) {
	p, dir := open(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../x", "/etc/passwd", "link.md"} {
		if _, err := p.Artifact("a", name, asdd.DefaultMarker); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("%s: %v, want INVALID_INPUT", name, err)
		}
	}
	if _, err := p.Artifact("a", "missing.md", asdd.DefaultMarker); reason.CodeOf(err) != reason.StateInconsistency {
		t.Errorf("missing: %v", err)
	}
	if err := p.Apply([]asdd.Effect{{Kind: asdd.EffectMarkArtifact, Path: "link.md", Marker: "X"}}); err == nil {
		t.Error("marked a file outside the project")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "x" {
		t.Errorf("file outside changed: %q", b)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Artifact("a", "d", asdd.DefaultMarker); err == nil || !strings.Contains(err.Error(), "regular") {
		t.Errorf("directory: %v", err)
	}
}

func FuzzUpsertRow(f *testing.F) {
	f.Add("# log\n| a |\n", "K", "| row |")
	f.Add("", "ESC-1", "| x |")
	f.Fuzz(func(t *testing.T, doc, key, row string) {
		if strings.ContainsAny(key+row, "\n") || key == "" {
			return
		}
		once := UpsertRow([]byte(doc), key, row)
		twice := UpsertRow(once, key, row)
		if string(once) != string(twice) {
			t.Fatalf("not idempotent:\n%q\n%q", once, twice)
		}
		if !strings.Contains(string(once), row+" <!-- "+key+" -->\n") {
			t.Fatalf("row missing: %q", once)
		}
	})
}

// Issue 18 item 12 (and 16): a FIFO named as an artifact is refused at
// once (exit 2), never waited on; a symlink loop is an integrity finding
// (exit 5), not an internal error.
func TestArtifactNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("loop-b.md", filepath.Join(dir, "loop-a.md"))
	os.Symlink("loop-a.md", filepath.Join(dir, "loop-b.md"))
	p, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, tc := range []struct {
		name string
		exit int
	}{{"pipe.md", reason.ExitUsage}, {"loop-a.md", reason.ExitIntegrity}} {
		done := make(chan error, 1)
		go func() { _, err := p.Hash(tc.name); done <- err }()
		select {
		case err := <-done:
			if reason.ExitCode(err) != tc.exit || !strings.Contains(err.Error(), tc.name) {
				t.Errorf("Hash(%s): %v (exit %d), want exit %d", tc.name, err, reason.ExitCode(err), tc.exit)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("Hash(%s) blocked", tc.name)
		}
		if _, err := p.Observe([]string{tc.name}); err == nil {
			t.Errorf("Observe(%s) passed", tc.name)
		}
	}
}
