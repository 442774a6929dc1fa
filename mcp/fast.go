package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/reason"
)

// The streamable HTTP fast path: a tools/call POST on an established
// session is answered here, by the session's server's own tool handler,
// instead of going through the SDK's transport. The SDK decodes each
// JSON-RPC message several times with a fresh decoder and a 32 KB buffer
// (readBatch, extractRequestMeta, the params, the result) and hands every
// call through two goroutines and channels: that was about two thirds of
// a call's CPU on the daemon and nine tenths of its allocated bytes. The
// fast path decodes the body once, calls the same handler the SDK would,
// and writes the same JSON-RPC response (application/json, as the handler
// is configured with JSONResponse). Anything else — another method, a
// batch, params with members this path does not know (in _meta, any but
// a progress token), a protocol version from 2026-07-28 on, a session that is not
// initialized, a Host refused by DNS-rebinding protection — goes to the
// SDK unchanged, which answers it or refuses it as it always has.
//
// Where the two paths meet, the fast path does what the SDK does:
//   - A closed session: the handler marks a session closed before it
//     closes it (idle timeout, DELETE, CloseSessions at shutdown), and
//     from then on its requests go to the SDK, which answers a closing or
//     unknown session as it does (404 once it has forgotten it). A close
//     the handler did not make would be seen when ServerSession.Wait
//     returns; the SDK is given no timeout or keepalive that could make
//     one.
//   - Request ids: a call whose id is in flight on the session (on either
//     path) is refused as the SDK refuses it (400, invalid request,
//     "duplicate in-flight request ID"); the handler notes the ids of the
//     calls it leaves to the SDK while their POST lasts (a call whose
//     POST went away holds its id in the SDK until it ends, but no longer
//     here: a fast-path call may then reuse it).
//   - Cancellation: a call runs on a context the HTTP request's end does
//     not cancel (the SDK does not either, before protocol 2026-07-28);
//     a notifications/cancelled naming a fast-path call's id cancels it,
//     and goes on to the SDK, which answers it (202) and cancels its own
//     calls. The cancelled call still answers with what its tool returns,
//     as the SDK's does.

// httpSession is what HTTPHandler knows of a session the SDK opened.
type httpSession struct {
	admin bool
	srv   *Server
	ss    *sdk.ServerSession // nil when it could not be found

	mu sync.Mutex
	// closed: the session is closed or closing (idle timeout, DELETE,
	// shutdown, or the SDK ended it): its requests go to the SDK, which
	// answers them as it answers a closing or unknown session.
	closed bool
	// calls are the request ids in flight on the session, by either path,
	// with the cancel function of a fast-path call (nil for the SDK's).
	calls map[callID]context.CancelFunc
	// The idle timeout, kept here rather than by the SDK since the SDK
	// does not see the fast path's calls: the timer runs while no POST is
	// in flight.
	inflight int
	timeout  time.Duration
	timer    *time.Timer
}

// startPOST counts a POST in flight (stopping the idle timer), unless the
// session is closed: then it reports false.
func (se *httpSession) startPOST() bool {
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.closed {
		return false
	}
	se.inflight++
	if se.timer != nil {
		se.timer.Stop()
	}
	return true
}

func (se *httpSession) endPOST() {
	se.mu.Lock()
	se.inflight--
	if se.inflight == 0 && se.timer != nil && !se.closed {
		se.timer.Reset(se.timeout)
	}
	se.mu.Unlock()
}

// markClosed sends the session's requests to the SDK from now on, and
// reports whether it was open.
func (se *httpSession) markClosed() bool {
	se.mu.Lock()
	defer se.mu.Unlock()
	if se.closed {
		return false
	}
	se.closed = true
	if se.timer != nil {
		se.timer.Stop()
	}
	return true
}

// idle closes the session when its idle timeout fires with no POST in
// flight (one that started since is the activity that resets it).
func (se *httpSession) idle() {
	se.mu.Lock()
	if se.closed || se.inflight > 0 {
		se.mu.Unlock()
		return
	}
	se.closed = true
	se.mu.Unlock()
	se.ss.Close()
}

