package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/custodian-dev/custodian/board"
)

// dashboard is the web dashboard's handler (package board), or nil when
// Config.Board is off.
func (d *Daemon) dashboard() http.Handler {
	if !d.cfg.Board {
		return nil
	}
	return board.Handler(board.Options{Store: d.st, Root: d.cfg.Root, Now: d.cfg.Now, Config: d.cfg.ASDDConfig})
}

// adminToken is the daemon's admin token: the one configured, or a fresh
// random one (generated reports which).
func adminToken(given string) (token string, generated bool, err error) {
	if given != "" {
		return given, false, nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("generate an admin token: %w", err)
	}
	return hex.EncodeToString(b), true, nil
}

// AdminToken returns the admin token in force (Config.AdminToken, or the
// one the daemon generated).
func (d *Daemon) AdminToken() string { return d.admin }

// announceDashboard prints on Stderr where the dashboard is, and the admin
// token when the daemon made it up (the human actions need it over TCP).
func (d *Daemon) announceDashboard() {
	a := d.Addr()
	if a == "" {
		return
	}
	w, url, token := d.cfg.Stderr, "http://"+a+"/", d.admin
	ui, generated := d.cfg.Board, d.generated
	switch {
	case ui && generated:
		fmt.Fprintf(w, "dashboard: %s#admin=%s  (admin token %s: resolve, approve and review need it)\n", url, token, token)
	case ui:
		fmt.Fprintf(w, "dashboard: %s  (resolve, approve and review need the --admin-token)\n", url)
	case generated:
		fmt.Fprintf(w, "admin token %s: resolve, approve and review over %s need it\n", token, url)
	}
}
