package app_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// A raw write goes through the application layer: a human's decision, the
// document's own rules checked on the result, a cycle's progress files
// following it.
func TestPutRawWrite(t *testing.T) {
	p := newLocal(t)
	setup(t, p)
	l := p.svc.(*app.Local)
	m, err := l.Manifest(p.ctx(false))
	if err != nil {
		t.Fatal(err)
	}
	rev := m.Revision
	steps := []struct {
		name  string
		agent bool
		req   app.PutDocument
		code  reason.Code
	}{
		{"agent", true, app.PutDocument{Key: asdd.Key, PutRequest: wire.PutRequest{Patch: json.RawMessage(`[]`)}, IfRevision: &rev}, reason.Unauthorized},
		{"neither value nor patch", false, app.PutDocument{Key: asdd.Key}, reason.InvalidInput},
		{"patch without revision", false, app.PutDocument{Key: asdd.Key, PutRequest: wire.PutRequest{Patch: json.RawMessage(`[]`)}}, reason.InvalidInput},
		{"breaks the schema", false, app.PutDocument{Key: asdd.Key, PutRequest: wire.PutRequest{Patch: json.RawMessage(`[{"op":"replace","path":"/slices","value":7}]`)}, IfRevision: &rev}, reason.InvalidInput},
		{"stale revision", false, app.PutDocument{Key: asdd.Key, PutRequest: wire.PutRequest{Patch: json.RawMessage(`[{"op":"replace","path":"/project_context/current_sprint","value":"S9"}]`)}, IfRevision: new(uint64)}, reason.Conflict},
	}
	for _, s := range steps {
		_, err := l.Put(p.ctx(s.agent), s.req)
		if reason.CodeOf(err) != s.code {
			t.Errorf("%s: %v, want %s", s.name, err, s.code)
		}
	}
	if m, _ := l.Manifest(p.ctx(false)); m.Revision != rev {
		t.Fatalf("refused writes committed: revision %d, want %d", m.Revision, rev)
	}
	res, err := l.Put(p.ctx(false), app.PutDocument{Key: asdd.Key, PutRequest: wire.PutRequest{Patch: json.RawMessage(`[{"op":"replace","path":"/project_context/current_sprint","value":"S9"}]`), Actor: "tl", Reason: "fix"}, IfRevision: &rev})
	if err != nil || !res.Changed || res.Revision != rev+1 {
		t.Fatalf("put: %+v %v", res, err)
	}

	// A cycle written whole: its progress files follow.
	const id = "cycle-v1-20261125T120000-abcdef"
	st, err := cycle.New(id, "OAuth", "", 3, clock)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cycle.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(p.ctx(false), app.PutDocument{Key: cycle.Key(id), PutRequest: wire.PutRequest{Value: raw}, Create: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p.root, filepath.FromSlash(cycle.ProgressDir(id)))); err != nil {
		t.Errorf("progress files not written: %v", err)
	}
}
