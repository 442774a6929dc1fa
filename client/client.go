package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/unixsock"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// Options configure a Client.
type Options struct {
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token string
	// MaxBodyBytes is the daemon's request body cap; a value larger than
	// about this is sent as a patch. 1 MiB by default (the daemon's
	// default).
	MaxBodyBytes int
	// HTTPClient replaces the default transport (tests).
	HTTPClient *http.Client
	// ReconnectDelay is the pause before a dropped watch stream is resumed;
	// 100 ms by default.
	ReconnectDelay time.Duration
}

// Client talks to one daemon. It is safe for concurrent use.
type Client struct {
	base string // scheme://host, no trailing slash
	o    Options
	hc   *http.Client
	// rt is hc's transport on a unix socket the client dialled itself:
	// requests go to it directly, as nothing between the client and the
	// daemon redirects or sets cookies (an http.Client's bookkeeping was a
	// twentieth of a heartbeat's cost in the client). Nil over TCP (a proxy
	// may redirect) and with Options.HTTPClient: requests go through hc.
	rt http.RoundTripper
}

var _ store.Store = (*Client)(nil)

// New returns a client for the daemon at addr: "http://host:port",
// "https://…", or "unix:///path/to/custodian.sock".
func New(addr string, o Options) (*Client, error) {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.ReconnectDelay <= 0 {
		o.ReconnectDelay = 100 * time.Millisecond
	}
	c := &Client{o: o, hc: o.HTTPClient}
	u, err := url.Parse(addr)
	if err != nil {
		return nil, fmt.Errorf("daemon address %q: %w", addr, err)
	}
	switch u.Scheme {
	case "https":
		c.base = strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/")
		if c.hc == nil {
			c.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}}
		}
	case "http":
		c.base = strings.TrimSuffix(u.Scheme+"://"+u.Host+u.Path, "/")
		if c.hc == nil {
			host := u.Host
			if u.Port() == "" {
				host = net.JoinHostPort(u.Hostname(), "80")
			}
			c.hc = pooled("tcp", host)
		}
	case "unix":
		sock := u.Path
		if sock == "" {
			sock = u.Opaque
		}
		c.base = "http://custodian"
		if c.hc == nil {
			c.hc = pooled("unix", sock)
			c.rt = c.hc.Transport
		}
	default:
		return nil, fmt.Errorf("daemon address %q: want http://, https:// or unix://", addr)
	}
	return c, nil
}

// pooled is an HTTP client on net/http's Transport to one address (a socket's
// path when network is "unix", at any depth: see package unixsock).
func pooled(network, addr string) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			if network == "unix" {
				// unixsock reaches a socket path longer than the
				// kernel's limit through its directory.
				return unixsock.Dial(ctx, &d, addr)
			}
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}}
}

// Close releases idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// do sends a request and decodes a JSON response into out; an error
// response becomes its *reason.Error.
func (c *Client) do(ctx context.Context, method, path string, hdr http.Header, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("daemon request: %w", err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if body != nil || method != http.MethodGet && method != http.MethodHead {
		// Always for a state change, body or not: the daemon refuses any
		// other (a browser's cross-site form could send it).
		req.Header.Set("Content-Type", "application/json")
	}
	if c.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.o.Token)
	}
	resp, err := c.send(req)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	defer resp.Body.Close()
	rbody := io.LimitReader(resp.Body, maxResponse)
	if resp.StatusCode >= 300 {
		data, err := io.ReadAll(rbody)
		if err != nil {
			return fmt.Errorf("daemon: read response: %w", err)
		}
		return decodeError(resp.StatusCode, data)
	}
	if out == nil {
		// Read to the end: the connection is reused only then.
		if _, err := io.Copy(io.Discard, rbody); err != nil {
			return fmt.Errorf("daemon: read response: %w", err)
		}
		return nil
	}
	if err := wire.DecodeRead(rbody, out); err != nil {
		return fmt.Errorf("daemon: decode response: %w", err)
	}
	return nil
}

// send sends req: on the client's own transport directly, or through
// Options.HTTPClient.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	if c.rt == nil {
		return c.hc.Do(req)
	}
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		// As http.Client reports it: the operation and the URL.
		return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.String(), Err: err}
	}
	return resp, nil
}

