package server_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store/file"
)

// TestTokenNotOnUnixSocket: with --token the TCP listener
// demands it, the unix socket (the owner's own door, mode 0600) does not,
// as docs/daemon.md says.
func TestTokenNotOnUnixSocket(t *testing.T) {
	dir := t.TempDir()
	st, err := file.Open(dir, file.Options{Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := server.New(st, server.Options{Token: "agents", AdminToken: "adm", Logger: slog.New(slog.DiscardHandler), Root: dir})
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "unix", sock)
	}}
	defer tr.CloseIdleConnections()
	get := func(hc *http.Client, base string) (int, string) {
		resp, err := hc.Get(base + "/v1/doc?key=.asdd/state/manifest.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := get(&http.Client{Transport: tr}, "http://unix"); code == http.StatusUnauthorized {
		t.Fatalf("unix socket without a token: %d %s", code, b)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	if code, b := get(ts.Client(), ts.URL); code != http.StatusUnauthorized || !strings.Contains(b, "UNAUTHORIZED") {
		t.Fatalf("TCP without a token: %d %s", code, b)
	}
}
