package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
)

// Issue 18 item 8: concurrent halts through the daemon each leave their
// row in the agent failure log (before, 40 concurrent halts left 9 to 14
// rows: the daemon applied their effects at once, each rewriting the log
// from what it had read).
func TestConcurrentHaltsKeepEveryFailureLogRow(t *testing.T) {
	const n = 64
	d := start(t, server.Options{})
	ctx := context.Background()
	if _, err := d.c.Op(ctx, "init", asdd.Init{Sprint: "S1"}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("S-%02d", i)
		if _, err := d.c.Op(ctx, "add-slice", asdd.AddSlice{ID: id, Name: "slice " + id}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d.dir, ".asdd/specs", id, "intent.md")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# Intent "+id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		id := fmt.Sprintf("S-%02d", i)
		wg.Go(func() {
			r, err := d.c.Propose(ctx, asdd.Proposal{Agent: "discovery", Slice: id, Score: 0.40,
				Uncertainty: []string{"unclear scope"},
				Artifacts:   []asdd.Artifact{{Name: "intent", Path: ".asdd/specs/" + id + "/intent.md"}}})
			if err != nil && reason.CodeOf(err) != reason.BelowThreshold {
				errs <- fmt.Errorf("%s: %v", id, err)
			} else if err == nil && (r.Slice == nil || r.Slice.Status != asdd.Blocked) {
				errs <- fmt.Errorf("%s: not halted: %+v", id, r)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	log, err := os.ReadFile(filepath.Join(d.dir, asdd.FailureLogPath))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for i := range n {
		if strings.Contains(string(log), fmt.Sprintf("<!-- ESC-S-%02d-r", i)) {
			rows++
		}
	}
	if rows != n {
		t.Fatalf("%d rows of %d in the failure log:\n%s", rows, n, log)
	}
	notices, err := os.ReadDir(filepath.Join(d.dir, asdd.EscalationDir))
	if err != nil || len(notices) != n {
		t.Fatalf("%d notices (%v), want %d", len(notices), err, n)
	}
	for i := range n {
		b, err := os.ReadFile(filepath.Join(d.dir, ".asdd/specs", fmt.Sprintf("S-%02d", i), "intent.md"))
		if err != nil || !strings.HasPrefix(string(b), "DRAFT — ") {
			t.Fatalf("S-%02d's intent not marked: %q %v", i, b, err)
		}
	}
}

// Issue 18 item 9: a request body that is not valid UTF-8, or that
// escapes a lone surrogate, is INVALID_INPUT and commits nothing (it was
// committed with U+FFFD in place of what was sent).
func TestInvalidUTF8Refused(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	if _, err := d.c.Op(ctx, "init", asdd.Init{Sprint: "S1"}); err != nil {
		t.Fatal(err)
	}
	before, err := d.c.Get(ctx, asdd.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"{\"id\":\"S-1\",\"name\":\"bad \xff name\"}", `{"id":"S-1","name":"bad \ud800 name"}`} {
		code, b := call(t, "POST", d.url+"/v1/asdd/add-slice", "", nil, body)
		if code != 400 || errCode(t, b) != reason.InvalidInput || !strings.Contains(string(b), "UTF") {
			t.Errorf("%q: %d %s", body, code, b)
		}
	}
	after, err := d.c.Get(ctx, asdd.Key)
	if err != nil {
		t.Fatal(err)
	}
	if after.Revision != before.Revision {
		t.Fatalf("committed: revision %d -> %d", before.Revision, after.Revision)
	}
}

// Issue 18 item 1 through the daemon: a proposal whose artifact is one of
// the custodian's files, or reaches one through a symlink, is refused
// with INVALID_INPUT; nothing is committed or marked.
func TestHaltMarkerOnCustodianFilesRefusedByTheDaemon(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	if _, err := d.c.Op(ctx, "init", asdd.Init{Sprint: "S1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.c.Op(ctx, "add-slice", asdd.AddSlice{ID: "S-1", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".asdd/state", filepath.Join(d.dir, "notes")); err != nil {
		t.Fatal(err)
	}
	journal, err := os.ReadFile(filepath.Join(d.dir, ".asdd/state/journal.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := d.c.Get(ctx, asdd.Key)
	for _, p := range []string{".asdd/state/journal.ndjson", "notes/journal.ndjson", ".asdd/config.yaml"} {
		_, err := d.c.Propose(ctx, asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.4,
			Uncertainty: []string{"x"}, Artifacts: []asdd.Artifact{{Name: "intent", Path: p}}})
		if reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("%s: %v, want INVALID_INPUT", p, err)
		}
	}
	after, _ := d.c.Get(ctx, asdd.Key)
	if after.Revision != before.Revision {
		t.Fatalf("committed: %d -> %d", before.Revision, after.Revision)
	}
	now, err := os.ReadFile(filepath.Join(d.dir, ".asdd/state/journal.ndjson"))
	if err != nil || !strings.HasPrefix(string(now), string(journal)) || strings.Contains(string(now), "DRAFT") {
		t.Fatalf("journal changed: %v", err)
	}
}
