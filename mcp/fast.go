package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
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

// httpSession is what HTTPHandler knows of a session the SDK opened.
type httpSession struct {
	admin bool
	srv   *Server
	ss    *sdk.ServerSession // nil when it could not be found

	// The idle timeout, kept here rather than by the SDK since the SDK
	// does not see the fast path's calls: the timer runs while no POST is
	// in flight.
	mu       sync.Mutex
	inflight int
	timeout  time.Duration
	timer    *time.Timer
}

func (se *httpSession) startPOST() {
	if se.timeout <= 0 {
		return
	}
	se.mu.Lock()
	se.inflight++
	if se.timer != nil {
		se.timer.Stop()
	}
	se.mu.Unlock()
}

func (se *httpSession) endPOST() {
	if se.timeout <= 0 {
		return
	}
	se.mu.Lock()
	se.inflight--
	if se.inflight == 0 && se.timer != nil {
		se.timer.Reset(se.timeout)
	}
	se.mu.Unlock()
}

func (se *httpSession) stopTimer() {
	se.mu.Lock()
	if se.timer != nil {
		se.timer.Stop()
	}
	se.mu.Unlock()
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
		se.timer = time.AfterFunc(se.timeout, func() { se.ss.Close() })
		se.mu.Unlock()
	}
	go func() {
		se.ss.Wait()
		se.stopTimer()
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

// fast answers r when it is a tools/call the fast path serves, and
// reports whether it did; when it did not, r is as it came (its body
// read again from memory).
func (h *HTTPHandler) fast(w http.ResponseWriter, r *http.Request, se *httpSession) bool {
	if se.ss == nil || r.Header.Get("Last-Event-ID") != "" ||
		!strings.EqualFold(mediaType(r.Header.Get("Content-Type")), "application/json") ||
		!acceptsBoth(r.Header.Values("Accept")) ||
		!se.srv.legacy(r.Header.Get("Mcp-Protocol-Version")) ||
		rebinding(r) || se.ss.InitializeParams() == nil {
		return false
	}
	rd := r.Body
	if h.o.MaxBodyBytes > 0 {
		rd = http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes)
	}
	body, err := io.ReadAll(rd)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "failed to read body", http.StatusBadRequest)
		}
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !bytes.Contains(body, []byte(`"tools/call"`)) {
		return false
	}
	var req fastRequest
	if jsonv2.Unmarshal(body, &req, strict) != nil || req.JSONRPC != "2.0" || req.Method != "tools/call" || !plainID(req.ID) {
		return false
	}
	fn := se.srv.tools[req.Params.Name]
	if fn == nil {
		return false // the SDK's unknown-tool error
	}
	h.fastCalls.Add(1)
	args := json.RawMessage(req.Params.Arguments)
	res := se.srv.argsTooBig(req.Params.Name, args)
	if res == nil {
		res, err = fn(r.Context(), args)
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
