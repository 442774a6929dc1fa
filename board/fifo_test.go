package board_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
)

// TestHashesAndNoticeRefuseFIFOs: a FIFO where an artifact or
// an escalation notice belongs is answered at once with an error, never a
// request (and an OS thread) pinned forever.
func TestHashesAndNoticeRefuseFIFOs(t *testing.T) {
	f := newFixture(t)
	sum := f.write("specs/S-1/intent.md", "# intent\n")
	f.apply(asdd.Init{})
	f.apply(asdd.AddSlice{ID: "S-1"})
	f.apply(asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.5, Uncertainty: []string{"vague"}, Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/S-1/intent.md", SHA256: sum}}})
	intent := filepath.Join(f.dir, "specs/S-1/intent.md")
	os.Remove(intent)
	if err := syscall.Mkfifo(intent, 0o644); err != nil {
		t.Fatal(err)
	}
	http.DefaultClient.Timeout = 5 * time.Second
	defer func() { http.DefaultClient.Timeout = 0 }()
	start := time.Now()
	f.get("/hashes?slice=S-1", http.StatusBadRequest, nil)
	// The escalation notice: a FIFO in its place.
	doc, err := f.st.Get(context.Background(), asdd.Key)
	if err != nil {
		t.Fatal(err)
	}
	m, err := asdd.Decode(doc.Value)
	if err != nil {
		t.Fatal(err)
	}
	notice := filepath.Join(f.dir, filepath.FromSlash(m.Slice("S-1").OpenEscalation().Path))
	os.MkdirAll(filepath.Dir(notice), 0o755)
	os.Remove(notice)
	if err := syscall.Mkfifo(notice, 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(f.srv.URL + "/notice?slice=S-1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("a FIFO served as a notice")
	}
	f.get("/board.json", http.StatusOK, nil)
	// (a FIFO opened would block for ever: the bound is for that, not a
	// measure of speed, and leaves room for a busy machine)
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("answers took %v", took)
	}
}
