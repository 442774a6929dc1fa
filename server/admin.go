package server

import (
	"net"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/asdd"
)

// AdminOps are the ASDD operations only a human with the admin token may
// run over TCP: the ways out of a halt (resolve, approve) and the review of
// what a rebuild guessed (clear-review). Everything else the dashboard
// does is a read.
var AdminOps = []string{"resolve", "approve", "clear-review"}

// RuleKeys are the documents whose every change by an agent is a daemon
// operation (POST /v1/asdd/{op}), checked by the rules where the document
// is kept. A raw write of one of them (PUT /v1/doc: the CLI's rollback,
// init, rebuild and monitor, the runner) would skip the rules, so over TCP
// it is a human's decision too and needs the admin token.
var RuleKeys = []string{asdd.Key}

// needsAdmin reports whether r must carry the admin token: Options.AdminToken
// is set, r came over TCP, and it is POST /v1/asdd/{resolve|approve|
// clear-review} or a PUT /v1/doc of one of the RuleKeys. The unix socket
// is exempt: it is the project owner's (mode 0600), who can take the state
// lock and change the files directly anyway.
func (s *Server) needsAdmin(r *http.Request) bool {
	if s.o.AdminToken == "" {
		return false
	}
	switch r.Method {
	case http.MethodPost:
		op, ok := strings.CutPrefix(r.URL.Path, "/v1/asdd/")
		if !ok || !isAdminOp(op) {
			return false
		}
	case http.MethodPut:
		if r.URL.Path != "/v1/doc" || !slices.Contains(RuleKeys, r.URL.Query().Get("key")) {
			return false
		}
	default:
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
	what := strings.TrimPrefix(r.URL.Path, "/v1/asdd/")
	if r.Method == http.MethodPut {
		what = "writing " + r.URL.Query().Get("key") + " directly (its agents change it through /v1/asdd/{op})"
	}
	writeErrorStatus(w, http.StatusUnauthorized, "UNAUTHORIZED", what+" is a human decision: it needs the admin token (custodian serve --admin-token, or the one it printed at start) as the bearer token; the CLI sends $CUSTODIAN_ADMIN_TOKEN")
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
