package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// testDaemon is an HTTP server on a unix socket that counts the
// connections it accepted.
type testDaemon struct {
	sock  string
	conns atomic.Int64
	srv   *http.Server
	done  chan struct{}
}

func startTestDaemon(t testing.TB, sock string, h http.Handler) *testDaemon {
	t.Helper()
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	d := &testDaemon{sock: sock, done: make(chan struct{})}
	d.srv = &http.Server{Handler: h, ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			d.conns.Add(1)
		}
	}}
	go func() {
		defer close(d.done)
		d.srv.Serve(l)
	}()
	t.Cleanup(d.stop)
	return d
}

// stop closes the listener and every connection, as a daemon that exits.
func (d *testDaemon) stop() {
	d.srv.Close()
	<-d.done
}

// clientOf starts a test daemon serving h and returns it, a client of it
// and its socket.
func clientOf(t testing.TB, h http.Handler) (*testDaemon, *Client, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "d.sock")
	d := startTestDaemon(t, sock, h)
	c, err := New("unix://"+sock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return d, c, sock
}

func echoMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("PUT /v1/doc", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"key":%q,"revision":%d,"changed":true}`, r.URL.Query().Get("key"), len(body))
	})
	mux.HandleFunc("GET /v1/watch", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; ; i++ {
			if _, err := fmt.Fprintf(w, "id: %d\nevent: commit\ndata: {\"key\":\"k\",\"rev\":%d}\n\n", i, i); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	mux.HandleFunc("GET /v1/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("GET /v1/half", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"partial":`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("GET /v1/hints", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</x>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, `{"final":true}`)
	})
	mux.HandleFunc("POST /v1/limited", func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<10)); err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"code":"INVALID_INPUT","message":"request body over the limit of 1024 bytes"}}`)
			return
		}
		io.WriteString(w, `{}`)
	})
	return mux
}

// Requests from many goroutines share a few kept-alive connections.
func TestTransportReusesConnections(t *testing.T) {
	d, c, _ := clientOf(t, echoMux())
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				res, err := c.Write(ctx, "k", store.Change{Value: []byte(`{"w":` + fmt.Sprint(w) + `}`)}, false)
				if err != nil {
					t.Error(err)
					return
				}
				if !res.Changed || res.Key != "k" {
					t.Errorf("request %d: %+v", i, res)
				}
			}
		})
	}
	wg.Wait()
	// net/http's transport may dial one more connection for a request
	// racing a connection's return to the pool; none is opened per request.
	if n := d.conns.Load(); n > 16 {
		t.Fatalf("400 requests from 8 goroutines opened %d connections, want a few (at most 16)", n)
	}
}

// A daemon that restarts closes every idle connection; the next request,
// a state change included, goes out on a new one instead of failing on the
// dead one.
func TestTransportDaemonRestart(t *testing.T) {
	d, c, sock := clientOf(t, echoMux())
	ctx := context.Background()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	d.stop()
	d2 := startTestDaemon(t, sock, echoMux())
	if _, err := c.Write(ctx, "k", store.Change{Value: []byte(`{}`)}, false); err != nil {
		t.Fatalf("write after a daemon restart: %v", err)
	}
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if n := d2.conns.Load(); n != 1 {
		t.Fatalf("the restarted daemon saw %d connections, want 1", n)
	}
	d2.stop()
	if err := c.Health(ctx); err == nil {
		t.Fatal("a request with no daemon succeeded")
	}
}

// Cancelling the context unblocks a request waiting for its response, and
// a watch stream stopped by its consumer closes its connection instead of
// putting it back half read.
func TestTransportCancelAndEarlyClose(t *testing.T) {
	d, c, _ := clientOf(t, echoMux())

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := c.do(ctx, http.MethodGet, "/v1/slow", nil, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow request: %v, want the context's deadline", err)
	}

	seen := 0
	for cm, err := range c.Watch(context.Background(), "k", 0) {
		if err != nil {
			t.Fatal(err)
		}
		if cm.Rev != uint64(seen+1) {
			t.Fatalf("commit %d after %d", cm.Rev, seen)
		}
		if seen++; seen == 5 {
			break
		}
	}
	before := d.conns.Load()
	for range 3 {
		if err := c.Health(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.conns.Load() - before; got != 1 {
		t.Fatalf("three requests after a stopped watch opened %d connections, want 1 (the stream's is not reused)", got)
	}
}

// A request whose context is already done is not sent, even on a pooled
// connection; a context that ends while the body is read is the error.
func TestTransportDoneContext(t *testing.T) {
	var writes atomic.Int64
	mux := echoMux()
	mux.HandleFunc("PUT /v1/count", func(w http.ResponseWriter, r *http.Request) {
		writes.Add(1)
	})
	_, c, _ := clientOf(t, mux)
	if err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 20 {
		if err := c.do(ctx, http.MethodPut, "/v1/count", nil, []byte(`{}`), nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("put with a cancelled context: %v", err)
		}
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d requests with a cancelled context reached the daemon", n)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	if err := c.do(dctx, http.MethodGet, "/v1/half", nil, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("body cut by the deadline: %v, want the context's error", err)
	}
}

// A body over the daemon's limit gets the daemon's answer, not the broken
// pipe of a write it stopped reading; interim 1xx answers are skipped.
func TestTransportEarlyAnswers(t *testing.T) {
	_, c, _ := clientOf(t, echoMux())
	ctx := context.Background()
	big := make([]byte, 8<<20)
	for i := range big {
		big[i] = 'x'
	}
	err := c.do(ctx, http.MethodPost, "/v1/limited", nil, big, nil)
	if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), "over the limit") {
		t.Fatalf("oversized body: %v, want the daemon's INVALID_INPUT", err)
	}
	var out struct{ Final bool }
	for range 3 {
		if err := c.do(ctx, http.MethodGet, "/v1/hints", nil, nil, &out); err != nil || !out.Final {
			t.Fatalf("after 103: %+v, %v", out, err)
		}
		if err := c.Health(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// A response decodes as encoding/json decodes it (members in any case,
// unknown members ignored: a newer daemon may add some); a malformed one is
// an error naming it; a failed request is reported as http.Client reports
// it (the operation and the URL) and is not a daemon's reason code.
func TestTransportResponses(t *testing.T) {
	mux := echoMux()
	mux.HandleFunc("POST /v1/asdd/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"Revision":7,"committed":true,"outcome":"accepted","added_later":{"x":[1,2]},"events":[{"type":"heartbeat","agent":"spec","data":{"status":"ACTIVE"}}]}`+"\n")
	})
	mux.HandleFunc("GET /v1/keys", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"keys":["a"]} trailing`)
	})
	_, c, sock := clientOf(t, mux)
	ctx := context.Background()
	res, err := c.Heartbeat(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive})
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 7 || !res.Committed || res.Outcome != "accepted" || len(res.Events) != 1 || res.Events[0].Data["status"] != "ACTIVE" {
		t.Fatalf("heartbeat response %+v", res)
	}
	if _, err := c.Keys(ctx); err == nil || !strings.Contains(err.Error(), "decode response") || reason.CodeOf(err) != "" {
		t.Fatalf("malformed response: %v, want a decode error without a reason code", err)
	}
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	c2, err := New("unix://"+sock, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, err = c2.Heartbeat(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive})
	var ue *url.Error
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `Post "http://custodian/v1/asdd/heartbeat"`) || reason.CodeOf(err) != "" {
		t.Fatalf("no daemon: %v, want http.Client's error naming the request", err)
	}
}

// BenchmarkHeartbeatClient is the client's share of a heartbeat: the
// request made, sent on the Transport, the answer read and decoded, from
// GOMAXPROCS×-parallel callers against a daemon that answers at once
// (go test ./client -bench HeartbeatClient -benchmem -cpuprofile …).
func BenchmarkHeartbeatClient(b *testing.B) {
	answer := []byte(`{"revision":2,"committed":true,"outcome":"accepted","summary":"heartbeat from spec_agent (ACTIVE)","events":[{"type":"heartbeat","agent":"spec","data":{"status":"ACTIVE"}}]}` + "\n")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/asdd/heartbeat", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})
	_, c, _ := clientOf(b, mux)
	ctx := context.Background()
	var seq atomic.Int64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := int(seq.Add(1))
			if _, err := c.Heartbeat(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive, Completed: &n}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// Over TCP a proxy in front of the daemon may redirect: the client follows
// as http.Client does (a unix socket reaches the daemon itself, whose API
// never redirects).
func TestTransportFollowsRedirectOverTCP(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/daemon/v1/health", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("GET /daemon/v1/health", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := New(srv.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Health(context.Background()); err != nil {
		t.Fatalf("health behind a redirect: %v", err)
	}
}
