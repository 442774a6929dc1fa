package server

import (
	"mime"
	"net"
	"net/http"
	"strings"
)

// Cross-site request forgery and DNS rebinding on loopback.
//
// A web page open in the user's browser can send requests to
// http://127.0.0.1:7420/: a form or a "simple" fetch POSTs with a
// text/plain, form-urlencoded or multipart body and no preflight. Every
// request that changes something must therefore declare a JSON body
// (application/json, or application/json-patch+json), which a browser
// sends cross-site only after a CORS preflight that this server never
// grants. And a page whose host name an attacker points at 127.0.0.1 (DNS
// rebinding) is same-origin with the daemon in the browser's eyes: on TCP
// without a token, the Host header must name a loopback host.

// crossSiteGuard refuses a request a browser could have sent on behalf of
// another site; it reports whether it wrote the refusal.
func (s *Server) crossSiteGuard(w http.ResponseWriter, r *http.Request) bool {
	if changesState(r.Method) && !jsonContentType(r.Header.Get("Content-Type")) && !mcpSessionEnd(r) {
		writeErrorStatus(w, http.StatusUnsupportedMediaType, "INVALID_INPUT",
			r.Method+" "+r.URL.Path+" needs Content-Type: application/json (got "+quoteOrNone(r.Header.Get("Content-Type"))+")")
		return true
	}
	if s.o.Token == "" && overTCP(r) && !loopbackHost(r.Host, r) {
		writeErrorStatus(w, http.StatusForbidden, "INVALID_INPUT",
			"Host "+quoteOrNone(r.Host)+" is not a loopback name: without a token the daemon answers only requests addressed to localhost or a loopback address")
		return true
	}
	return false
}

// changesState reports whether a method may change the state.
// mcpSessionEnd reports whether r ends an MCP session (DELETE /mcp, with
// no body and so no Content-Type: no form can send it).
func mcpSessionEnd(r *http.Request) bool {
	return r.Method == http.MethodDelete && r.URL.Path == "/mcp"
}

func changesState(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// jsonContentType accepts application/json and application/json-patch+json,
// with parameters (charset) or not.
func jsonContentType(ct string) bool {
	switch ct {
	case "":
		return false
	case "application/json":
		return true // what every client sends: no parse (and no map) per request
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || mt == "application/json-patch+json"
}

// overTCP reports whether the request came in on a TCP listener (not the
// unix socket, whose file mode already restricts it to the user).
func overTCP(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && a.Network() == "tcp"
}

// loopbackHost reports whether a Host header names this machine's loopback:
// localhost (or a name under .localhost), a loopback address, or the very
// address the connection was accepted on (the --addr host, which without a
// token is loopback anyway).
func loopbackHost(host string, r *http.Request) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	if h == "" {
		return true // HTTP/1.0 without Host: not a browser
	}
	lh := strings.ToLower(h)
	if lh == "localhost" || strings.HasSuffix(lh, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok && a.IP.Equal(ip) {
		return true
	}
	return false
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return `"` + s + `"`
}
