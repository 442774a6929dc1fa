package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/mcp"
)

// rawSession speaks JSON-RPC to /mcp with plain POSTs, as agents' own
// clients do.
type rawSession struct {
	t       *testing.T
	url, id string
	version string
}

func (s *rawSession) post(body string, hdr ...string) (int, http.Header, []byte) {
	s.t.Helper()
	code, h, b, err := s.postCtx(context.Background(), body, hdr...)
	if err != nil {
		s.t.Fatal(err)
	}
	return code, h, b
}

// postCtx posts body; ctx may abandon the request.
func (s *rawSession) postCtx(ctx context.Context, body string, hdr ...string) (int, http.Header, []byte, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.version != "" {
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b, err
}

func openRaw(t *testing.T, url string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url}
	code, hdr, b := s.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if code != http.StatusOK || hdr.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %s", code, b)
	}
	s.id, s.version = hdr.Get("Mcp-Session-Id"), "2025-11-25"
	if code, _, b := s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", code, b)
	}
	return s
}

// decoded is a JSON-RPC answer as generic JSON, for comparing answers
// semantically.
func decoded(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("answer %q: %v", b, err)
	}
	return v
}

func serveHTTP(t *testing.T, s *mcp.Server, o mcp.HTTPOptions) (*mcp.HTTPHandler, string) {
	t.Helper()
	h := mcp.NewHTTPHandler(s, nil, nil, o)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.CloseSessions(); srv.Close() })
	return h, srv.URL
}

