package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/store/storetest"
	"github.com/custodian-dev/custodian/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// daemon is a server over a Hold-mode file store, listening on loopback.
type daemon struct {
	dir string
	url string
	st  *file.Store
	c   *client.Client
}

func start(t *testing.T, o server.Options) *daemon { return startWith(t, o, nil) }

// startB starts a daemon for a benchmark on a project seeded with manifest.
func startB(b *testing.B, manifest []byte) *daemon {
	dir := b.TempDir()
	if err := bench.Seed(dir, manifest); err != nil {
		b.Fatal(err)
	}
	return startIn(b, dir, server.Options{})
}

func startWith(t *testing.T, o server.Options, _ []byte) *daemon {
	t.Helper()
	return startIn(t, t.TempDir(), o)
}

func startIn(t testing.TB, dir string, o server.Options) *daemon {
	t.Helper()
	st, err := file.Open(dir, file.Options{Hold: true, SnapshotInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.Root = dir
	srv := server.New(st, o)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	d := &daemon{dir: dir, url: "http://" + l.Addr().String(), st: st}
	d.c, err = client.New(d.url, client.Options{Token: o.Token, ReconnectDelay: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		d.c.Close()
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return d
}

func TestConformanceOverHTTP(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return start(t, server.Options{}).c })
}

func call(t *testing.T, method, url, token string, hdr map[string]string, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if method != "GET" && method != "HEAD" {
		req.Header.Set("Content-Type", "application/json") // as the client sends
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	http.DefaultClient.CloseIdleConnections()
	return resp.StatusCode, b
}

func errCode(t *testing.T, b []byte) reason.Code {
	t.Helper()
	var e wire.ErrorBody
	if err := json.Unmarshal(b, &e); err != nil || e.Error == nil {
		t.Fatalf("not an error body: %s", b)
	}
	return e.Error.Code
}

func TestAPI(t *testing.T) {
	d := start(t, server.Options{MaxBodyBytes: 4096, MaxDepth: 8})
	u := d.url
	const doc = "/v1/doc?key=state/doc.json"
	tests := []struct {
		name       string
		method     string
		path       string
		hdr        map[string]string
		body       string
		wantStatus int
		wantCode   reason.Code
		wantBody   string
	}{
		{"health", "GET", "/v1/health", nil, "", 200, "", `"ok":true`},
		{"missing document", "GET", doc, nil, "", 404, reason.NotFound, ""},
		{"update without create", "PUT", doc, nil, `{"value":{"a":1}}`, 404, reason.NotFound, ""},
		{"create", "PUT", doc + "&create=1", nil, `{"value":{"a":1},"actor":"t","reason":"first"}`, 200, "", `"revision":1`},
		{"read", "GET", doc, nil, "", 200, "", `"value":{"a":1}`},
		{"stale If-Match", "PUT", doc, map[string]string{"If-Match": `"0"`}, `{"value":{"a":2}}`, 409, reason.Conflict, ""},
		{"If-Match", "PUT", doc, map[string]string{"If-Match": `"1"`}, `{"value":{"a":2}}`, 200, "", `"revision":2`},
		{"patch", "PUT", doc, map[string]string{"If-Match": "2"}, `{"patch":[{"op":"add","path":"/b","value":true}]}`, 200, "", `"b":true`},
		{"patch without If-Match", "PUT", doc, nil, `{"patch":[]}`, 400, reason.InvalidInput, ""},
		{"value and patch", "PUT", doc, map[string]string{"If-Match": "3"}, `{"value":{},"patch":[]}`, 400, reason.InvalidInput, ""},
		{"unknown field", "PUT", doc, nil, `{"valeu":{}}`, 400, reason.InvalidInput, ""},
		{"malformed", "PUT", doc, nil, `{"value":`, 400, reason.InvalidInput, ""},
		{"too deep", "PUT", doc, nil, `{"value":[[[[[[[[[[1]]]]]]]]]]}`, 400, reason.InvalidInput, ""},
		{"too big", "PUT", doc, nil, `{"value":"` + strings.Repeat("x", 5000) + `"}`, 400, reason.InvalidInput, ""},
		{"bad revision", "GET", doc + "&rev=x", nil, "", 400, reason.InvalidInput, ""},
		{"at revision", "GET", doc + "&rev=1", nil, "", 200, "", `"value":{"a":1}`},
		{"history", "GET", "/v1/history?key=state/doc.json&from=2", nil, "", 200, "", `"rev":3`},
		{"keys", "GET", "/v1/keys", nil, "", 200, "", `"keys":["state/doc.json"]`},
		{"verify", "POST", "/v1/verify?key=state/doc.json", nil, "", 200, "", `"ok":true`},
		{"key escapes", "GET", "/v1/doc?key=../etc/passwd.json", nil, "", 400, reason.InvalidInput, ""},
		{"bad key", "GET", "/v1/doc?key=state/doc.txt", nil, "", 400, reason.InvalidInput, ""},
		{"unknown op", "POST", "/v1/asdd/fly", nil, `{}`, 404, reason.NotFound, ""},
		{"openapi", "GET", "/v1/openapi.json", nil, "", 200, "", `"openapi":"3.`},
		{"metrics", "GET", "/metrics", nil, "", 200, "", "custodian_commits_total 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, tc.method, u+tc.path, "", tc.hdr, tc.body)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", status, tc.wantStatus, body)
			}
			if tc.wantCode != "" {
				if c := errCode(t, body); c != tc.wantCode {
					t.Fatalf("code %s, want %s: %s", c, tc.wantCode, body)
				}
			}
			if tc.wantBody != "" && !bytes.Contains(bytes.ReplaceAll(body, []byte(": "), []byte(":")), []byte(tc.wantBody)) {
				t.Fatalf("body lacks %s: %s", tc.wantBody, body)
			}
		})
	}
}

