package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/unixsock"
	"github.com/custodian-dev/custodian/mcp"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store/file"
)

// MCPDaemon is a daemon serving the HTTP API and /mcp on a unix socket in
// this process, as `custodian serve` runs them (a Hold-mode store, group
// commit), with a client of its API.
type MCPDaemon struct {
	*Daemon
	sock string
}

// StartMCPDaemon serves the project at dir with /mcp mounted.
func StartMCPDaemon(dir string, protocolVersions ...string) (*MCPDaemon, error) {
	st, err := file.Open(dir, file.Options{Hold: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "bench-mcp.sock")
	l, err := unixsock.Listen(sock)
	if err != nil {
		st.Close()
		return nil, err
	}
	var servers []*mcp.Server
	srv := server.New(st, server.Options{Root: dir, Logger: slog.New(slog.DiscardHandler), MCP: func(l *app.Local) http.Handler {
		s := mcp.New(mcp.Options{Service: func(context.Context) (app.Service, error) { return l, nil }, Actor: "bench", ProtocolVersions: protocolVersions})
		servers = append(servers, s)
		return mcp.NewHTTPHandler(s, nil, nil, mcp.HTTPOptions{MaxBodyBytes: 1 << 20})
	}})
	ctx, cancel := context.WithCancel(context.Background())
	d := &Daemon{st: st, cancel: cancel, done: make(chan error, 1)}
	go func() {
		err := srv.Serve(ctx, l)
		for _, s := range servers {
			s.Close()
		}
		d.done <- err
	}()
	if d.Client, err = client.New("unix://"+sock, client.Options{}); err != nil {
		d.Close()
		return nil, err
	}
	return &MCPDaemon{Daemon: d, sock: sock}, nil
}

// Socket is the daemon's socket.
func (d *MCPDaemon) Socket() string { return d.sock }

// ServeSocket is the socket of a daemon StartServe started in dir.
func ServeSocket(dir string) string { return filepath.Join(dir, "bench-serve.sock") }

// heartbeatArgs is the heartbeat tool's arguments for client w: the same
// proposal as the API benchmarks' (beat).
func heartbeatArgs(w int) map[string]any {
	n := int(beatSeq.Add(1))
	return map[string]any{"agent": beatAgents()[w%len(beatAgents())].Name, "status": "ACTIVE", "done": n}
}

// callBeat calls the heartbeat tool; a tool error is an error.
func callBeat(ctx context.Context, cs *sdk.ClientSession, w int) error {
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "heartbeat", Arguments: heartbeatArgs(w)})
	if err != nil {
		return err
	}
	if res.IsError {
		for _, c := range res.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				return errors.New(t.Text)
			}
		}
		return errors.New("heartbeat: tool error")
	}
	return nil
}

// MCPStdio measures heartbeat tool calls over stdio, one client: exe -C
// dir mcp as a separate process, driven by the SDK's command transport, as
// a coding agent runs it. env is added to the process's environment.
func MCPStdio(exe, dir, name string, budget time.Duration, env ...string) (Result, error) {
	cmd := exec.Command(exe, "-C", dir, "mcp")
	cmd.Env = append(os.Environ(), env...)
	c := sdk.NewClient(&sdk.Implementation{Name: "custodian-bench", Version: "1"}, nil)
	ctx := context.Background()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return Result{}, fmt.Errorf("custodian mcp: %w", err)
	}
	defer cs.Close()
	if err := callBeat(ctx, cs, 0); err != nil {
		return Result{}, err
	}
	lat, el, err := Run(1, budget, 2, func(w, i int) error { return callBeat(ctx, cs, w) })
	return Stats(name, 1, 0, lat, el), err
}

// MCPHTTP measures heartbeat tool calls over streamable HTTP to /mcp of
// the daemon listening on sock, with clients concurrent MCP sessions, one
// per client.
func MCPHTTP(sock string, clients int, budget time.Duration) (Result, error) {
	ctx := context.Background()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return unixsock.Dial(ctx, &dl, sock)
		},
		MaxIdleConns:        4 * clients,
		MaxIdleConnsPerHost: 4 * clients,
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	sessions := make([]*sdk.ClientSession, clients)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := sdk.NewClient(&sdk.Implementation{Name: "custodian-bench", Version: "1"}, nil)
			cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: hc}, nil)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			sessions[i] = cs
		}()
	}
	wg.Wait()
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	if first != nil {
		return Result{}, fmt.Errorf("connect to /mcp: %w", first)
	}
	if err := callBeat(ctx, sessions[0], 0); err != nil {
		return Result{}, err
	}
	lat, el, err := Run(clients, budget, 2*clients, func(w, i int) error { return callBeat(ctx, sessions[w], w) })
	return Stats(fmt.Sprintf("MCP over HTTP (/mcp), %d client(s)", clients), clients, 0, lat, el), err
}

// Pid is the process id of a daemon StartServe started (0 in process).
func (d *Daemon) Pid() int {
	if d.cmd == nil || d.cmd.Process == nil {
		return 0
	}
	return d.cmd.Process.Pid
}

// ProcessCPU returns the CPU time (user and system) process pid has used,
// from /proc (0 where there is none).
func ProcessCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0
	}
	f := strings.Fields(s[i+2:])
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	// clock ticks: 100 per second on Linux (USER_HZ)
	return time.Duration(u+st) * 10 * time.Millisecond
}
