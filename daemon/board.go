package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/custodian-dev/custodian/board"
	"github.com/custodian-dev/custodian/internal/admincred"
)

// dashboard is the web dashboard's handler (package board), or nil when
// Config.Board is off.
func (d *Daemon) dashboard() http.Handler {
	if !d.cfg.Board {
		return nil
	}
	return board.Handler(board.Options{App: d.local, Root: d.cfg.Root, Now: d.cfg.Now, Config: d.cfg.ASDDConfig})
}

// adminToken is the daemon's admin token: the one configured, else with
// Config.AdminCredential the project's credential (package admincred,
// created when there is none), else a fresh random one (generated reports
// that the daemon made it up and nobody else knows it).
func (d *Daemon) adminToken() (token string, generated bool, err error) {
	if d.cfg.AdminToken != "" {
		return d.cfg.AdminToken, false, nil
	}
	if d.cfg.AdminCredential {
		t, _, err := admincred.Ensure(d.cfg.Root)
		return t, false, err
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
	case ui && d.cfg.AdminCredential && d.cfg.AdminToken == "":
		// The token is not printed: this output may land in a log
		// the agents can read.
		p, _ := admincred.Path(d.cfg.Root)
		fmt.Fprintf(w, "dashboard: %s  (resolve, approve and review need the admin token: open %s#admin=<the token in %s>)\n", url, url, p)
	case ui:
		fmt.Fprintf(w, "dashboard: %s  (resolve, approve and review need the --admin-token)\n", url)
	case generated:
		fmt.Fprintf(w, "admin token %s: resolve, approve and review over %s need it\n", token, url)
	}
}