func TestToken(t *testing.T) {
	d := start(t, server.Options{Token: "s3cret"})
	if status, _ := call(t, "GET", d.url+"/v1/keys", "", nil, ""); status != 401 {
		t.Fatalf("no token: status %d, want 401", status)
	}
	if status, _ := call(t, "GET", d.url+"/v1/keys", "wrong", nil, ""); status != 401 {
		t.Fatalf("wrong token: status %d, want 401", status)
	}
	if status, _ := call(t, "GET", d.url+"/v1/health", "", nil, ""); status != 200 {
		t.Fatalf("health needs no token: status %d", status)
	}
	if _, err := d.c.Keys(context.Background()); err != nil {
		t.Fatalf("client with token: %v", err)
	}
}

// The ASDD operations run inside the daemon, and rejections come back as
// the rules' reason codes.
func TestASDDOperations(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	c := d.c
	if _, err := c.Propose(ctx, asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.97}); reason.CodeOf(err) != reason.NotFound {
		t.Fatalf("propose before init: %v, want NOT_FOUND", err)
	}
	must := func(r *wire.OpResponse, err error) *wire.OpResponse {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	must(c.Op(ctx, "init", asdd.Init{Sprint: "S1"}))
	if err := os.MkdirAll(filepath.Join(d.dir, ".asdd/specs/login"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.dir, ".asdd/specs/login/intent.md"), []byte("# Login\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := must(c.Op(ctx, "add-slice", asdd.AddSlice{ID: "S-1", Name: "Login"}))
	if r.Slice == nil || r.Slice.Status != asdd.Discovery {
		t.Fatalf("add-slice: %+v", r)
	}
	must(c.Lock(ctx, asdd.LockSlice{Slice: "S-1", Holder: "alice", TTL: time.Hour}))
	_, err := c.Propose(ctx, asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.97})
	if !errors.Is(err, reason.SliceLocked) {
		t.Fatalf("propose on a slice locked by another: %v, want SLICE_LOCKED", err)
	}
	if reason.ExitCode(err) != reason.ExitConflict {
		t.Fatalf("exit code %d, want %d", reason.ExitCode(err), reason.ExitConflict)
	}
	must(c.Unlock(ctx, asdd.UnlockSlice{Slice: "S-1", Holder: "alice"}))
	_, err = c.Propose(ctx, asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.90,
		Artifacts: []asdd.Artifact{{Name: "intent", Path: ".asdd/specs/login/intent.md"}}})
	if !errors.Is(err, reason.MissingUncertaintyFactors) {
		t.Fatalf("score without factors: %v", err)
	}
	// The daemon hashes the artifact the agent names.
	r = must(c.Propose(ctx, asdd.Proposal{Agent: "discovery", Slice: "S-1", Score: 0.97,
		Artifacts: []asdd.Artifact{{Name: "intent", Path: ".asdd/specs/login/intent.md"}}}))
	if r.Slice.Status != asdd.Spec {
		t.Fatalf("after discovery: %s", r.Slice.Status)
	}
	must(c.Heartbeat(ctx, asdd.Beat{Agent: "spec", Status: "ACTIVE", Slice: "S-1"}))
	if sl, err := c.Slice(ctx, "S-1"); err != nil || sl.Status != asdd.Spec {
		t.Fatalf("read one slice: %+v %v", sl, err)
	}
	if _, err := c.Slice(ctx, "S-404"); !errors.Is(err, reason.NotFound) {
		t.Fatalf("read a missing slice: %v", err)
	}
	// A commit that is not an ASDD operation (a generic write) is seen by
	// the next slice read: the decoded manifest the daemon keeps is used
	// only for the revision it was committed at.
	if _, err := c.Update(ctx, asdd.Key, func(cur store.Document) (store.Change, error) {
		m, err := asdd.Decode(cur.Value)
		if err != nil {
			return store.Change{}, err
		}
		m.Slice("S-1").Name = "Login, renamed"
		b, err := asdd.Encode(m)
		return store.Change{Value: b, Actor: "t", Reason: "rename"}, err
	}); err != nil {
		t.Fatal(err)
	}
	if sl, err := c.Slice(ctx, "S-1"); err != nil || sl.Name != "Login, renamed" {
		t.Fatalf("slice after a generic write: %+v %v", sl, err)
	}
	doc, err := c.Get(ctx, asdd.Key)
	if err != nil {
		t.Fatal(err)
	}
	m, err := asdd.Decode(doc.Value)
	if err != nil {
		t.Fatal(err)
	}
	if m.Slice("S-1").Status != asdd.Spec || doc.Revision != r.Revision+2 { // the heartbeat, the rename
		t.Fatalf("manifest at %d: %+v", doc.Revision, m.Slice("S-1"))
	}
	if _, err := c.Op(ctx, "lock", asdd.LockSlice{Slice: "S-1"}); !errors.Is(err, reason.InvalidInput) {
		t.Fatalf("lock without holder: %v", err)
	}
}