// TestHTTPCalls: plain JSON-RPC POSTs on a session get JSON answers: a
// result, or a tool error for a rule's rejection, a schema violation or
// oversized arguments; the transport's refusals (unknown tool, malformed
// body, batch, rebinding Host, unsupported version, content type, body
// over the cap, deleted session) are the SDK's.
func TestHTTPCalls(t *testing.T) {
	t.Setenv("CUSTODIAN_ACTOR", actor)
	p := newProject(t)
	p.seed()
	s := mcp.New(mcp.Options{
		Service:     func(context.Context) (app.Service, error) { return p.svc, nil },
		Actor:       actor,
		Now:         func() time.Time { return now },
		MaxArgBytes: 200,
	})
	t.Cleanup(func() { s.Close() })
	_, url := serveHTTP(t, s, mcp.HTTPOptions{MaxBodyBytes: 1 << 20})
	raw := openRaw(t, url)

	for i, tc := range []struct {
		name, args string
		isError    bool
	}{
		{"status", `{}`, false},
		{"status", `{"slice":"SLICE-001"}`, false},
		{"slice_show", `{"slice":"SLICE-001"}`, false},
		{"tasks_ready", `{"slice":"SLICE-001"}`, false},
		{"impl_summary", `{}`, false},
		{"history", `{"key":".asdd/state/manifest.json","limit":2}`, false},
		{"slice_show", `{"slice":"SLICE-404"}`, true},                    // a rule's error
		{"slice_show", `{}`, true},                                       // required argument missing
		{"slice_show", `{"slice":7}`, true},                              // wrong type
		{"slice_show", `{"slice":"SLICE-001","x":1}`, true},              // unknown argument
		{"slice_show", `{"Slice":"SLICE-001"}`, true},                    // names are exact
		{"slice_show", `{"slice":null}`, true},                           // null
		{"status", `{"slice":"` + strings.Repeat("S", 300) + `"}`, true}, // over MaxArgBytes
	} {
		code, hdr, b := raw.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+1, tc.name, tc.args))
		if code != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d %s %s", tc.name, tc.args, code, hdr.Get("Content-Type"), b)
		}
		res, _ := decoded(t, b)["result"].(map[string]any)
		if isErr, _ := res["isError"].(bool); isErr != tc.isError {
			t.Errorf("%s %s: isError %v, want %v: %s", tc.name, tc.args, isErr, tc.isError, b)
		}
	}

	// A write commits.
	code, _, b := raw.post(`{"jsonrpc":"2.0","id":"w1","method":"tools/call","params":{"name":"heartbeat","arguments":{"agent":"discovery","done":3}}}`)
	var beat struct {
		ID     string `json:"id"`
		Result struct {
			StructuredContent mcp.OpResult `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &beat); err != nil || code != 200 || beat.ID != "w1" || !beat.Result.StructuredContent.Committed {
		t.Fatalf("heartbeat: %d %s", code, b)
	}

	// The transport's refusals.
	for _, tc := range []struct {
		what, body string
		hdr        []string
		code       int
		errCode    float64 // JSON-RPC error code, if any
	}{
		{"an unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, nil, 200, -32602},
		{"tools/list", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`, nil, 200, 0},
		{"a malformed body", `{"jsonrpc":"2.0","id":3,"method":"tools/call",`, nil, 400, 0},
		{"a batch", `[{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"status","arguments":{}}}]`, nil, 400, 0},
		{"a Host that is not loopback", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"status","arguments":{}}}`, []string{"Host", "evil.example"}, 403, 0},
		{"an unsupported protocol version", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"status","arguments":{}}}`, []string{"Mcp-Protocol-Version", "1999-01-01"}, 400, 0},
		{"a wrong content type", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"status","arguments":{}}}`, []string{"Content-Type", "text/plain"}, 415, 0},
	} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", raw.id)
		req.Header.Set("Mcp-Protocol-Version", raw.version)
		for i := 0; i+1 < len(tc.hdr); i += 2 {
			if tc.hdr[i] == "Host" {
				req.Host = tc.hdr[i+1]
			} else {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d, want %d: %s", tc.what, resp.StatusCode, tc.code, b)
			continue
		}
		if tc.errCode != 0 {
			var m struct {
				Error struct{ Code float64 } `json:"error"`
			}
			json.Unmarshal(b, &m)
			if m.Error.Code != tc.errCode {
				t.Errorf("%s: %s, want error %v", tc.what, b, tc.errCode)
			}
		}
	}

	// A body over the cap is refused before anything is decoded.
	big := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"status","arguments":{"slice":"` + strings.Repeat("x", 1<<20) + `"}}}`
	if code, _, b := raw.post(big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1 MiB body: %d %s, want 413", code, b)
	}

	// The SDK's own client.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "sdk", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res := call(t, cs, "heartbeat", map[string]any{"agent": "discovery", "done": 4}); res.IsError {
		t.Fatal(text(res))
	}
	cs.Close()

	// A deleted session is gone.
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Mcp-Session-Id", raw.id)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if code, _, b := raw.post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"status","arguments":{}}}`); code != http.StatusNotFound {
		t.Errorf("a call on a deleted session: %d %s, want 404", code, b)
	}
}

// TestHTTPSessionTimeout: calls keep a session open; one idle longer than
// the timeout is closed.
func TestHTTPSessionTimeout(t *testing.T) {
	p := newProject(t)
	p.seed()
	_, url := serveHTTP(t, p.server(false), mcp.HTTPOptions{SessionTimeout: 300 * time.Millisecond})
	raw := openRaw(t, url)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status","arguments":{}}}`
	for range 10 {
		time.Sleep(100 * time.Millisecond)
		if code, _, b := raw.post(body); code != http.StatusOK {
			t.Fatalf("a call on an active session: %d %s", code, b)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		time.Sleep(400 * time.Millisecond)
		code, _, _ := raw.post(body)
		if code == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an idle session still answers (%d)", code)
		}
	}
}

// TestHTTPDefaultBodyLimit: without MaxBodyBytes a body over the SDK's
// default cap (4 MiB) is refused 413.
func TestHTTPDefaultBodyLimit(t *testing.T) {
	p := newProject(t)
	p.seed()
	_, url := serveHTTP(t, p.server(false), mcp.HTTPOptions{})
	raw := openRaw(t, url)
	args := `{"slice":"` + strings.Repeat("x", sdk.DefaultMaxRequestBodyBytes) + `"}`
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status","arguments":%s}}`, args)
	if code, _, b := raw.post(body); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 4 MiB: %d %.200s", code, b)
	}
}

