package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
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

// TestHTTPFastPath: a tool call on an established session is answered by
// the fast path with the same JSON-RPC answer the SDK's transport gives
// (params with an unknown _meta member take the SDK's path), for results, tool errors,
// schema violations, oversized arguments and unknown tools; what the fast
// path does not serve reaches the SDK and gets its answers.
func TestHTTPFastPath(t *testing.T) {
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
	h, url := serveHTTP(t, s, mcp.HTTPOptions{MaxBodyBytes: 1 << 20})
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
		before := h.FastCalls()
		code, hdr, fast := raw.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i+1, tc.name, tc.args))
		if code != http.StatusOK || hdr.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %s: %d %s %s", tc.name, tc.args, code, hdr.Get("Content-Type"), fast)
		}
		if h.FastCalls() != before+1 {
			t.Fatalf("%s %s: not answered by the fast path", tc.name, tc.args)
		}
		code, _, slow := raw.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"custodian.dev/test":1},"name":%q,"arguments":%s}}`, i+1, tc.name, tc.args))
		if code != http.StatusOK || h.FastCalls() != before+1 {
			t.Fatalf("%s %s with _meta: %d, fast calls %d→%d", tc.name, tc.args, code, before, h.FastCalls())
		}
		if testing.Verbose() && i < 2 {
			t.Logf("fast path %s\nSDK       %s", fast, slow)
		}
		f, sl := decoded(t, fast), decoded(t, slow)
		if !reflect.DeepEqual(f, sl) {
			t.Errorf("%s %s:\nfast path %s\nSDK       %s", tc.name, tc.args, fast, slow)
		}
		res, _ := f["result"].(map[string]any)
		if isErr, _ := res["isError"].(bool); isErr != tc.isError {
			t.Errorf("%s %s: isError %v, want %v: %s", tc.name, tc.args, isErr, tc.isError, fast)
		}
	}

	// A progress token is no reason to leave the fast path (the tools
	// send no progress).
	before := h.FastCalls()
	code, _, b := raw.post(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"_meta":{"progressToken":"p1"},"name":"status","arguments":{}}}`)
	if code != http.StatusOK || h.FastCalls() != before+1 || !strings.Contains(string(b), `"revision"`) {
		t.Fatalf("a call with a progress token: %d, fast calls %d→%d: %s", code, before, h.FastCalls(), b)
	}

	// A write through the fast path commits as the SDK's path does.
	code, _, b = raw.post(`{"jsonrpc":"2.0","id":"w1","method":"tools/call","params":{"name":"heartbeat","arguments":{"agent":"discovery","done":3}}}`)
	var beat struct {
		ID     string `json:"id"`
		Result struct {
			StructuredContent mcp.OpResult `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &beat); err != nil || code != 200 || beat.ID != "w1" || !beat.Result.StructuredContent.Committed {
		t.Fatalf("heartbeat: %d %s", code, b)
	}

	// Not the fast path's: the SDK answers (and the counter stays).
	before = h.FastCalls()
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
	if h.FastCalls() != before {
		t.Errorf("the fast path answered %d of the requests it must leave to the SDK", h.FastCalls()-before)
	}

	// A body over the cap is refused before anything is decoded.
	big := `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"status","arguments":{"slice":"` + strings.Repeat("x", 1<<20) + `"}}}`
	if code, _, b := raw.post(big); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 1 MiB body: %d %s, want 413", code, b)
	}

	// The SDK's own client goes through the fast path too.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "sdk", Version: "1"}, nil).Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before = h.FastCalls()
	if res := call(t, cs, "heartbeat", map[string]any{"agent": "discovery", "done": 4}); res.IsError {
		t.Fatal(text(res))
	}
	if h.FastCalls() != before+1 {
		t.Error("the SDK client's call did not take the fast path")
	}
	cs.Close()

	// A closed session is gone for the fast path as for the SDK.
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Mcp-Session-Id", raw.id)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if code, _, b := raw.post(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"status","arguments":{}}}`); code != http.StatusNotFound {
		t.Errorf("a call on a deleted session: %d %s, want 404", code, b)
	}
}