// sse opens a raw watch stream.
func sse(t *testing.T, url string, lastID string) (*bufio.Reader, func()) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("watch: status %d", resp.StatusCode)
	}
	return bufio.NewReader(resp.Body), func() { resp.Body.Close(); tr.CloseIdleConnections() }
}

func nextCommit(t *testing.T, br *bufio.Reader) store.Commit {
	t.Helper()
	var ev client.Event
	for {
		ok, err := client.ReadEvent(br, &ev)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
	}
	if ev.Type != "commit" {
		t.Fatalf("event %q: %s", ev.Type, ev.Data)
	}
	var c store.Commit
	if err := json.Unmarshal(ev.Data, &c); err != nil {
		t.Fatal(err)
	}
	if ev.ID != fmt.Sprint(c.Rev) {
		t.Fatalf("event id %s for revision %d", ev.ID, c.Rev)
	}
	return c
}

func setN(n int) store.UpdateFunc {
	return func(cur store.Document) (store.Change, error) {
		return store.Change{Value: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), Actor: "t", Reason: "set"}, nil
	}
}

// A stream dropped mid-way resumes from Last-Event-ID with no gap and no
// repeat.
func TestWatchResumesFromLastEventID(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	for i := 1; i <= 5; i++ {
		if _, err := d.c.Update(ctx, "state/doc.json", setN(i), store.Create()); err != nil {
			t.Fatal(err)
		}
	}
	url := d.url + "/v1/watch?key=state/doc.json&from=0"
	br, drop := sse(t, url, "")
	for want := uint64(1); want <= 3; want++ {
		if c := nextCommit(t, br); c.Rev != want {
			t.Fatalf("got %d, want %d", c.Rev, want)
		}
	}
	drop() // the connection dies after revision 3 was seen
	for i := 6; i <= 8; i++ {
		if _, err := d.c.Update(ctx, "state/doc.json", setN(i)); err != nil {
			t.Fatal(err)
		}
	}
	br, drop = sse(t, url, "3")
	defer drop()
	for want := uint64(4); want <= 8; want++ {
		if c := nextCommit(t, br); c.Rev != want {
			t.Fatalf("after resume: got %d, want %d", c.Rev, want)
		}
	}
}

