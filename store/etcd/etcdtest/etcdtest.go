// Package etcdtest starts a real etcd server embedded in the test process
// (go.etcd.io/etcd/server/v3/embed) on loopback, in a temporary directory,
// for the tests of the etcd backend and of what runs on it. It is imported
// only by tests: the custodian binary never links the etcd server.
//
// One server per test binary is the intended use:
//
//	func TestMain(m *testing.M) { os.Exit(etcdtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		c := etcdtest.Client(t)       // a client of the shared server
//		p := etcdtest.Prefix(t)       // a key prefix no other test uses
//		...
//	}
package etcdtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Options adjust the embedded server.
type Options struct {
	// MaxRequestBytes is the server's --max-request-bytes (0: etcd's
	// default, 1.5 MiB).
	MaxRequestBytes uint
	// TLS, when set, serves clients over TLS with this certificate and
	// key, and requires client certificates signed by CA.
	TLS *TLSFiles
}

// TLSFiles are PEM file paths.
type TLSFiles struct {
	CA, Cert, Key string
}

// Server is one running embedded etcd member.
type Server struct {
	// Endpoints are the client URLs (http://127.0.0.1:port).
	Endpoints []string
	// Dir is the data directory.
	Dir string

	e      *embed.Etcd
	cfg    *embed.Config
	cmd    *exec.Cmd // a server run from a binary (StartBinary)
	exited chan error
	log    *bytes.Buffer
}

// Start starts a single-member etcd cluster with its data in dir, listening
// on free loopback ports, and waits until it serves. Ticks are short (10 ms
// heartbeat, 100 ms election) so that startup and lease expiry are quick;
// fsync stays on, so commits are as durable as in production.
func Start(dir string, opts Options) (*Server, error) {
	var lastErr error
	for range 5 { // a free port may be taken between probing and binding
		s, err := start(dir, opts)
		if err == nil {
			return s, nil
		}
		lastErr = err
		os.RemoveAll(filepath.Join(dir, "member"))
	}
	return nil, lastErr
}

func start(dir string, opts Options) (*Server, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "custodian-test"
	cfg.Dir = dir
	cfg.LogLevel = "fatal" // a clean shutdown logs errors about closed listeners
	cfg.LogOutputs = []string{"stderr"}
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	if opts.MaxRequestBytes > 0 {
		cfg.MaxRequestBytes = opts.MaxRequestBytes
	}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	if opts.TLS != nil {
		client.Scheme = "https"
		cfg.ClientTLSInfo = transport.TLSInfo{CertFile: opts.TLS.Cert, KeyFile: opts.TLS.Key, TrustedCAFile: opts.TLS.CA, ClientCertAuth: true}
	}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := run(cfg)
	if err != nil {
		return nil, err
	}
	return &Server{Endpoints: []string{client.String()}, Dir: dir, e: e, cfg: cfg}, nil
}

func run(cfg *embed.Config) (*embed.Etcd, error) {
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(30 * time.Second):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after 30s")
	}
	return e, nil
}

// Restart stops the server and starts it again on the same data directory
// and addresses, after down (the time clients see it gone). Clients
// reconnect by themselves.
func (s *Server) Restart(down time.Duration) error {
	if s.cmd != nil {
		return fmt.Errorf("etcdtest: Restart is for the embedded server")
	}
	s.e.Close()
	time.Sleep(down)
	var err error
	for range 20 { // the old listeners may take a moment to release the ports
		if s.e, err = run(s.cfg); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Close stops the server.
func (s *Server) Close() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
		return
	}
	s.e.Close()
}

// URL returns the endpoints in the host:port,host:port form of an
// etcd:// store URL.
func (s *Server) URL() string {
	hosts := make([]string, len(s.Endpoints))
	for i, e := range s.Endpoints {
		hosts[i] = strings.TrimPrefix(strings.TrimPrefix(e, "http://"), "https://")
	}
	return strings.Join(hosts, ",")
}

// NewClient returns a client of the server; the caller closes it.
func (s *Server) NewClient() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   s.Endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
}

var (
	shared    *Server
	sharedErr error
	sharedDir string
	once      sync.Once
	seq       atomic.Int64
)

// Main runs the package's tests with one shared server, started on first
// use and removed when the tests end. Use it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	return code
}

// Shared returns the test binary's shared server, starting it on first use.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	once.Do(func() {
		sharedDir, sharedErr = os.MkdirTemp("", "custodian-etcd-")
		if sharedErr != nil {
			return
		}
		shared, sharedErr = Start(sharedDir, Options{})
	})
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

// Client returns a new client of the shared server, closed when the test
// ends.
func Client(tb testing.TB) *clientv3.Client {
	tb.Helper()
	c, err := Shared(tb).NewClient()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// Prefix returns a key prefix that no other test of this process uses, such
// as "/test/7-TestX/".
func Prefix(tb testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(tb.Name())
	return fmt.Sprintf("/test/%d-%s/", seq.Add(1), name)
}

// Ready waits until the server answers a read, for tests that restart it.
func (s *Server) Ready(ctx context.Context) error {
	c, err := s.NewClient()
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Get(ctx, "health")
	return err
}
