package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/internal/unixsock"
)

// MCPDaemon is a daemon serving the HTTP API and /mcp on a unix socket in
// this process, assembled by package daemon exactly as `custodian serve`
// runs it (StartDaemon), with a client of its API.
type MCPDaemon struct {
	*Daemon
	sock string
}

// StartMCPDaemon serves the project at dir as StartDaemon does (/mcp is
// mounted there as by `custodian serve`), and knows its socket.
func StartMCPDaemon(dir string) (*MCPDaemon, error) {
	d, err := StartDaemon(dir)
	if err != nil {
		return nil, err
	}
	return &MCPDaemon{Daemon: d, sock: d.sock}, nil
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
// per client (the SDK's client).
func MCPHTTP(sock string, clients int, budget time.Duration) (Result, error) {
	l, err := MCPHTTPLoad(sock, clients)
	if err != nil {
		return Result{}, err
	}
	defer l.Close()
	rs, _, err := Interleave([]Load{l}, budget, 1, nil)
	return rs[0], err
}

// unixClient is an HTTP client of the daemon on sock with keep-alive for
// clients concurrent callers.
func unixClient(sock string, clients int) (*http.Client, func()) {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return unixsock.Dial(ctx, &dl, sock)
		},
		MaxIdleConns:        4 * clients,
		MaxIdleConnsPerHost: 4 * clients,
	}
	return &http.Client{Transport: tr}, tr.CloseIdleConnections
}

// MCPHTTPLoad opens clients MCP sessions to /mcp of the daemon on sock
// with the SDK's client, each calling the heartbeat tool (one untimed call
// made).
func MCPHTTPLoad(sock string, clients int) (Load, error) {
	ctx := context.Background()
	hc, closeConns := unixClient(sock, clients)
	sessions := make([]*sdk.ClientSession, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			c := sdk.NewClient(&sdk.Implementation{Name: "custodian-bench", Version: "1"}, nil)
			sessions[i], errs[i] = c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: "http://localhost/mcp", HTTPClient: hc}, nil)
		})
	}
	wg.Wait()
	l := Load{
		Name:    fmt.Sprintf("MCP over HTTP (/mcp), %d client(s)", clients),
		Clients: clients,
		Op:      func(w, i int) error { return callBeat(ctx, sessions[w], w) },
		Close: func() {
			for _, cs := range sessions {
				if cs != nil {
					cs.Close()
				}
			}
			closeConns()
		},
	}
	err := errors.Join(errs...)
	if err == nil {
		err = l.Op(0, 0)
	}
	if err != nil {
		l.Close()
		return Load{}, fmt.Errorf("/mcp: %w", err)
	}
	return l, nil
}

// MCPHTTPLeanLoad opens the same sessions as MCPHTTPLoad from a lean
// client: raw JSON-RPC POSTs over HTTP keep-alive carrying the
// Mcp-Session-Id header, each answer decoded once, as the agents' own
// clients (Claude Code, Codex) speak the protocol. The SDK's client costs
// more than the server per call, and the clients share the machine with
// the daemon: this one measures the server's capacity.
func MCPHTTPLeanLoad(sock string, clients int) (Load, error) {
	hc, closeConns := unixClient(sock, clients)
	sessions := make([]*LeanSession, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() { sessions[i], errs[i] = OpenLeanSession(hc, "http://localhost/mcp", nil) })
	}
	wg.Wait()
	l := Load{
		Name:    fmt.Sprintf("MCP over HTTP (/mcp), lean client, %d client(s)", clients),
		Clients: clients,
		Op: func(w, i int) error {
			_, err := sessions[w].CallTool("heartbeat", heartbeatArgs(w))
			return err
		},
		Close: func() {
			for _, s := range sessions {
				if s != nil {
					s.Close()
				}
			}
			closeConns()
		},
	}
	err := errors.Join(errs...)
	if err == nil {
		err = l.Op(0, 0)
	}
	if err != nil {
		l.Close()
		return Load{}, fmt.Errorf("/mcp: %w", err)
	}
	return l, nil
}

// APILoad is the same heartbeat over the daemon's HTTP API (POST
// /v1/asdd/heartbeat) from clients concurrent callers (one untimed call
// made).
func APILoad(d *Daemon, clients int) (Load, error) {
	ctx := context.Background()
	l := Load{
		Name:    fmt.Sprintf("HTTP API (POST /v1/asdd/heartbeat), %d client(s)", clients),
		Clients: clients,
		Op:      func(w, i int) error { return beat(ctx, d.Client, w) },
		Close:   func() {},
	}
	return l, l.Op(0, 0)
}