// urlErrorOp is how http.Client names a method in its errors ("Get",
// "Put", "Post").
func urlErrorOp(method string) string {
	if method == "" {
		return "Get"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// maxResponse bounds what the client reads of a response (a document is
// at most 64 MiB by default; its JSON envelope adds little).
const maxResponse = 256 << 20

// decodeError turns an error response back into the daemon's error.
func decodeError(status int, data []byte) error {
	var er wire.ErrorBody
	if wire.Decode(data, &er) == nil && er.Error != nil && er.Error.Code != "" {
		if er.Error.Code == "INTERNAL" {
			return fmt.Errorf("daemon: %s", er.Error.Message)
		}
		return er.Error
	}
	return fmt.Errorf("daemon: HTTP %d: %s", status, bytes.TrimSpace(data))
}

func keyQuery(key string, more ...string) string {
	q := url.Values{"key": {key}}
	for i := 0; i+1 < len(more); i += 2 {
		q.Set(more[i], more[i+1])
	}
	return "?" + q.Encode()
}

// Health checks that the daemon answers.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/v1/health", nil, nil, nil)
}

// Get returns the latest committed document.
func (c *Client) Get(ctx context.Context, key string) (store.Document, error) {
	var d store.Document
	err := c.do(ctx, http.MethodGet, "/v1/doc"+keyQuery(key), nil, nil, &d)
	return d, err
}

// GetAt returns the document as it was right after revision rev.
func (c *Client) GetAt(ctx context.Context, key string, rev uint64) (store.Document, error) {
	var d store.Document
	err := c.do(ctx, http.MethodGet, "/v1/doc"+keyQuery(key, "rev", strconv.FormatUint(rev, 10)), nil, nil, &d)
	return d, err
}

// Put commits a value (or, when it would not fit in a request, a patch from
// base) iff the document is at revision base.
func (c *Client) Put(ctx context.Context, key string, base store.Document, ch store.Change, create bool) (wire.PutResponse, error) {
	if len(ch.Value) > store.DefaultMaxBytes {
		return wire.PutResponse{}, reason.New(reason.InvalidInput, "document is %d bytes, over the limit of %d bytes", len(ch.Value), store.DefaultMaxBytes)
	}
	req := wire.PutRequest{Actor: ch.Actor, Reason: ch.Reason, Events: ch.Events}
	if len(ch.Value) > c.o.MaxBodyBytes*3/4 && base.Value != nil {
		p, err := store.Diff(base.Value, ch.Value)
		if err != nil {
			return wire.PutResponse{}, err
		}
		req.Patch = p
	} else {
		req.Value = ch.Value
	}
	body, err := json.Marshal(req)
	if err != nil {
		return wire.PutResponse{}, reason.New(reason.InvalidInput, "encode change: %v", err)
	}
	path := "/v1/doc" + keyQuery(key)
	if create {
		path = "/v1/doc" + keyQuery(key, "create", "1")
	}
	hdr := http.Header{"If-Match": {strconv.Quote(strconv.FormatUint(base.Revision, 10))}}
	var out wire.PutResponse
	err = c.do(ctx, http.MethodPut, path, hdr, body, &out)
	return out, err
}

// Write commits a whole value without a revision check (the last writer
// wins): for an agent that alone owns a document. The daemon serialises it
// with every other commit.
func (c *Client) Write(ctx context.Context, key string, ch store.Change, create bool) (wire.PutResponse, error) {
	if len(ch.Value) > store.DefaultMaxBytes {
		return wire.PutResponse{}, reason.New(reason.InvalidInput, "document is %d bytes, over the limit of %d bytes", len(ch.Value), store.DefaultMaxBytes)
	}
	body, err := json.Marshal(wire.PutRequest{Value: ch.Value, Actor: ch.Actor, Reason: ch.Reason, Events: ch.Events})
	if err != nil {
		return wire.PutResponse{}, reason.New(reason.InvalidInput, "encode change: %v", err)
	}
	path := "/v1/doc" + keyQuery(key)
	if create {
		path = "/v1/doc" + keyQuery(key, "create", "1")
	}
	var out wire.PutResponse
	err = c.do(ctx, http.MethodPut, path, nil, body, &out)
	return out, err
}

// Update reads the document, runs fn locally and commits its change with
// compare-and-swap, retrying on CONFLICT.
func (c *Client) Update(ctx context.Context, key string, fn store.UpdateFunc, opts ...store.UpdateOption) (store.Result, error) {
	o := store.ApplyOptions(opts)
	for attempt := range store.MaxRetries {
		if attempt > 0 {
			// Randomised, growing backoff: with many contenders on one
			// document, compare-and-swap over a network otherwise lets the
			// same few win every round.
			d := time.Duration(rand.Int64N(int64(min(time.Millisecond<<min(attempt, 6), 50*time.Millisecond)) + 1))
			select {
			case <-ctx.Done():
				return store.Result{}, ctx.Err()
			case <-time.After(d):
			}
		}
		cur, err := c.Get(ctx, key)
		if reason.CodeOf(err) == reason.NotFound && (o.Create || o.IfRevision != nil) {
			cur, err = store.Document{Key: key}, nil
		}
		if err != nil {
			return store.Result{}, err
		}
		if o.IfRevision != nil && *o.IfRevision != cur.Revision {
			return store.Result{}, reason.New(reason.Conflict, "%s is at revision %d, not %d", key, cur.Revision, *o.IfRevision)
		}
		if cur.Value == nil && !o.Create {
			return store.Result{}, reason.New(reason.NotFound, "no document %s (nothing committed yet)", key)
		}
		ch, err := fn(cur)
		if err != nil {
			return store.Result{}, err
		}
		if ch.Empty() {
			return store.Result{Document: cur}, nil
		}
		if ch, err = ch.Resolve(cur.Value); err != nil {
			return store.Result{}, err
		}
		res, err := c.Put(ctx, key, cur, ch, o.Create)
		if reason.CodeOf(err) == reason.Conflict && o.IfRevision == nil {
			continue
		}
		if err != nil {
			return store.Result{}, err
		}
		return store.Result{Document: res.Document, Changed: res.Changed, Record: res.Record}, nil
	}
	return store.Result{}, reason.New(reason.Conflict, "%s: gave up after %d concurrent changes", key, store.MaxRetries)
}

// History returns the journal records with from <= rev <= to (to 0: all).
func (c *Client) History(ctx context.Context, key string, from, to uint64) ([]store.Record, error) {
	var h wire.HistoryResponse
	err := c.do(ctx, http.MethodGet, "/v1/history"+keyQuery(key, "from", strconv.FormatUint(from, 10), "to", strconv.FormatUint(to, 10)), nil, nil, &h)
	if len(h.Records) == 0 {
		h.Records = nil
	}
	return h.Records, err
}

// Keys lists the documents the daemon's store holds.
func (c *Client) Keys(ctx context.Context) ([]string, error) { return c.keys(ctx, "/v1/keys") }

// VerifyKeys lists what the daemon's verification of every document
// checks: Keys and the documents it finds without a journal.
func (c *Client) VerifyKeys(ctx context.Context) ([]string, error) {
	return c.keys(ctx, "/v1/keys?verify=true")
}

func (c *Client) keys(ctx context.Context, path string) ([]string, error) {
	var k wire.KeysResponse
	err := c.do(ctx, http.MethodGet, path, nil, nil, &k)
	if len(k.Keys) == 0 {
		k.Keys = nil
	}
	return k.Keys, err
}

// Verify asks the daemon to check a document's journal and snapshot.
func (c *Client) Verify(ctx context.Context, key string) error {
	return c.do(ctx, http.MethodPost, "/v1/verify"+keyQuery(key), nil, nil, nil)
}

// Op runs an ASDD operation inside the daemon (wire.ASDDOps names
// them). A committed halt comes back with Verdict set and a nil error.
func (c *Client) Op(ctx context.Context, name string, op asdd.Op) (*wire.OpResponse, error) {
	body, err := json.Marshal(op)
	if err != nil {
		return nil, reason.New(reason.InvalidInput, "encode %s: %v", name, err)
	}
	var out wire.OpResponse
	if err := c.do(ctx, http.MethodPost, "/v1/asdd/"+url.PathEscape(name), nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// post sends req as JSON to path and decodes the answer into out.
func (c *Client) post(ctx context.Context, path string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return reason.New(reason.InvalidInput, "encode request: %v", err)
	}
	return c.do(ctx, http.MethodPost, path, nil, body, out)
}

// Impl runs a change of the task manifest inside the daemon.
func (c *Client) Impl(ctx context.Context, req wire.ImplRequest) (*wire.ImplResponse, error) {
	var out wire.ImplResponse
	if err := c.post(ctx, "/v1/impl", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// State runs a change of the state-manager's state inside the daemon.
func (c *Client) State(ctx context.Context, req wire.StateRequest) (*wire.StateResponse, error) {
	var out wire.StateResponse
	if err := c.post(ctx, "/v1/state", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ApplyJQ asks the daemon to run a jq program on a document.
func (c *Client) ApplyJQ(ctx context.Context, req wire.JQRequest) (*wire.JQResponse, error) {
	var out wire.JQResponse
	if err := c.post(ctx, "/v1/jq", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Rollback asks the daemon to restore a document's past value.
func (c *Client) Rollback(ctx context.Context, req wire.RollbackRequest) (*wire.PutResponse, error) {
	var out wire.PutResponse
	if err := c.post(ctx, "/v1/rollback", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Cycle runs a cycle operation inside the daemon.
func (c *Client) Cycle(ctx context.Context, req wire.CycleRequest) (*wire.CycleResponse, error) {
	var out wire.CycleResponse
	if err := c.post(ctx, "/v1/cycle", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Propose submits an agent's proposal. Artifact hashes left empty are
// computed by the daemon from the files.
func (c *Client) Propose(ctx context.Context, p asdd.Proposal) (*wire.OpResponse, error) {
	return c.Op(ctx, "propose", p)
}

// Slice reads one slice of the latest ASDD manifest.
func (c *Client) Slice(ctx context.Context, id string) (*asdd.Slice, error) {
	var s asdd.Slice
	if err := c.do(ctx, http.MethodGet, "/v1/asdd/slices/"+url.PathEscape(id), nil, nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Heartbeat records an agent heartbeat.
func (c *Client) Heartbeat(ctx context.Context, b asdd.Beat) (*wire.OpResponse, error) {
	return c.Op(ctx, "heartbeat", b)
}

// Lock leases a slice.
func (c *Client) Lock(ctx context.Context, l asdd.LockSlice) (*wire.OpResponse, error) {
	return c.Op(ctx, "lock", l)
}

// Unlock releases a slice's lease.
func (c *Client) Unlock(ctx context.Context, u asdd.UnlockSlice) (*wire.OpResponse, error) {
	return c.Op(ctx, "unlock", u)
}

// Watch yields every commit of key after revision from, in order, with no
// gap, until ctx is done or an error is yielded. A dropped connection is
// resumed from the last delivered revision.
func (c *Client) Watch(ctx context.Context, key string, from uint64) iter.Seq2[store.Commit, error] {
	return func(yield func(store.Commit, error) bool) {
		last := from
		failures := 0
		for {
			delivered, err := c.watchOnce(ctx, key, &last, yield)
			if ctx.Err() != nil {
				return
			}
			var re *reason.Error
			switch {
			case errors.Is(err, errStop):
				return
			case errors.As(err, &re):
				yield(store.Commit{}, err)
				return
			}
			if delivered {
				failures = 0
			}
			failures++
			if failures > 50 {
				yield(store.Commit{}, fmt.Errorf("watch %s: %w", key, err))
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(c.o.ReconnectDelay):
			}
		}
	}
}

var errStop = errors.New("consumer stopped")

// watchOnce follows one stream; it returns when the stream ends.
func (c *Client) watchOnce(ctx context.Context, key string, last *uint64, yield func(store.Commit, error) bool) (bool, error) {
	q := url.Values{"key": {key}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/watch?"+q.Encode(), nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", strconv.FormatUint(*last, 10))
	if c.o.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.o.Token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		return false, decodeError(resp.StatusCode, data)
	}
	delivered := false
	var ev Event
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		ok, err := ReadEvent(br, &ev)
		if err != nil {
			return delivered, err
		}
		if !ok {
			continue
		}
		switch ev.Type {
		case "commit":
			var cm store.Commit
			if err := wire.Decode(ev.Data, &cm); err != nil {
				return delivered, fmt.Errorf("watch: bad event: %w", err)
			}
			if cm.Rev <= *last {
				continue // already delivered before a reconnect
			}
			*last = cm.Rev
			delivered = true
			if !yield(cm, nil) {
				return delivered, errStop
			}
		case "error":
			return delivered, decodeError(http.StatusOK, ev.Data)
		}
	}
}

// Event is one Server-Sent Event.
type Event struct {
	ID   string
	Type string
	Data []byte
}

// ReadEvent reads the next event from an SSE stream into ev. It returns
// false (and no error) for a block that carried no data, such as a
// comment.
func ReadEvent(br *bufio.Reader, ev *Event) (bool, error) {
	*ev = Event{Type: "message"}
	var data [][]byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return false, io.ErrUnexpectedEOF
			}
			return false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if data == nil {
				return false, nil
			}
			ev.Data = bytes.Join(data, []byte("\n"))
			if ev.Data == nil {
				ev.Data = []byte{}
			}
			return true, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "id":
			ev.ID = string(value)
		case "event":
			ev.Type = string(value)
		case "data":
			data = append(data, append([]byte(nil), value...))
		}
	}
}

// Rebuild asks the daemon to rebuild the ASDD manifest (a human action).
func (c *Client) Rebuild(ctx context.Context, req wire.RebuildRequest) (*wire.RebuildResponse, error) {
	var out wire.RebuildResponse
	if err := c.post(ctx, "/v1/rebuild", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