// claim records ids as in flight, unless one already is: then it returns
// that one and records none (as the SDK refuses a duplicate in-flight id).
func (se *httpSession) claim(ids []callID, cancel context.CancelFunc) (dup callID, ok bool) {
	se.mu.Lock()
	defer se.mu.Unlock()
	for _, id := range ids {
		if _, busy := se.calls[id]; busy {
			return id, false
		}
	}
	if se.calls == nil {
		se.calls = map[callID]context.CancelFunc{}
	}
	for _, id := range ids {
		se.calls[id] = cancel
	}
	return callID{}, true
}

func (se *httpSession) release(ids ...callID) {
	se.mu.Lock()
	for _, id := range ids {
		delete(se.calls, id)
	}
	se.mu.Unlock()
}

// cancel cancels the fast-path call in flight with id, if there is one
// (the SDK cancels its own).
func (se *httpSession) cancel(id callID) {
	se.mu.Lock()
	cancel := se.calls[id]
	se.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// register records the session id the SDK just opened for a caller,
// finds its ServerSession, and forgets it when it ends.
func (h *HTTPHandler) register(id string, admin bool) {
	srv := h.agent
	if admin && h.admin != nil {
		srv = h.admin
	}
	se := &httpSession{admin: admin, srv: srv, timeout: h.o.SessionTimeout}
	for ss := range srv.sdk.Sessions() {
		if ss.ID() == id {
			se.ss = ss
			break
		}
	}
	h.mu.Lock()
	h.sessions[id] = se
	h.mu.Unlock()
	if se.ss == nil {
		return
	}
	if se.timeout > 0 {
		se.mu.Lock()
		se.timer = time.AfterFunc(se.timeout, se.idle)
		se.mu.Unlock()
	}
	go func() {
		// Closes this handler did not make (none today: the SDK is
		// given no timeout or keepalive of its own) end here.
		se.ss.Wait()
		se.markClosed()
		h.mu.Lock()
		if h.sessions[id] == se {
			delete(h.sessions, id)
		}
		h.mu.Unlock()
	}()
}

// legacy reports whether a Mcp-Protocol-Version header names a version
// this server speaks that the fast path serves ("" included: the SDK
// takes it for 2025-03-26).
func (s *Server) legacy(version string) bool {
	if version == "" {
		return true
	}
	if version >= "2026-07-28" {
		return false
	}
	if len(s.o.ProtocolVersions) > 0 {
		return slices.Contains(s.o.ProtocolVersions, version)
	}
	return slices.Contains(sdkVersions, version)
}

var sdkVersions = sdk.SupportedProtocolVersions()

// fastRequest is the one JSON-RPC request the fast path serves.
type fastRequest struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  string         `json:"method"`
	Params  struct {
		// Meta may carry a progress token (clients that show progress
		// send one with every call): the tools send no progress, so it
		// is answered as the SDK would. Any other member of _meta (a
		// per-request protocol version, say) is the SDK's.
		Meta struct {
			ProgressToken jsontext.Value `json:"progressToken,omitzero"`
		} `json:"_meta,omitzero"`
		Name      string         `json:"name"`
		Arguments jsontext.Value `json:"arguments,omitzero"`
	} `json:"params"`
}

var strict = jsonv2.RejectUnknownMembers(true)

// message is what the handler reads of a message it leaves to the SDK:
// enough to see the calls in flight and a cancellation's request id.
type message struct {
	ID     jsontext.Value `json:"id,omitzero"`
	Method string         `json:"method"`
	Params struct {
		RequestID jsontext.Value `json:"requestId,omitzero"`
	} `json:"params,omitzero"`
}

// callID is a JSON-RPC request id as the SDK compares them: a string, or
// a number taken as an integer.
type callID struct {
	str   string
	num   int64
	isStr bool
}

