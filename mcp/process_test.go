package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/reason"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// initProject makes a project directory with an ASDD manifest, by the
// binary.
func initProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command(testbin.Path(t), "-C", dir, "init", "--sprint", "S1").CombinedOutput(); err != nil {
		t.Fatalf("init: %v: %s", err, out)
	}
	if err := os.MkdirAll(filepath.Join(dir, "specs", "SLICE-001"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "specs", "SLICE-001", "intent.md"), []byte("# intent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// stdioSession starts `custodian -C dir mcp` and connects to it with the
// SDK's command transport, as a coding agent's client does.
func stdioSession(t *testing.T, dir string, env ...string) (*sdk.ClientSession, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), "-C", dir, "mcp")
	cmd.Env = append(os.Environ(), env...)
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// TestStdioProcess drives the built binary over stdio with the SDK's
// command transport: tools, a rejection, a resource; stdout carries only
// the protocol (the client would fail on anything else) and the process
// logs nothing when all is well.
func TestStdioProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := initProject(t)
	cs, stderr := stdioSession(t, dir)
	if got := len(toolNames(t, cs)); got != len(agentTools) {
		t.Fatalf("%d tools, want %d", got, len(agentTools))
	}
	if res := call(t, cs, "slice_add", map[string]any{"slice": "SLICE-001", "name": "auth"}); res.IsError {
		t.Fatal(text(res))
	}
	res := call(t, cs, "propose", map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.9, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{}})
	if errorCode(res) != reason.MissingUncertaintyFactors {
		t.Fatalf("propose without uncertainty: %s", text(res))
	}
	res = call(t, cs, "propose", map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.9, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{"NFRs"}})
	if res.IsError || structured(t, res)["slice"].(map[string]any)["status"] != "SPEC" {
		t.Fatalf("propose: %s", text(res))
	}
	rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "custodian://doc/" + asdd.Key})
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile(filepath.Join(dir, ".asdd", "state", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rr.Contents[0].Text != string(onDisk) {
		t.Fatalf("resource differs from the file on disk")
	}
	cs.Close()
	if s := stderr.String(); s != "" {
		t.Fatalf("stderr: %s", s)
	}
}

// TestStdioFollowsDaemon: `custodian mcp` started before the daemon sends
// its calls to the daemon once it runs (it takes the state lock for its
// lifetime, so a commit on the files would wait), and back to the files
// when it stops: nothing about the project is remembered between calls.
func TestStdioFollowsDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := initProject(t)
	cs, _ := stdioSession(t, dir)
	if res := call(t, cs, "slice_add", map[string]any{"slice": "SLICE-001", "name": "before"}); res.IsError {
		t.Fatal(text(res))
	}
	d := startServe(t, dir, "--addr", "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "slice_add", Arguments: map[string]any{"slice": "SLICE-002", "name": "during"}})
	if err != nil || res.IsError {
		t.Fatalf("while the daemon runs: %v %s", err, text(res))
	}
	d.stop(t)
	if res := call(t, cs, "slice_add", map[string]any{"slice": "SLICE-003", "name": "after"}); res.IsError {
		t.Fatal(text(res))
	}
	out := call(t, cs, "status", map[string]any{})
	if n := len(structured(t, out)["board"].(map[string]any)["slices"].([]any)); n != 3 {
		t.Fatalf("%d slices, want 3", n)
	}
	if b, err := exec.Command(testbin.Path(t), "-C", dir, "verify").CombinedOutput(); err != nil {
		t.Fatalf("verify: %v: %s", err, b)
	}
}

// daemon is `custodian serve` as a separate process.
type daemon struct {
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan error
	addr string // the TCP address it listens on, when given --addr
}

// startServe starts `custodian serve` in dir and waits until it accepts
// connections on its socket and, when args give it an --addr (port 0 for
// one the system chooses), on the TCP address its pid file announces.
func startServe(t *testing.T, dir string, args ...string) *daemon {
	t.Helper()
	out := &syncbuf.Buffer{}
	cmd := exec.Command(testbin.Path(t), append([]string{"-C", dir, "serve", "--monitor-every", "0", "--log-level", "warn"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "CUSTODIAN_TOKEN=", "CUSTODIAN_ADMIN_TOKEN=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-d.done
		}
	})
	wantTCP := false
	for i, a := range args {
		if a == "--addr" && i+1 < len(args) && args[i+1] != "" {
			wantTCP = true
		}
	}
	sock := filepath.Join(dir, ".asdd", "state", "custodian.sock")
	pidFile := filepath.Join(dir, ".asdd", "state", "custodian.pid")
	deadline := time.Now().Add(time.Minute)
	for {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			if !wantTCP {
				return d
			}
			// The pid file names the listeners once all are open.
			b, _ := os.ReadFile(pidFile)
			for l := range strings.Lines(string(b)) {
				if a, ok := strings.CutPrefix(strings.TrimSpace(l), "http://"); ok && strings.HasSuffix(l, "\n") {
					if c, err := net.Dial("tcp", a); err == nil {
						c.Close()
						d.addr = a
						return d
					}
				}
			}
		}
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("serve exited: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not answering\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *daemon) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
		if d.cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("serve exited %v\n%s", err, d.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("daemon did not stop\n%s", d.out.String())
	}
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	host  string
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	if b.host != "" {
		r.Host = b.host
	}
	return http.DefaultTransport.RoundTrip(r)
}

func httpSession(t *testing.T, url, token string) (*sdk.ClientSession, error) {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token: token}}}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestHTTP: /mcp on a running `custodian serve`, with its token rules: no
// token, no session; the agents' token gets the agents' tools; the admin
// token the human decisions too; a Host that is not loopback is refused
// (DNS rebinding); a body over 1 MiB is refused like an API body.
func TestHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := initProject(t)
	d := startServe(t, dir, "--addr", "127.0.0.1:0", "--token", "agents", "--admin-token", "humans")
	defer d.stop(t)
	url := "http://" + d.addr + "/mcp"
	if _, err := httpSession(t, url, ""); err == nil {
		t.Fatal("a session without a token")
	}
	agent, err := httpSession(t, url, "agents")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, agent); len(got) != len(agentTools) {
		t.Fatalf("agents' tools %v", got)
	}
	admin, err := httpSession(t, url, "humans")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, admin); len(got) != len(agentTools)+len(adminTools) {
		t.Fatalf("admin tools %v", got)
	}
	if res := call(t, agent, "slice_add", map[string]any{"slice": "SLICE-001", "name": "auth"}); res.IsError {
		t.Fatal(text(res))
	}
	res := call(t, agent, "propose", map[string]any{"agent": "discovery", "slice": "SLICE-001", "score": 0.5, "artifacts": map[string]any{"intent": "specs/SLICE-001/intent.md"}, "uncertainty": []any{"scope"}})
	if errorCode(res) != reason.BelowThreshold {
		t.Fatalf("halt: %s", text(res))
	}
	if res := call(t, admin, "resolve", map[string]any{"slice": "SLICE-001", "role": "TL", "rationale": "scope agreed"}); res.IsError {
		t.Fatalf("resolve with the admin token: %s", text(res))
	}

	post := func(host string, body []byte) int {
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer agents")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	initialize := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if code := post("evil.example:80", initialize); code != http.StatusForbidden {
		t.Fatalf("Host evil.example: %d, want 403", code)
	}
	big := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":%q}}`, strings.Repeat("x", 1<<20))
	if code := post("", big); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("2 MiB body: %d, want 413", code)
	}
	// An admin session's id is no key: presented with the agents' token,
	// it is refused (the session is bound to who opened it).
	hijack := func(token string) int {
		body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}`)
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Mcp-Session-Id", admin.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := hijack("agents"); code != http.StatusForbidden {
		t.Fatalf("the admin session with the agents' token: %d, want 403", code)
	}
	if code := hijack("humans"); code != http.StatusOK {
		t.Fatalf("the admin session with the admin token: %d, want 200", code)
	}
}

// nodeTools returns the directory of the npm clients' binaries (installed
// by .ci/install), with Node ≥ 22.19 first on PATH; it skips the test
// when they are missing, and fails it under CI.
func nodeTools(t *testing.T, name string) (bin string, env []string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "npm", "node_modules", ".bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (.ci/install runs npm ci in mcp/testdata/npm): %v", name, err)
		}
		t.Skipf("%s is not installed: run `npm ci --prefix mcp/testdata/npm` (as .ci/install does)", name)
	}
	return filepath.Join(dir, name), append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
}

// TestInspectorCLI: a real client, the MCP inspector's CLI mode, lists the
// tools of `custodian mcp` and calls slice_add and propose; checked by
// exit code and JSON output.
func TestInspectorCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and Node")
	}
	inspector, env := nodeTools(t, "inspector")
	dir := initProject(t)
	run := func(args ...string) (int, map[string]any) {
		t.Helper()
		cmd := exec.Command(inspector, append([]string{"--cli", testbin.Path(t), "-C", dir, "mcp"}, args...)...)
		cmd.Env = append(env, "HOME="+t.TempDir())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("inspector: %v", err)
			}
			code = ee.ExitCode()
		}
		var out map[string]any
		// The result is the first JSON value on stdout.
		dec := json.NewDecoder(bufio.NewReader(&stdout))
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("inspector %v: exit %d, output not JSON: %v\nstderr: %s", args, code, err, stderr.String())
		}
		return code, out
	}
	code, out := run("--method", "tools/list")
	if code != 0 || len(out["tools"].([]any)) != len(agentTools) {
		t.Fatalf("tools/list: exit %d, %d tools", code, len(out["tools"].([]any)))
	}
	code, out = run("--method", "tools/call", "--tool-name", "slice_add", "--tool-arg", "slice=SLICE-001", "--tool-arg", "name=auth")
	if sc, _ := out["structuredContent"].(map[string]any); code != 0 || sc["outcome"] != "accepted" {
		t.Fatalf("slice_add: exit %d: %v", code, out)
	}
	code, out = run("--method", "tools/call", "--tool-name", "propose", "--tool-arg", "agent=discovery", "--tool-arg", "slice=SLICE-001",
		"--tool-arg", "score=0.9", "--tool-arg", "artifacts={\"intent\":\"specs/SLICE-001/intent.md\"}", "--tool-arg", "uncertainty=[\"NFRs\"]")
	if sc, _ := out["structuredContent"].(map[string]any); code != 0 || sc["slice"].(map[string]any)["status"] != "SPEC" {
		t.Fatalf("propose: exit %d: %v", code, out)
	}
	// a rejection: the inspector exits non-zero, the text starts with the code
	code, out = run("--method", "tools/call", "--tool-name", "propose", "--tool-arg", "agent=spec", "--tool-arg", "slice=SLICE-001",
		"--tool-arg", "score=0.9", "--tool-arg", "artifacts={}", "--tool-arg", "uncertainty=[]")
	content, _ := out["content"].([]any)
	if code == 0 || out["isError"] != true || len(content) == 0 || !strings.HasPrefix(content[0].(map[string]any)["text"].(string), "MISSING_UNCERTAINTY_FACTORS: ") {
		t.Fatalf("rejected propose: exit %d: %v", code, out)
	}
}

// TestConformance runs the @modelcontextprotocol/conformance server
// scenarios against /mcp of a running `custodian serve`; the failures
// testdata/conformance-baseline.yml lists (each explained there) are
// expected, any other fails, and so does a listed one that passes.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary and Node")
	}
	conformance, env := nodeTools(t, "conformance")
	dir := initProject(t)
	d := startServe(t, dir, "--addr", "127.0.0.1:0", "--token", "agents")
	defer d.stop(t)
	addr := d.addr
	// The suite sends no token: a loopback proxy adds the agents' one and
	// passes everything else through as it came (the Host and Origin the
	// DNS-rebinding scenario forges reach the daemon unchanged).
	target, err := url.Parse("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
			r.Out.Header.Set("Authorization", "Bearer agents")
		},
		FlushInterval: -1,
	})
	defer proxy.Close()
	addr = strings.TrimPrefix(proxy.URL, "http://")
	baseline, err := filepath.Abs(filepath.Join("testdata", "conformance-baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []string{"server-initialize", "ping", "tools-list", "resources-list", "resources-subscribe", "dns-rebinding-protection"} {
		t.Run(sc, func(t *testing.T) {
			cmd := exec.Command(conformance, "server", "--url", "http://"+addr+"/mcp", "--scenario", sc, "--expected-failures", baseline, "-o", t.TempDir())
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", sc, err, out)
			}
		})
	}
}

// TestStdioAdminTokenCheckedByDaemon: `custodian mcp` has the human
// decisions only when the project's daemon accepts $CUSTODIAN_ADMIN_TOKEN:
// with a wrong one (or without a daemon to check it) it lists no human
// tool, and a call of one is UNAUTHORIZED and changes nothing.
func TestStdioAdminTokenCheckedByDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := initProject(t)
	d := startServe(t, dir, "--addr", "127.0.0.1:0", "--token", "agents", "--admin-token", "humans")
	defer d.stop(t)
	server := "CUSTODIAN_SERVER=http://" + d.addr
	lock := func(cs *sdk.ClientSession) any {
		return structured(t, call(t, cs, "slice_show", map[string]any{"slice": "SLICE-001"}))["slice"].(map[string]any)["lock"]
	}

	wrong, _ := stdioSession(t, dir, server, "CUSTODIAN_TOKEN=agents", "CUSTODIAN_ADMIN_TOKEN=wrong")
	if got := toolNames(t, wrong); !slices.Equal(got, agentTools) {
		t.Fatalf("tools with a wrong admin token: %v", got)
	}
	if res := call(t, wrong, "slice_add", map[string]any{"slice": "SLICE-001", "name": "auth"}); res.IsError {
		t.Fatal(text(res))
	}
	if res := call(t, wrong, "lock", map[string]any{"slice": "SLICE-001", "holder": "spec"}); res.IsError {
		t.Fatal(text(res))
	}
	if res := call(t, wrong, "force_unlock", map[string]any{"slice": "SLICE-001", "role": "TL"}); errorCode(res) != reason.Unauthorized {
		t.Fatalf("force_unlock with a wrong admin token: %s", text(res))
	}
	if lock(wrong) == nil {
		t.Fatal("the lease was broken")
	}

	// Without a daemon nothing checks the token: an agent's rights.
	alone := initProject(t)
	cs, _ := stdioSession(t, alone, "CUSTODIAN_SERVER=", "CUSTODIAN_ADMIN_TOKEN=humans")
	if got := toolNames(t, cs); !slices.Equal(got, agentTools) {
		t.Fatalf("tools without a daemon: %v", got)
	}
	if res := call(t, cs, "force_unlock", map[string]any{"slice": "SLICE-001", "role": "TL"}); errorCode(res) != reason.Unauthorized {
		t.Fatalf("force_unlock without a daemon: %s", text(res))
	}

	// The daemon's admin token opens them.
	human, _ := stdioSession(t, dir, server, "CUSTODIAN_ADMIN_TOKEN=humans")
	want := slices.Sorted(slices.Values(append(slices.Clone(agentTools), adminTools...)))
	if got := toolNames(t, human); !slices.Equal(got, want) {
		t.Fatalf("tools with the admin token: %v", got)
	}
	if res := call(t, human, "force_unlock", map[string]any{"slice": "SLICE-001", "role": "TL"}); res.IsError {
		t.Fatalf("force_unlock with the admin token: %s", text(res))
	}
	if l := lock(human); l != nil {
		t.Fatalf("the lease is still held: %v", l)
	}
}
