package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/board"
)

// `custodian serve` mounts the web dashboard (package board) at /.
func init() {
	UIHandler = func(app *App) (http.Handler, error) {
		st, err := app.Store()
		if err != nil {
			return nil, err
		}
		root, err := app.Root()
		if err != nil {
			return nil, err
		}
		return board.Handler(board.Options{Store: st, Root: root, Now: app.Now,
			Config: func() (*asdd.Config, error) { return asddConfig(app) }}), nil
	}
}

// serveAdminToken is the admin token of `custodian serve`: the one given,
// or a fresh random one (generated reports which).
func serveAdminToken(given string) (token string, generated bool, err error) {
	if given != "" {
		return given, false, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("generate an admin token: %w", err)
	}
	return hex.EncodeToString(b), true, nil
}

// announceDashboard prints where the dashboard is, and the admin token
// when the daemon made it up (the human actions need it over TCP).
func announceDashboard(w io.Writer, ls []net.Listener, token string, generated, ui bool) {
	for _, l := range ls {
		if l.Addr().Network() != "tcp" {
			continue
		}
		url := "http://" + l.Addr().String() + "/"
		switch {
		case ui && generated:
			fmt.Fprintf(w, "dashboard: %s#admin=%s  (admin token %s: resolve, approve and review need it)\n", url, token, token)
		case ui:
			fmt.Fprintf(w, "dashboard: %s  (resolve, approve and review need the --admin-token)\n", url)
		case generated:
			fmt.Fprintf(w, "admin token %s: resolve, approve and review over %s need it\n", token, url)
		}
	}
}