// makeID reads a request id; ok is false for none (null, absent, or not
// an id).
func makeID(v jsontext.Value) (id callID, ok bool) {
	switch v.Kind() {
	case '"':
		if jsonv2.Unmarshal(v, &id.str) != nil {
			return id, false
		}
		id.isStr = true
		return id, true
	case '0':
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return id, false
		}
		id.num = int64(f)
		return id, true
	}
	return id, false
}

func (id callID) raw() any {
	if id.isStr {
		return id.str
	}
	return id.num
}

// post serves a POST on an established session: it answers a tools/call
// it serves (reporting true), and otherwise leaves r, its body read again
// from memory, to the SDK, having cancelled the fast-path call a
// notifications/cancelled names; release ends the SDK's calls' stay in
// the session's in-flight ids once the SDK has answered.
func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request, se *httpSession) (done bool, release func()) {
	if se.ss == nil || r.Header.Get("Last-Event-ID") != "" ||
		!strings.EqualFold(mediaType(r.Header.Get("Content-Type")), "application/json") ||
		!acceptsBoth(r.Header.Values("Accept")) ||
		!se.srv.legacy(r.Header.Get("Mcp-Protocol-Version")) ||
		rebinding(r) || se.ss.InitializeParams() == nil {
		return false, nil
	}
	rd := r.Body
	if limit := h.maxBody(); limit > 0 {
		rd = http.MaxBytesReader(w, r.Body, limit)
	}
	body, err := io.ReadAll(rd)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "failed to read body", http.StatusBadRequest)
		}
		return true, nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"tools/call"`)) && h.fast(w, r, se, body) {
		return true, nil
	}
	return h.toSDK(w, se, body)
}

// maxBody is the SDK's cap on a body: MaxBodyBytes, its default when 0,
// none when negative.
func (h *HTTPHandler) maxBody() int64 {
	if h.o.MaxBodyBytes == 0 {
		return sdk.DefaultMaxRequestBodyBytes
	}
	return h.o.MaxBodyBytes
}

// toSDK notes the calls of a body the SDK is about to handle, refusing a
// duplicate of an id in flight on the fast path as the SDK refuses its
// own, and applies its cancellations to the fast path's calls.
func (h *HTTPHandler) toSDK(w http.ResponseWriter, se *httpSession, body []byte) (done bool, release func()) {
	var msgs []message
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) > 0 && b[0] == '[' {
		if jsonv2.Unmarshal(body, &msgs) != nil {
			return false, nil
		}
	} else {
		var m message
		if jsonv2.Unmarshal(body, &m) != nil {
			return false, nil
		}
		msgs = []message{m}
	}
	var ids []callID
	for _, m := range msgs {
		if m.Method == "" {
			continue // a response to the server's request
		}
		if m.Method == "notifications/cancelled" {
			if id, ok := makeID(m.Params.RequestID); ok {
				se.cancel(id)
			}
			continue
		}
		if id, ok := makeID(m.ID); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return false, nil
	}
	if dup, ok := se.claim(ids, nil); !ok {
		duplicate(w, dup)
		return true, nil
	}
	return false, func() { se.release(ids...) }
}

// duplicate answers a call whose id is in flight on the session as the
// SDK does.
func duplicate(w http.ResponseWriter, id callID) {
	out := []byte(`{"jsonrpc":"2.0","id":`)
	if id.isStr {
		out, _ = jsontext.AppendQuote(out, id.str)
	} else {
		out = strconv.AppendInt(out, id.num, 10)
	}
	msg, _ := jsontext.AppendQuote(nil, fmt.Sprintf("duplicate in-flight request ID %v", id.raw()))
	out = append(out, `,"error":{"code":-32600,"message":`...)
	out = append(out, msg...)
	out = append(out, "}}"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(out)
}

// fast answers body when it is a tools/call the fast path serves, and
// reports whether it did. The call runs as the SDK runs it: on a context
// that outlives the HTTP request (protocol versions before 2026-07-28 do
// not cancel a call when its POST goes away) and that a
// notifications/cancelled naming its id cancels; its id is in flight on
// the session meanwhile.
func (h *HTTPHandler) fast(w http.ResponseWriter, r *http.Request, se *httpSession, body []byte) bool {
	var req fastRequest
	if jsonv2.Unmarshal(body, &req, strict) != nil || req.JSONRPC != "2.0" || req.Method != "tools/call" || !plainID(req.ID) {
		return false
	}
	fn := se.srv.tools[req.Params.Name]
	if fn == nil {
		return false // the SDK's unknown-tool error
	}
	id, ok := makeID(req.ID)
	if !ok {
		return false
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	if dup, ok := se.claim([]callID{id}, cancel); !ok {
		duplicate(w, dup)
		return true
	}
	// Released once the answer is written, as the SDK releases an id.
	defer se.release(id)
	h.fastCalls.Add(1)
	args := json.RawMessage(req.Params.Arguments)
	res := se.srv.argsTooBig(req.Params.Name, args)
	var err error
	if res == nil {
		res, err = fn(ctx, args)
	}
	out := make([]byte, 0, 512)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, req.ID...)
	if err != nil {
		// As the SDK answers a handler's error: an internal error.
		msg, _ := jsontext.AppendQuote(nil, err.Error())
		out = append(out, `,"error":{"code":-32603,"message":`...)
		out = append(out, msg...)
		out = append(out, "}}"...)
	} else {
		out = append(out, `,"result":`...)
		if out, err = appendResult(out, res); err != nil {
			http.Error(w, "encoding the result: "+err.Error(), http.StatusInternalServerError)
			return true
		}
		out = append(out, '}')
	}
	hd := w.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Content-Type", "application/json")
	w.Write(out)
	return true
}

// appendResult appends a tool result as the SDK encodes it; the shape the
// tools return (text contents, structured content as raw JSON) is written
// directly, any other with the SDK's own encoding.
func appendResult(dst []byte, res *sdk.CallToolResult) ([]byte, error) {
	sc, raw := res.StructuredContent.(json.RawMessage)
	plain := res.Meta == nil && (res.StructuredContent == nil || raw)
	for _, c := range res.Content {
		t, ok := c.(*sdk.TextContent)
		plain = plain && ok && t.Meta == nil && t.Annotations == nil
	}
	if !plain {
		b, err := json.Marshal(res)
		return append(dst, b...), err
	}
	dst = append(dst, `{"content":[`...)
	for i, c := range res.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"text","text":`...)
		var err error
		if dst, err = jsontext.AppendQuote(dst, c.(*sdk.TextContent).Text); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if len(sc) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, sc...)
	}
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
}

// plainID: a JSON-RPC id the fast path echoes as it came, a string or an
// integer.
func plainID(v jsontext.Value) bool {
	switch k := v.Kind(); {
	case k == '"':
		return true
	case k == '0':
		return !bytes.ContainsAny(v, ".eE")
	}
	return false
}

func mediaType(v string) string {
	t, _, _ := strings.Cut(v, ";")
	return strings.TrimSpace(t)
}

// acceptsBoth: the Accept header takes both JSON and an event stream, as
// the SDK requires of a POST.
func acceptsBoth(values []string) (ok bool) {
	var j, s bool
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			switch strings.ToLower(mediaType(part)) {
			case "application/json", "application/*":
				j = true
			case "text/event-stream", "text/*":
				s = true
			case "*/*":
				j, s = true, true
			}
		}
	}
	return j && s
}

// rebinding reports a request the SDK's DNS-rebinding protection refuses:
// it reached a loopback address with a Host that is not one.
func rebinding(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la != nil && loopback(la.String()) && !loopback(r.Host)
}

func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// argsTooBig is the tool error for arguments over the cap, nil if they
// are within it.
func (s *Server) argsTooBig(name string, args json.RawMessage) *sdk.CallToolResult {
	if len(args) <= s.o.MaxArgBytes {
		return nil
	}
	return toolError(reason.New(reason.InvalidInput, "the arguments of %s are %d bytes; the limit is %d", name, len(args), s.o.MaxArgBytes))
}
