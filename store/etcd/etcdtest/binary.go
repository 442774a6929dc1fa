package etcdtest

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"
)

// DebianEtcd is where Debian's etcd-server package installs the server
// (etcd 3.4 on bookworm); $CUSTODIAN_ETCD_BIN names another binary.
const DebianEtcd = "/usr/bin/etcd"

// Binary returns the etcd server binary to test against: $CUSTODIAN_ETCD_BIN,
// else DebianEtcd. When there is none the test is skipped with a message,
// or fails when $CI is set (the CI script installs the package).
func Binary(tb testing.TB) string {
	tb.Helper()
	p := os.Getenv("CUSTODIAN_ETCD_BIN")
	if p == "" {
		p = DebianEtcd
	}
	if _, err := os.Stat(p); err != nil {
		msg := fmt.Sprintf("no etcd server binary at %s (Debian: apt-get install etcd-server; .ci/install does it): %v", p, err)
		if os.Getenv("CI") != "" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	return p
}

// StartBinary runs the etcd server binary bin as a single-member cluster
// with its data in dir, on free loopback ports, and waits until it answers.
// Close kills it.
func StartBinary(bin, dir string) (*Server, error) {
	var lastErr error
	for range 5 { // a free port may be taken between probing and binding
		s, err := startBinary(bin, dir)
		if err == nil {
			return s, nil
		}
		lastErr = err
		os.RemoveAll(dir + "/member")
	}
	return nil, lastErr
}

func startBinary(bin, dir string) (*Server, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[0])}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	cmd := exec.Command(bin, "--name", "custodian-test", "--data-dir", dir,
		"--listen-client-urls", client.String(), "--advertise-client-urls", client.String(),
		"--listen-peer-urls", peer.String(), "--initial-advertise-peer-urls", peer.String(),
		"--initial-cluster", "custodian-test="+peer.String(),
		"--heartbeat-interval", "10", "--election-timeout", "100")
	// Debian's 3.4 reads ETCD_* variables too: none may leak in.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "ETCD_UNSUPPORTED_ARCH=" + os.Getenv("ETCD_UNSUPPORTED_ARCH")}
	log := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	s := &Server{Endpoints: []string{client.String()}, Dir: dir, cmd: cmd, exited: exited, log: log}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := s.Ready(ctx)
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("%s exited (%v):\n%s", bin, err, log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	_ = cmd.Process.Kill()
	<-exited
	return nil, fmt.Errorf("%s did not answer within 30s:\n%s", bin, log.String())
}

// Version asks a server for its version (etcd's /version endpoint).
func (s *Server) Version(ctx context.Context) (string, error) {
	c, err := s.NewClient()
	if err != nil {
		return "", err
	}
	defer c.Close()
	st, err := c.Status(ctx, s.Endpoints[0])
	if err != nil {
		return "", err
	}
	return st.Version, nil
}
