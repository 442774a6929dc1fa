package server

import (
	"net"
	"net/http"
	"path"
	"strings"
)

// needsAdmin reports whether r must carry the admin token: Options.AdminToken
// is set and r is a raw write (PUT /v1/doc) of any document or a rollback.
// A raw write skips the operations' rules (it is how a human rolls back,
// rebuilds or repairs), so it is a human's decision. Human decisions among
// the operations (init, resolve, approve, clear-review, correct-assumption,
// a forced unlock) are refused by the application layer to a request marked
// as an agent's (agentRequest). The unix socket is no exception: the
// agent's sandbox lets it reach the socket, so the socket gives agent
// rights, and the human's CLI attaches the admin credential it reads from
// a file the sandbox hides (package admincred).
func (s *Server) needsAdmin(r *http.Request) bool {
	raw := r.Method == http.MethodPut && r.URL.Path == "/v1/doc" || r.Method == http.MethodPost && r.URL.Path == "/v1/rollback"
	return s.o.AdminToken != "" && raw
}

// agentRequest reports whether r is an agent's: an admin token is set and
// r does not carry it, over TCP or the unix socket alike.
func (s *Server) agentRequest(r *http.Request) bool {
	return s.o.AdminToken != "" && !s.adminOK(r)
}

// needsToken reports whether r must carry a bearer token: over TCP when a
// token is set, or when TCPNeedsToken and r would change something (the
// reads of the custodian's documents stay open on loopback, as their files
// are to local users), except for the health check and the dashboard's
// page. The unix socket never needs the agents' token (mode 0600: the
// owner's processes and their agents); human decisions on it still need
// the admin token (agentRequest).
func (s *Server) needsToken(r *http.Request) bool {
	if r.URL.Path == "/v1/health" || s.uiPage(r) || overUnixSocket(r) {
		return false
	}
	if s.o.Token != "" {
		return true
	}
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	return s.o.TCPNeedsToken && !read
}

func overUnixSocket(r *http.Request) bool {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && a.Network() == "unix"
}

// adminOK reports whether r carries the admin token as its bearer token.
func (s *Server) adminOK(r *http.Request) bool {
	return s.o.AdminToken != "" && tokenOK(r, s.o.AdminToken)
}

// refuseAdmin answers 401 to an admin operation without the admin token.
func refuseAdmin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="custodian-admin"`)
	what := strings.TrimPrefix(r.URL.Path, "/v1/asdd/")
	if r.Method == http.MethodPut {
		what = "writing " + r.URL.Query().Get("key") + " directly (its agents change it through /v1/asdd/{op})"
	}
	writeErrorStatus(w, http.StatusUnauthorized, "UNAUTHORIZED", what+" is a human decision: it needs the admin token (custodian serve --admin-token, or the one it printed at start) as the bearer token; the CLI sends it when it can read the project's admin credential file, or $CUSTODIAN_ADMIN_TOKEN")
}

// uiPage reports whether r asks for the dashboard's page or its static
// assets (GET / and /assets/…): they hold no state, and the page asks for
// the token before it reads anything, so they load without one. Everything
// the page reads (/board.json, /v1/…) still needs the token.
func (s *Server) uiPage(r *http.Request) bool {
	if s.o.UI == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
		return false
	}
	p := r.URL.Path
	if p != "/" && path.Clean(p) != p {
		return false // "/assets/../board.json" is not an asset
	}
	return p == "/" || strings.HasPrefix(p, "/assets/")
}