// TestHTTPSessionTimeout: the idle timeout counts the fast path's calls
// as activity, and closes a session idle longer.
func TestHTTPSessionTimeout(t *testing.T) {
	p := newProject(t)
	p.seed()
	const timeout = 300 * time.Millisecond
	_, url := serveHTTP(t, p.server(false), mcp.HTTPOptions{SessionTimeout: timeout})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status","arguments":{}}}`
	// Calls 100 ms apart for 1 s keep the session open. A call answered
	// more than the timeout after the one before started (a busy machine)
	// proves nothing either way: start again on a new session.
	var raw *rawSession
	for active, deadline := false, time.Now().Add(2*time.Minute); !active; {
		if time.Now().After(deadline) {
			t.Fatal("for 2 minutes, no call came within the timeout of the one before")
		}
		prev := time.Now()
		raw = openRaw(t, url)
		active = true
		for range 10 {
			time.Sleep(100 * time.Millisecond)
			start := time.Now()
			code, _, b := raw.post(body)
			if code == http.StatusOK {
				prev = start
				continue
			}
			if time.Since(prev) < timeout {
				t.Fatalf("a call on an active session: %d %s", code, b)
			}
			t.Logf("a call %v after the one before (the timeout is %v): again", time.Since(prev), timeout)
			active = false
			break
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

// callBody is a tools/call the fast path serves; sdkBody the same call
// with a _meta member the fast path leaves to the SDK.
func callBody(id any, name, args string) string {
	i, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, name, args)
}

func sdkBody(id any, name, args string) string {
	i, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"_meta":{"custodian.dev/test":1},"name":%q,"arguments":%s}}`, i, name, args)
}

// answer is an HTTP answer as a client sees it: status, media type, and
// the body (decoded JSON, or the text).
type answer struct {
	Code int
	Type string
	Body any
}

func answerOf(code int, hdr http.Header, b []byte) answer {
	a := answer{Code: code, Type: mediaTypeOf(hdr.Get("Content-Type")), Body: string(b)}
	var v any
	if a.Type == "application/json" && json.Unmarshal(b, &v) == nil {
		a.Body = v
	}
	return a
}

func mediaTypeOf(v string) string {
	t, _, _ := strings.Cut(v, ";")
	return strings.TrimSpace(t)
}

// blocker is a tool that holds each call until the test releases it (one
// send on release per call) or the call's context is cancelled; outcome
// receives how each call ended.
type blocker struct {
	started chan string
	release chan struct{}
	outcome chan string
}

func newBlocker(s *mcp.Server) *blocker {
	b := &blocker{started: make(chan string, 8), release: make(chan struct{}), outcome: make(chan string, 8)}
	s.AddRawTool("block", func(ctx context.Context, args json.RawMessage) (*sdk.CallToolResult, error) {
		var a struct {
			Tag string `json:"tag"`
		}
		json.Unmarshal(args, &a)
		b.started <- a.Tag
		var out string
		select {
		case <-b.release:
			out = "released " + a.Tag
		case <-ctx.Done():
			out = "cancelled " + a.Tag + ": " + ctx.Err().Error()
		}
		b.outcome <- out
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: out}}}, nil
	})
	return b
}

func (b *blocker) waitStarted(t *testing.T, tag string) {
	t.Helper()
	select {
	case got := <-b.started:
		if got != tag {
			t.Fatalf("call %q started, want %q", got, tag)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("call %q did not start", tag)
	}
}

// free releases one blocked call.
func (b *blocker) free(t *testing.T) {
	t.Helper()
	select {
	case b.release <- struct{}{}:
	case out := <-b.outcome:
		t.Fatalf("no call to release: one ended %q", out)
	case <-time.After(10 * time.Second):
		t.Fatal("no call to release")
	}
}

func (b *blocker) waitOutcome(t *testing.T) string {
	t.Helper()
	select {
	case out := <-b.outcome:
		return out
	case <-time.After(10 * time.Second):
		t.Fatal("a blocked call did not end")
	}
	return ""
}

// sameAsSDK posts a call the fast path would serve and the same call
// through the SDK, and checks that both get the same answer and that the
// fast path did not answer; it returns the answer.
func sameAsSDK(t *testing.T, h *mcp.HTTPHandler, raw *rawSession, what string) answer {
	t.Helper()
	before := h.FastCalls()
	fast := answerOf(raw.post(callBody(50, "status", `{}`)))
	slow := answerOf(raw.post(sdkBody(50, "status", `{}`)))
	if h.FastCalls() != before {
		t.Errorf("%s: the fast path answered a call", what)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s:\nfast path %+v\nSDK       %+v", what, fast, slow)
	}
	return slow
}

// TestHTTPClosedSession: once a session starts closing (its idle timeout,
// the server's shutdown), a tool call on it goes to the SDK: while a call
// still in flight holds the session, the fast path does not serve it, and
// once the session is gone the answer is exactly the SDK's (404, as for a
// session never opened).
func TestHTTPClosedSession(t *testing.T) {
	for _, how := range []string{"idle timeout", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			p := newProject(t)
			p.seed()
			s := p.server(false)
			b := newBlocker(s)
			o := mcp.HTTPOptions{}
			if how == "idle timeout" {
				o.SessionTimeout = 300 * time.Millisecond
			}
			h, url := serveHTTP(t, s, o)
			raw := openRaw(t, url)
			if a := answerOf(raw.post(callBody(1, "status", `{}`))); a.Code != http.StatusOK || h.FastCalls() != 1 {
				t.Fatalf("a call on the open session: %+v, fast calls %d", a, h.FastCalls())
			}

			// A call holds the session open while it closes: the SDK
			// waits for calls in flight before it forgets a session.
			closed := make(chan struct{})
			switch how {
			case "idle timeout":
				// The call's POST goes away (the SDK's call goes on):
				// the session is idle from then on.
				ctx, cancel := context.WithCancel(context.Background())
				posted := make(chan error, 1)
				go func() {
					_, _, _, err := raw.postCtx(ctx, sdkBody(2, "block", `{"tag":"held"}`))
					posted <- err
				}()
				b.waitStarted(t, "held")
				cancel()
				<-posted
				time.Sleep(3 * o.SessionTimeout)
			case "shutdown":
				go func() {
					raw.post(sdkBody(2, "block", `{"tag":"held"}`))
				}()
				b.waitStarted(t, "held")
				go func() { h.CloseSessions(); close(closed) }()
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					if a := answerOf(raw.post(sdkBody(3, "status", `{}`))); a.Code != http.StatusOK || !strings.Contains(fmt.Sprint(a.Body), "revision") {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the SDK does not close the session")
					}
				}
			}
			// The SDK is closing the session: what it answers moves on
			// (an empty answer while it closes the transport, then 404),
			// so the two paths are not compared here; the fast path
			// must not answer.
			before := h.FastCalls()
			a := answerOf(raw.post(callBody(50, "status", `{}`)))
			if h.FastCalls() != before || a.Code == http.StatusOK && strings.Contains(fmt.Sprint(a.Body), "revision") {
				t.Fatalf("a call on a closing session was served: %+v", a)
			}
			t.Logf("a call on the closing session: %+v", a)

			// The SDK cancels the held call as it closes, or it is
			// released here.
			select {
			case <-b.outcome:
			case b.release <- struct{}{}:
				b.waitOutcome(t)
			}
			if how == "shutdown" {
				<-closed
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if code, _, _ := raw.post(sdkBody(4, "status", `{}`)); code == http.StatusNotFound {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the SDK does not forget the session")
				}
			}
			gone := sameAsSDK(t, h, raw, "once the session is gone")
			unknown := answerOf((&rawSession{t: t, url: url, id: "never-opened", version: raw.version}).post(callBody(50, "status", `{}`)))
			if !reflect.DeepEqual(gone, unknown) {
				t.Errorf("a closed session: %+v; a session never opened: %+v", gone, unknown)
			}
		})
	}
}

// TestHTTPDuplicateID: a call whose id is in flight on the session is
// refused as the SDK refuses it (400, invalid request, "duplicate
// in-flight request ID"), whichever path either call takes; the id is
// free again once its call is answered.
func TestHTTPDuplicateID(t *testing.T) {
	p := newProject(t)
	p.seed()
	s := p.server(false)
	b := newBlocker(s)
	_, url := serveHTTP(t, s, mcp.HTTPOptions{})
	raw := openRaw(t, url)

	// The SDK alone (its own handler on the same server) is the oracle.
	ref := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.SDK() }, &sdk.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ref.Close)
	oracle := openRaw(t, ref.URL)

	hold := func(r *rawSession, body, tag string) chan answer {
		done := make(chan answer, 1)
		go func() { done <- answerOf(r.post(body)) }()
		b.waitStarted(t, tag)
		return done
	}
	for _, id := range []any{7, "x"} {
		held := hold(oracle, callBody(id, "block", `{"tag":"oracle"}`), "oracle")
		want := answerOf(oracle.post(callBody(id, "status", `{}`)))
		b.free(t)
		<-held
		b.waitOutcome(t)
		if want.Code != http.StatusBadRequest {
			t.Fatalf("the SDK's answer to a duplicate id: %+v", want)
		}
		for _, tc := range []struct {
			what        string
			first, then func(id any, name, args string) string
		}{
			{"fast path, then fast path", callBody, callBody},
			{"fast path, then the SDK's", callBody, sdkBody},
			{"the SDK's, then fast path", sdkBody, callBody},
			{"the SDK's, then the SDK's", sdkBody, sdkBody},
		} {
			held := hold(raw, tc.first(id, "block", `{"tag":"first"}`), "first")
			got := answerOf(raw.post(tc.then(id, "status", `{}`)))
			if !reflect.DeepEqual(got, want) {
				t.Errorf("id %v, %s:\ngot  %+v\nwant %+v", id, tc.what, got, want)
			}
			b.free(t)
			if a := <-held; a.Code != http.StatusOK || !strings.Contains(fmt.Sprint(a.Body), "released first") {
				t.Errorf("id %v, %s: the first call: %+v", id, tc.what, a)
			}
			b.waitOutcome(t)
			if a := answerOf(raw.post(tc.then(id, "status", `{}`))); a.Code != http.StatusOK {
				t.Errorf("id %v, %s: the id once free: %+v", id, tc.what, a)
			}
		}
	}
}

// TestHTTPCancel: notifications/cancelled cancels a fast-path call's
// context as the SDK cancels its own (the call still answers, with what
// its handler returns); a call whose POST goes away is not cancelled, as
// the SDK does not cancel it either.
func TestHTTPCancel(t *testing.T) {
	p := newProject(t)
	p.seed()
	s := p.server(false)
	b := newBlocker(s)
	h, url := serveHTTP(t, s, mcp.HTTPOptions{})
	raw := openRaw(t, url)

	answers := map[string]answer{}
	// Each path has an id of its own: a session's ids are not reused (the
	// SDK may see the fast path's cancellation after the fast path did).
	for _, path := range []struct {
		name string
		body func(id any, name, args string) string
		id   int
	}{{"fast path", callBody, 5}, {"SDK", sdkBody, 7}} {
		before := h.FastCalls()
		done := make(chan answer, 1)
		go func() { done <- answerOf(raw.post(path.body(path.id, "block", `{"tag":"c"}`))) }()
		b.waitStarted(t, "c")
		// A cancellation of another id (a string "5" is not 5) changes nothing.
		for _, other := range []string{fmt.Sprint(path.id + 1), fmt.Sprintf(`"%d"`, path.id)} {
			if code, _, body := raw.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + other + `}}`); code != http.StatusAccepted {
				t.Fatalf("%s: cancelling %s: %d %s", path.name, other, code, body)
			}
		}
		select {
		case out := <-b.outcome:
			t.Fatalf("%s: a cancellation of another id ended the call: %s", path.name, out)
		case <-time.After(100 * time.Millisecond):
		}
		if code, _, body := raw.post(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"the user stopped it"}}`, path.id)); code != http.StatusAccepted {
			t.Fatalf("%s: notifications/cancelled: %d %s", path.name, code, body)
		}
		if out := b.waitOutcome(t); out != "cancelled c: context canceled" {
			t.Errorf("%s: the call ended %q", path.name, out)
		}
		a := <-done
		if m, ok := a.Body.(map[string]any); ok {
			delete(m, "id") // the paths' ids differ
		}
		answers[path.name] = a
		if fast := h.FastCalls() != before; fast != (path.name == "fast path") {
			t.Errorf("%s: answered by the fast path: %v", path.name, fast)
		}
	}
	if !reflect.DeepEqual(answers["fast path"], answers["SDK"]) {
		t.Errorf("a cancelled call:\nfast path %+v\nSDK       %+v", answers["fast path"], answers["SDK"])
	}

	// The POST goes away: the call goes on, and its id stays in flight
	// until it ends.
	ctx, cancel := context.WithCancel(context.Background())
	posted := make(chan error, 1)
	go func() {
		_, _, _, err := raw.postCtx(ctx, callBody(8, "block", `{"tag":"gone"}`))
		posted <- err
	}()
	b.waitStarted(t, "gone")
	cancel()
	<-posted
	if a := answerOf(raw.post(callBody(8, "status", `{}`))); a.Code != http.StatusBadRequest {
		t.Errorf("the id of a call whose POST went away: %+v, want a duplicate", a)
	}
	b.free(t)
	if out := b.waitOutcome(t); out != "released gone" {
		t.Errorf("a call whose POST went away ended %q", out)
	}
}

// TestHTTPDefaultBodyLimit: without MaxBodyBytes a body over the SDK's
// default cap is refused on the fast path as by the SDK (413).
func TestHTTPDefaultBodyLimit(t *testing.T) {
	p := newProject(t)
	p.seed()
	_, url := serveHTTP(t, p.server(false), mcp.HTTPOptions{})
	raw := openRaw(t, url)
	args := `{"slice":"` + strings.Repeat("x", sdk.DefaultMaxRequestBodyBytes) + `"}`
	fast := answerOf(raw.post(callBody(1, "status", args)))
	slow := answerOf(raw.post(sdkBody(1, "status", args)))
	if fast.Code != http.StatusRequestEntityTooLarge || !reflect.DeepEqual(fast, slow) {
		t.Errorf("a body over 4 MiB:\nfast path %+v\nSDK       %+v", fast, slow)
	}
}
