package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
)

// freeAddr returns a loopback TCP address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// dial returns a client of url, closed when the test ends.
func dial(t *testing.T, url, token string) *client.Client {
	t.Helper()
	c, err := client.New(url, client.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitHealthy polls /v1/health until it answers.
func waitHealthy(t *testing.T, c *client.Client, errc <-chan error) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if err := c.Health(context.Background()); err == nil {
			return
		}
		select {
		case err := <-errc:
			t.Fatalf("daemon stopped before it answered: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not answer /v1/health")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start starts a daemon and stops it when the test ends.
func start(t *testing.T, cfg Config) *Daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d, err := Start(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := d.Wait(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return d
}

// assertReleased checks that a stopped daemon left no socket behind and
// released the state lock: a new daemon may hold the project.
func assertReleased(t *testing.T, root, sock string) {
	t.Helper()
	if _, err := os.Stat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
	st, err := file.Open(root, file.Options{Hold: true})
	if err != nil {
		t.Fatalf("the state lock was not released: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// Run on a fresh project: it serves /v1/health and the owner's operations
// on the unix socket, refuses a change over TCP without a token (nothing
// committed), takes it with the admin token, and on cancellation returns
// nil with every commit durable, no socket left and the lock released.
func TestRun(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("a-long-project-directory-name/", 5))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, root := range map[string]string{"short path": t.TempDir(), "socket path past the 108-byte limit": long} {
		t.Run(name, func(t *testing.T) { testRun(t, root) })
	}
}

func testRun(t *testing.T, root string) {
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, Config{Root: root, Socket: DefaultSocket, Addr: addr, AdminToken: "adm", MonitorEvery: time.Hour})
	}()
	sock := filepath.Join(root, DefaultSocket)
	owner := app.NewRemote(dial(t, "unix://"+sock, "adm"))
	waitHealthy(t, owner.Client(), errc)
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v, %v; want 0600", fi, err)
	}
	bg := context.Background()
	if _, err := owner.ASDD(bg, asdd.Init{Sprint: "S1"}); err != nil {
		t.Fatalf("init over the socket: %v", err)
	}
	r, err := owner.ASDD(bg, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive})
	if err != nil {
		t.Fatalf("heartbeat over the socket: %v", err)
	}
	stranger := dial(t, "http://"+addr, "")
	if _, err := stranger.Op(bg, "heartbeat", asdd.Beat{Agent: "design", Status: asdd.HeartbeatActive}); reason.CodeOf(err) != reason.Unauthorized {
		t.Fatalf("a TCP change without a token: %v, want UNAUTHORIZED", err)
	}
	if m, err := owner.Manifest(bg); err != nil || m.Revision != r.Revision {
		t.Fatalf("after the refused change: revision %v (%v), want %d", m, err, r.Revision)
	}
	admin := dial(t, "http://"+addr, "adm")
	last, err := admin.Op(bg, "heartbeat", asdd.Beat{Agent: "design", Status: asdd.HeartbeatActive})
	if err != nil {
		t.Fatalf("a TCP change with the admin token: %v", err)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	assertReleased(t, root, sock)
	st, err := file.Open(root, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if doc, err := st.Get(bg, asdd.Key); err != nil || doc.Revision != last.Revision {
		t.Fatalf("after the stop the manifest is at %d (%v), want %d", doc.Revision, err, last.Revision)
	}
}

// A second daemon on a project one serves is refused (CONFLICT naming the
// first's pid) and changes nothing; once the first stops it starts.
func TestSecondDaemonRefused(t *testing.T) {
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	first, err := Start(ctx, Config{Root: root, Socket: "a.sock"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start(context.Background(), Config{Root: root, Socket: "b.sock"})
	if reason.CodeOf(err) != reason.Conflict || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("second daemon: %v, want CONFLICT naming pid %d", err, os.Getpid())
	}
	if _, err := os.Stat(filepath.Join(root, "b.sock")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused daemon left a socket: %v", err)
	}
	cancel()
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	start(t, Config{Root: root, Socket: "b.sock"})
}

// A daemon that cannot listen fails at Start and leaves nothing held: no
// socket, the lock free.
func TestStartFailureReleasesEverything(t *testing.T) {
	root := t.TempDir()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, err = Start(context.Background(), Config{Root: root, Socket: DefaultSocket, Addr: busy.Addr().String()})
	if err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Fatalf("Start on a busy address: %v, want an error naming it", err)
	}
	assertReleased(t, root, filepath.Join(root, DefaultSocket))
}

// What the daemon refuses to start with: usage errors (exit 2).
func TestConfigRefused(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no root", Config{Socket: DefaultSocket}, "no project root"},
		{"nothing to listen on", Config{Root: root}, "nothing to listen on"},
		{"off loopback without a token", Config{Root: root, Addr: "0.0.0.0:0"}, "not a loopback address"},
		{"a store that is not etcd", Config{Root: root, Socket: DefaultSocket, Store: "s3://x"}, "s3://x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Start(context.Background(), tc.cfg)
			if reason.ExitCode(err) != reason.ExitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Start: %v, want a usage error containing %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(root, ".asdd")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("a refused configuration touched the project: %v", err)
			}
		})
	}
}

func TestCheckBind(t *testing.T) {
	tests := []struct {
		addr, token string
		usage       bool
	}{
		{"127.0.0.1:7420", "", false},
		{"[::1]:7420", "", false},
		{"localhost:7420", "", false},
		{"127.0.0.2:0", "", false},
		{"0.0.0.0:7420", "", true},
		{"0.0.0.0:7420", "t0ken", false},
		{":7420", "", true},
		{"192.168.1.5:7420", "", true},
		{"example.com:7420", "", true},
		{"no-port", "", true},
	}
	for _, tc := range tests {
		err := CheckBind(tc.addr, tc.token)
		if got := err != nil && reason.ExitCode(err) == reason.ExitUsage; got != tc.usage {
			t.Errorf("CheckBind(%q, %q) = %v, want usage error %v", tc.addr, tc.token, err, tc.usage)
		}
	}
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// The daemon's monitor loop commits through the daemon's application
// layer: an ACTIVE agent silent past its timeout gets a retry request.
func TestMonitorLoop(t *testing.T) {
	clk := &clock{t: time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)}
	d := start(t, Config{Root: t.TempDir(), Socket: DefaultSocket, MonitorEvery: 5 * time.Millisecond, Now: clk.Now})
	ctx := context.Background()
	svc := d.Service()
	if _, err := svc.ASDD(ctx, asdd.Init{}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive}); err != nil {
		t.Fatal(err)
	}
	clk.Add(16 * time.Minute) // past the default timeout (15m)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		m, err := svc.Manifest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h := m.AgentHeartbeats["spec_agent"]; h != nil && h.RetryRequestedAt != "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retry request recorded: %+v", m.AgentHeartbeats)
		}
	}
}