// flakyProxy forwards TCP connections to addr and cuts each one after
// limit bytes from the server.
func flakyProxy(t *testing.T, addr string, limit int64) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(out, in); out.Close() }()
			go func() { defer wg.Done(); io.CopyN(in, out, limit); in.Close(); out.Close() }()
		}
	}()
	return "http://" + l.Addr().String()
}

// Watch ordering under 64 concurrent writers (agents sending heartbeats to
// the daemon), through a proxy that keeps dropping the stream: the client
// resumes and sees every revision once, in order, each record chained to
// the one before.
func TestWatchOrderUnder64Writers(t *testing.T) {
	d := start(t, server.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const key = asdd.Key
	if _, err := d.c.Op(ctx, "init", asdd.Init{}); err != nil {
		t.Fatal(err)
	}
	const writers = 64
	each := testenv.Rounds(3, 8) // commits per writer: 8 in a soak run
	total := uint64(1 + writers*each)
	proxied, err := client.New(flakyProxy(t, strings.TrimPrefix(d.url, "http://"), 8<<10), client.Options{ReconnectDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer proxied.Close()
	type result struct {
		recs []store.Commit
		err  error
	}
	results := make([]chan result, 2)
	for i, c := range []*client.Client{d.c, proxied} {
		results[i] = make(chan result, 1)
		go func() {
			var r result
			for cm, err := range c.Watch(ctx, key, 0) {
				if err != nil {
					r.err = err
					break
				}
				r.recs = append(r.recs, cm)
				if cm.Rev == total {
					break
				}
			}
			results[i] <- r
		}()
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agents := asdd.DefaultConfig().Agents
			for i := range each {
				done := w*1000 + i // unique, so every beat changes the manifest
				if _, err := d.c.Heartbeat(ctx, asdd.Beat{Agent: agents[w%len(agents)].Name, Status: "ACTIVE", Completed: &done}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, ch := range results {
		r := <-ch
		if r.err != nil {
			t.Fatalf("watcher %d: %v", i, r.err)
		}
		if uint64(len(r.recs)) != total {
			t.Fatalf("watcher %d saw %d commits, want %d", i, len(r.recs), total)
		}
		for j, c := range r.recs {
			if c.Rev != uint64(j+1) || (j > 0 && c.Prev != r.recs[j-1].Hash) {
				t.Fatalf("watcher %d: revision %d at position %d (chain ok: %v)", i, c.Rev, j, j == 0 || c.Prev == r.recs[j-1].Hash)
			}
		}
	}
}
