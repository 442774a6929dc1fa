package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/wire"
)

// Issue 19, item 2: every answer of the API says whether state changed —
// an operation's response "committed": true with "outcome" accepted or
// halted (a score below the minimum halts even without uncertainty
// factors); an error body "committed": false, "outcome": "rejected".
func TestOperationOutcome(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	must := func(r *wire.OpResponse, err error) *wire.OpResponse {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	must(d.c.Op(ctx, "init", asdd.Init{}))
	r := must(d.c.Op(ctx, "add-slice", asdd.AddSlice{ID: "S"}))
	if !r.Committed || r.Outcome != asdd.ResultAccepted {
		t.Fatalf("add-slice: %+v", r)
	}
	os.MkdirAll(filepath.Join(d.dir, "specs"), 0o755)
	os.WriteFile(filepath.Join(d.dir, "specs/intent.md"), []byte("intent\n"), 0o644)
	r = must(d.c.Propose(ctx, asdd.Proposal{Agent: "discovery", Slice: "S", Score: 0.5,
		Artifacts: []asdd.Artifact{{Name: "intent", Path: "specs/intent.md"}}}))
	if !r.Committed || r.Outcome != asdd.ResultHalted || r.Verdict == nil || r.Verdict.Code != reason.BelowThreshold || r.Slice.Status != asdd.Blocked {
		t.Fatalf("halt: %+v", r)
	}
	if e := r.Slice.OpenEscalation(); e == nil || len(e.Findings) != 1 {
		t.Fatalf("escalation %+v", r.Slice.Escalations)
	}

	// A rejection, read raw: the error body says nothing changed.
	body, _ := json.Marshal(asdd.Proposal{Agent: "discovery", Slice: "S", Score: 0.97})
	resp, err := http.Post(d.url+"/v1/asdd/propose", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb struct {
		Error     reason.Error
		Committed *bool
		Outcome   string
	}
	if err := json.NewDecoder(resp.Body).Decode(&eb); err != nil || eb.Committed == nil || *eb.Committed || eb.Outcome != asdd.ResultRejected || eb.Error.Code != reason.Halted {
		t.Fatalf("error body %+v %v (HTTP %d)", eb, err, resp.StatusCode)
	}
}