// The dashboard is served at / and the MCP door at /mcp when configured,
// and neither otherwise; a generated admin token is announced with the
// dashboard's address.
func TestDoors(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run("on="+strconv.FormatBool(on), func(t *testing.T) {
			var errOut bytes.Buffer
			d := start(t, Config{Root: t.TempDir(), Socket: DefaultSocket, Addr: "127.0.0.1:0", Board: on, MCP: on, Stderr: &errOut})
			hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "unix", d.Socket())
			}}}
			defer hc.CloseIdleConnections()
			status := func(method, path, body string) int {
				req, _ := http.NewRequest(method, "http://daemon"+path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode
			}
			init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
			board, mcp := status("GET", "/", ""), status("POST", "/mcp", init)
			if on && (board != http.StatusOK || mcp != http.StatusOK) {
				t.Fatalf("GET / = %d, POST /mcp = %d; want 200, 200", board, mcp)
			}
			if !on && (board == http.StatusOK || mcp == http.StatusOK) {
				t.Fatalf("GET / = %d, POST /mcp = %d with the doors off", board, mcp)
			}
			want := "http://" + d.Addr() + "/"
			if on {
				want += "#admin=" + d.AdminToken()
			}
			if len(d.AdminToken()) != 32 || !strings.Contains(errOut.String(), want) {
				t.Fatalf("announced %q, want %q with a generated 32-hex token", errOut.String(), want)
			}
		})
	}
}

// A daemon whose listener fails stops by itself (its monitor loop too),
// reports the failure and releases the project.
func TestListenerFailureStopsDaemon(t *testing.T) {
	root := t.TempDir()
	d, err := Start(context.Background(), Config{Root: root, Socket: DefaultSocket, Addr: "127.0.0.1:0", MonitorEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range d.ls {
		if l.Addr().Network() == "tcp" {
			l.Close()
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- d.Wait() }()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("Wait after a listener failed: nil, want the failure")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop after its listener failed")
	}
	assertReleased(t, root, filepath.Join(root, DefaultSocket))
}