// initialize opens a session with the bearer token auth and returns the
// answer's status, its Retry-After and the session id.
func initialize(t *testing.T, url, auth string) (code int, retryAfter, id string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Session-Id")
}

// TestHTTPSessionCaps: sessions are capped per bearer token and in all; a
// new session beyond a cap is refused 503 with Retry-After, and one can
// open again once a session is closed (DELETE) or expires.
func TestHTTPSessionCaps(t *testing.T) {
	p := newProject(t)
	p.seed()
	const perCaller, total = 1500, 2000
	h, url := serveHTTP(t, p.server(false), mcp.HTTPOptions{MaxSessions: total, MaxSessionsPerCaller: perCaller})
	open := func(auth string, n int) []string {
		ids := make([]string, n)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < n; i += 4 {
					code, _, id := initialize(t, url, auth)
					if code != http.StatusOK || id == "" {
						t.Errorf("session %d of %s: %d", i, auth, code)
						return
					}
					ids[i] = id
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			t.FailNow()
		}
		return ids
	}
	refused := func(auth, what string) {
		t.Helper()
		code, retry, _ := initialize(t, url, auth)
		if code != http.StatusServiceUnavailable || retry == "" {
			t.Fatalf("%s: %d, Retry-After %q; want 503 with Retry-After", what, code, retry)
		}
	}
	a := open("a", perCaller)
	refused("a", "a session beyond the cap of a token")
	open("b", total-perCaller)
	refused("b", "a session beyond the cap in all")
	if n := h.Sessions(); n != total {
		t.Fatalf("%d sessions open, want %d", n, total)
	}

	// A closed session makes room (its end is noted as it happens).
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Mcp-Session-Id", a[0])
	req.Header.Set("Authorization", "Bearer a")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	waitOpen(t, url, "a")

	// An expired one too.
	_, url = serveHTTP(t, p.server(false), mcp.HTTPOptions{MaxSessions: 1, SessionTimeout: 200 * time.Millisecond})
	if code, _, _ := initialize(t, url, "c"); code != http.StatusOK {
		t.Fatalf("the first session: %d", code)
	}
	refused("c", "a second session beyond a cap of 1")
	waitOpen(t, url, "c")
}

// waitOpen waits until a session opens for auth.
func waitOpen(t *testing.T, url, auth string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, _, _ := initialize(t, url, auth)
		if code == http.StatusOK {
			return
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("a new session: %d", code)
		}
	}
}

// TestHTTPInvalidUTF8: over /mcp too, tool arguments with a raw invalid
// byte or a lone surrogate escape are INVALID_INPUT and change nothing.
func TestHTTPInvalidUTF8(t *testing.T) {
	p := newProject(t)
	p.seed()
	_, url := serveHTTP(t, p.server(false), mcp.HTTPOptions{})
	raw := openRaw(t, url)
	before := docBytes(t, p.st, asdd.Key)
	for i, args := range []string{"{\"slice\":\"SLICE-002\",\"name\":\"a\xffb\"}", `{"slice":"SLICE-002","name":"a\ud800b"}`, `{"slice":"SLICE-002","name":"a\udc00"}`} {
		code, _, b := raw.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slice_add","arguments":%s}}`, i+1, args))
		var a rpcAnswer
		if err := json.Unmarshal(b, &a); err != nil || code != http.StatusOK || a.Result == nil || !a.Result.IsError || !strings.HasPrefix(a.Result.Content[0].Text, "INVALID_INPUT:") {
			t.Errorf("%q: %d %s", args, code, b)
		}
	}
	if !bytes.Equal(before, docBytes(t, p.st, asdd.Key)) {
		t.Error("the manifest changed")
	}
}