// Load is an operation ready to be measured: its clients connected.
type Load struct {
	Name    string
	Clients int
	Op      func(w, i int) error
	Close   func()
}

// Interleave measures loads in turns, rounds times one after the other
// with budget/rounds each, so that all see the same machine (a shared,
// noisy one: their ratios hold better than figures measured apart). cpu,
// when not nil, returns the daemon process's CPU time; each load is
// charged its turns' share, returned per call.
func Interleave(loads []Load, budget time.Duration, rounds int, cpu func() time.Duration) ([]Result, []time.Duration, error) {
	lat := make([][]time.Duration, len(loads))
	el := make([]time.Duration, len(loads))
	used := make([]time.Duration, len(loads))
	turn := budget / time.Duration(max(rounds, 1))
	for range max(rounds, 1) {
		for i, l := range loads {
			var c0 time.Duration
			if cpu != nil {
				c0 = cpu()
			}
			ls, e, err := Run(l.Clients, turn, 2*l.Clients, l.Op)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", l.Name, err)
			}
			if cpu != nil {
				used[i] += cpu() - c0
			}
			lat[i], el[i] = append(lat[i], ls...), el[i]+e
		}
	}
	rs := make([]Result, len(loads))
	perCall := make([]time.Duration, len(loads))
	for i, l := range loads {
		rs[i] = Stats(l.Name, l.Clients, 0, lat[i], el[i])
		if n := len(lat[i]); n > 0 {
			perCall[i] = used[i] / time.Duration(n)
		}
	}
	return rs, perCall, nil
}

// LeanSession is one MCP session over streamable HTTP spoken with plain
// JSON-RPC POSTs: what an agent's client sends, without an SDK.
type LeanSession struct {
	hc       *http.Client
	endpoint string
	header   http.Header
	id       string
	version  string
	seq      atomic.Int64
}

// OpenLeanSession initializes a session at endpoint (header is added to
// every request, e.g. a token).
func OpenLeanSession(hc *http.Client, endpoint string, header http.Header) (*LeanSession, error) {
	s := &LeanSession{hc: hc, endpoint: endpoint, header: header}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	params := map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "custodian-bench-lean", "version": "1"},
	}
	if err := s.call("initialize", params, &init); err != nil {
		return nil, err
	}
	if s.id == "" {
		return nil, errors.New("initialize: the server sent no Mcp-Session-Id")
	}
	s.version = init.ProtocolVersion
	if err := s.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, nil); err != nil {
		return nil, err
	}
	return s, nil
}

// CallTool calls a tool; a tool error (isError) is an error whose text is
// the tool's. It returns the result's structured content.
func (s *LeanSession) CallTool(name string, args any) (json.RawMessage, error) {
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		Content           []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := s.call("tools/call", map[string]any{"name": name, "arguments": args}, &res); err != nil {
		return nil, err
	}
	if res.IsError {
		for _, c := range res.Content {
			return nil, errors.New(c.Text)
		}
		return nil, fmt.Errorf("%s: tool error", name)
	}
	return res.StructuredContent, nil
}

// Close ends the session (DELETE).
func (s *LeanSession) Close() error {
	req, err := http.NewRequest(http.MethodDelete, s.endpoint, nil)
	if err != nil {
		return err
	}
	s.setHeaders(req)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}

func (s *LeanSession) setHeaders(req *http.Request) {
	for k, v := range s.header {
		req.Header[k] = v
	}
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	if s.version != "" {
		req.Header.Set("Mcp-Protocol-Version", s.version)
	}
}

// call sends one request and decodes its result into out.
func (s *LeanSession) call(method string, params, out any) error {
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": s.seq.Add(1), "method": method, "params": params}
	if err := s.post(msg, &resp); err != nil {
		return err
	}
	if resp.Error != nil {
		return fmt.Errorf("%s: %s (%d)", method, resp.Error.Message, resp.Error.Code)
	}
	if err := json.Unmarshal(resp.Result, out); err != nil {
		return fmt.Errorf("%s: result: %w", method, err)
	}
	return nil
}

// post sends msg and decodes the answer (a JSON body, or the first data
// line of an event stream) into out; nil out: none expected.
func (s *LeanSession) post(msg, out any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.setHeaders(req)
	resp, err := s.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %s", s.endpoint, resp.Status, bytes.TrimSpace(b))
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" && s.id == "" {
		s.id = id
	}
	if out == nil {
		return nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(string(b)) {
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
				b = []byte(d)
				break
			}
		}
	}
	return json.Unmarshal(b, out)
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
