package samebytes_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/wire"
)

// A phase given in lower case ("to":"partial") is the same request through
// every door: the CLI, MCP and the daemon's HTTP API commit the same
// manifest, because the domain folds the case, not each door.
func TestLowerCaseEnumSameThroughEveryDoor(t *testing.T) {
	t.Setenv("CUSTODIAN_ACTOR", actor)
	viaCLI, viaMCP, viaHTTP := newProject(t), newProject(t), newProject(t)
	for _, p := range []*project{viaCLI, viaMCP, viaHTTP} {
		p.st.Close() // the CLI opens the store itself
		p.write("specs/RETRO-1/requirements.md", "# requirements\n")
		for _, args := range [][]string{
			{"init", "--sprint", "S1"},
			{"slice", "add", "RETRO-1", "--type", "RETRO_SPEC"},
			{"propose", "--agent", "spec", "--slice", "RETRO-1", "--score", "0.97", "--artifact", "requirements=specs/RETRO-1/requirements.md"},
		} {
			if code, out := runCLI(t, p, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, out)
			}
		}
	}
	const slice = "RETRO-1"

	if code, out := runCLI(t, viaCLI, "propose", "--agent", "validation", "--slice", slice, "--score", "0.96", "--to", "partial"); code != 0 {
		t.Fatalf("CLI: exit %d: %s", code, out)
	}

	reopen(t, viaMCP)
	cs := connect(t, viaMCP.server(false), nil)
	if res := call(t, cs, "propose", map[string]any{"agent": "validation", "slice": slice, "score": 0.96, "artifacts": map[string]any{}, "uncertainty": []any{}, "to": "partial"}); res.IsError {
		t.Fatalf("MCP: %s", text(res))
	}
	viaMCP.st.Close()

	status, body := postASDD(t, viaHTTP.root, "propose", `{"agent":"validation","slice":"RETRO-1","score":0.96,"to":"partial"}`)
	if status != http.StatusOK {
		t.Fatalf("HTTP: %d %s", status, body)
	}
	var resp wire.OpResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Outcome != wire.Accepted || resp.Slice == nil || resp.Slice.Status != asdd.Partial {
		t.Fatalf("HTTP: outcome %s, slice %+v; want accepted, %s", resp.Outcome, resp.Slice, asdd.Partial)
	}

	want := viaCLI.read(asdd.Key)
	m, err := asdd.Decode(want)
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Slice(slice); s == nil || s.Status != asdd.Partial {
		t.Fatalf("CLI: slice %+v, want %s", s, asdd.Partial)
	}
	for door, p := range map[string]*project{"MCP": viaMCP, "HTTP": viaHTTP} {
		if got := p.read(asdd.Key); !bytes.Equal(got, want) {
			t.Errorf("%s committed another manifest than the CLI:\n%s\nCLI:\n%s", door, got, want)
		}
	}
}

// postASDD runs one request against the daemon API (custodian serve's
// server over the project's store) and returns its status and body.
func postASDD(t *testing.T, root, op, body string) (int, []byte) {
	t.Helper()
	st, err := file.Open(root, file.Options{Hold: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(st, server.Options{Root: root, Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	}()
	res, err := http.Post("http://"+l.Addr().String()+"/v1/asdd/"+op, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}
