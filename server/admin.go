package server

import (
	"net"
	"net/http"
	"path"
	"strings"
)

// AdminOps are the ASDD operations only a human with the admin token may
// run over TCP: the ways out of a halt (resolve, approve) and the review of
// what a rebuild guessed (clear-review). Everything else the dashboard
// does is a read.
var AdminOps = []string{"resolve", "approve", "clear-review"}

// needsAdmin reports whether r is an admin operation that must carry the
// admin token: Options.AdminToken is set, the request is POST
// /v1/asdd/{resolve|approve|clear-review}, and it came over TCP. The unix
// socket is exempt: it is the project owner's (mode 0600), who can take
// the state lock and change the files directly anyway.
func (s *Server) needsAdmin(r *http.Request) bool {
	if s.o.AdminToken == "" || r.Method != http.MethodPost {
		return false
	}
	op, ok := strings.CutPrefix(r.URL.Path, "/v1/asdd/")
	if !ok || !isAdminOp(op) {
		return false
	}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a.Network() == "unix" {
		return false
	}
	return true
}

func isAdminOp(op string) bool {
	for _, a := range AdminOps {
		if a == op {
			return true
		}
	}
	return false
}

// adminOK reports whether r carries the admin token as its bearer token.
func (s *Server) adminOK(r *http.Request) bool {
	return s.o.AdminToken != "" && tokenOK(r, s.o.AdminToken)
}

// refuseAdmin answers 401 to an admin operation without the admin token.
func refuseAdmin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="custodian-admin"`)
	op := strings.TrimPrefix(r.URL.Path, "/v1/asdd/")
	writeErrorStatus(w, http.StatusUnauthorized, "UNAUTHORIZED", op+" is a human decision: it needs the admin token (custodian serve --admin-token, or the one it printed at start) as the bearer token")
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
