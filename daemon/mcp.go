package daemon

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/mcp"
)

// mcpMaxBody caps the body of one MCP request.
const mcpMaxBody = 1 << 20

// mcpDoor builds the handler the server mounts at /mcp over the daemon's
// application layer, or nil when Config.MCP is off. A session opened with
// the admin token (or over the owner's unix socket) is served the human
// decisions too; an agent's is not. Sessions end after 30 minutes idle and
// are capped per token and in all (mcp.DefaultMaxSessionsPerCaller,
// mcp.DefaultMaxSessions: 503 beyond). The servers it makes are closed
// when the daemon stops.
func (d *Daemon) mcpDoor() func(*app.Local) http.Handler {
	if !d.cfg.MCP {
		return nil
	}
	var (
		mu      sync.Mutex
		servers []*mcp.Server
	)
	d.closeMCP = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range servers {
			s.Close()
		}
	}
	return func(l *app.Local) http.Handler {
		o := mcp.Options{
			Service: func(context.Context) (app.Service, error) { return l, nil },
			Config:  d.cfg.ASDDConfig,
			Actor:   "mcp",
			Now:     d.cfg.Now,
			Logger:  d.cfg.Logger,
		}
		agent := mcp.New(o)
		o.Admin = true
		admin := mcp.New(o)
		mu.Lock()
		servers = append(servers, agent, admin)
		mu.Unlock()
		return mcp.NewHTTPHandler(agent, admin, func(r *http.Request) bool { return app.CallerOf(r.Context()) != app.Agent },
			mcp.HTTPOptions{MaxBodyBytes: mcpMaxBody, SessionTimeout: 30 * time.Minute, Logger: d.cfg.Logger})
	}
}
