package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// connTransport is an http.RoundTripper for plain HTTP/1.1 to one daemon
// (a unix socket or a TCP address), made for many small requests: each
// request is written and its response read by the calling goroutine on a
// pooled keep-alive connection. net/http's Transport hands every request
// to two goroutines per connection (a writer and a reader), which here
// cost about as much CPU as the daemon spends on a request; this one
// costs none. The request and response are written and parsed by net/http
// itself (Request.Write, ReadResponse). TLS and proxies are not its job:
// https:// addresses use net/http's Transport.
//
// An idle connection the daemon has closed (it restarted, or its idle
// timeout passed) is noticed before reuse by a non-blocking peek, so a
// request is not sent down a dead connection; a GET or HEAD that fails on
// a reused connection before any response arrives is retried once on a new
// one. Nothing else is retried: a state change may have been applied.
type connTransport struct {
	dial        func(ctx context.Context) (net.Conn, error)
	maxIdle     int
	idleTimeout time.Duration

	mu   sync.Mutex
	idle []*pconn // most recently used last
}

type pconn struct {
	c    net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	idle time.Time // when it was put back
}

var errTransportScheme = errors.New("client transport: only http:// requests")

// pastDeadline unblocks every read and write on a connection at once.
var pastDeadline = time.Unix(1, 0)

func (t *connTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" {
		closeBody(req)
		return nil, errTransportScheme
	}
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			closeBody(req)
			return nil, err // never send what the caller gave up on
		}
		pc, reused, err := t.conn(ctx)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := t.exchange(ctx, pc, req)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		if reused && attempt == 0 && idempotent(req) {
			continue // the daemon closed it between the peek and the write
		}
		closeBody(req)
		return nil, err
	}
}

func idempotent(req *http.Request) bool {
	return (req.Method == http.MethodGet || req.Method == http.MethodHead) && req.Body == nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// exchange writes req on pc and reads the response head; the body, when
// read to its end, gives the connection back to the pool.
func (t *connTransport) exchange(ctx context.Context, pc *pconn, req *http.Request) (*http.Response, error) {
	stop := func() bool { return true }
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { pc.c.SetDeadline(pastDeadline) })
	}
	fail := func(err error) (*http.Response, error) {
		stop()
		pc.c.Close()
		return nil, err
	}
	werr := req.Write(pc.bw)
	if werr == nil {
		werr = pc.bw.Flush()
	}
	if werr != nil {
		if ctx.Err() != nil {
			return fail(werr)
		}
		// The daemon may have answered and closed before reading the
		// whole request (a body over its limit): its answer is the
		// error to report, if it sent one.
		pc.c.SetReadDeadline(time.Now().Add(2 * time.Second))
	}
	resp, err := readResponse(pc.br, req)
	if err != nil {
		if werr != nil {
			err = werr
		}
		return fail(err)
	}
	b := &respBody{rc: resp.Body, pc: pc, t: t, ctx: ctx, stop: stop, keep: werr == nil && !resp.Close}
	if resp.Body == http.NoBody {
		b.finish(true)
		return resp, nil
	}
	resp.Body = b
	return resp, nil
}

// readResponse reads the final response, skipping interim 1xx ones as
// net/http's Transport does.
func readResponse(br *bufio.Reader, req *http.Request) (*http.Response, error) {
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// conn returns an idle connection that is still open, or a new one.
func (t *connTransport) conn(ctx context.Context) (*pconn, bool, error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		pc := t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if time.Since(pc.idle) < t.idleTimeout && open(pc.c) {
			return pc, true, nil
		}
		pc.c.Close()
	}
	c, err := t.dial(ctx)
	if err != nil {
		return nil, false, err
	}
	return &pconn{c: c, br: bufio.NewReaderSize(c, 16<<10), bw: bufio.NewWriterSize(c, 8<<10)}, false, nil
}

// put pools a connection whose exchange is complete, and closes the
// pooled ones idle past the timeout (the oldest are first).
func (t *connTransport) put(pc *pconn) {
	now := time.Now()
	pc.idle = now
	var drop []*pconn
	t.mu.Lock()
	n := 0
	for n < len(t.idle) && now.Sub(t.idle[n].idle) >= t.idleTimeout {
		n++
	}
	if n > 0 {
		drop = slices.Clone(t.idle[:n])
		t.idle = slices.Delete(t.idle, 0, n)
	}
	if len(t.idle) < t.maxIdle && pc.br.Buffered() == 0 {
		t.idle = append(t.idle, pc)
	} else {
		drop = append(drop, pc)
	}
	t.mu.Unlock()
	for _, pc := range drop {
		pc.c.Close()
	}
}

// CloseIdleConnections closes the pooled connections (http.Client.
// CloseIdleConnections calls it).
func (t *connTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, pc := range idle {
		pc.c.Close()
	}
}

// respBody is a response body that returns its connection to the pool once
// read to the end; closed before that (a watch stream the caller stops, a
// body left unread), the connection is closed instead, which also unblocks
// a concurrent Read.
type respBody struct {
	rc   io.ReadCloser
	pc   *pconn
	t    *connTransport
	ctx  context.Context
	stop func() bool // deregisters the context's cancellation
	keep bool        // the daemon did not ask to close the connection

	mu   sync.Mutex
	done bool
}

func (b *respBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(errors.Is(err, io.EOF))
		if !errors.Is(err, io.EOF) && b.ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", b.ctx.Err(), err)
		}
	}
	return n, err
}

func (b *respBody) Close() error {
	b.finish(false)
	return nil
}

// finish ends the exchange once: the connection goes back to the pool if
// the body was read whole, the daemon keeps it alive and the context did
// not fire (its deadline would poison the connection).
func (b *respBody) finish(whole bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	if b.stop() && whole && b.keep {
		b.t.put(b.pc)
		return
	}
	b.pc.c.Close()
}
