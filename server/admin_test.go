package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store/file"
)

// The human actions need the admin token over TCP; everything else does
// not; a wrong token is refused like none.
func TestAdminTokenGuardsHumanActions(t *testing.T) {
	d := start(t, server.Options{AdminToken: "adm-secret"})
	u := d.url
	if err := os.MkdirAll(filepath.Join(d.dir, "specs/S-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.dir, "specs/S-1/intent.md"), []byte("# Login\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, b := call(t, "POST", u+"/v1/asdd/init", "", nil, `{"Sprint":"S1"}`); code != http.StatusUnauthorized {
		t.Fatalf("init (setting up the project is a human's decision) without a token: %d %s", code, b)
	}
	if code, b := call(t, "POST", u+"/v1/asdd/init", "adm-secret", nil, `{"Sprint":"S1"}`); code != http.StatusOK {
		t.Fatalf("init with the admin token: %d %s", code, b)
	}
	for _, step := range []struct{ path, body string }{
		{"/v1/asdd/add-slice", `{"ID":"S-1","Name":"Login"}`},
		{"/v1/asdd/propose", `{"Agent":"discovery","Slice":"S-1","Score":0.60,"Uncertainty":["vague"],"Artifacts":[{"Name":"intent","Path":"specs/S-1/intent.md"}]}`},
	} {
		if code, b := call(t, "POST", u+step.path, "", nil, step.body); code != http.StatusOK {
			t.Fatalf("%s without a token: %d %s", step.path, code, b)
		}
	}
	resolve := `{"Slice":"S-1","Role":"TL","Rationale":"clarified"}`
	tests := []struct {
		name, op, token, body string
		want                  int
	}{
		{"resolve without token", "resolve", "", resolve, http.StatusUnauthorized},
		{"resolve with a wrong token", "resolve", "nope", resolve, http.StatusUnauthorized},
		{"approve without token", "approve", "", resolve, http.StatusUnauthorized},
		{"clear-review without token", "clear-review", "", `{"Role":"TL","Rationale":"ok"}`, http.StatusUnauthorized},
		{"forced unlock without token", "unlock", "", `{"Slice":"S-1","Force":true,"Role":"TL"}`, http.StatusUnauthorized},
		{"correct-assumption without token", "correct-assumption", "", `{"Slice":"S-1","Index":0,"Role":"PO","Correction":"x"}`, http.StatusUnauthorized},
		{"resolve spelled with an escape, without token", "res%6flve", "", resolve, http.StatusUnauthorized},
		{"resolve with the admin token", "resolve", "adm-secret", resolve, http.StatusOK},
		{"heartbeat needs no token", "heartbeat", "", `{"Agent":"spec","Status":"ACTIVE"}`, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, b := call(t, "POST", u+"/v1/asdd/"+tc.op, tc.token, nil, tc.body)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %s", code, tc.want, b)
			}
			if tc.want == http.StatusUnauthorized {
				if got := errCode(t, b); got != "UNAUTHORIZED" {
					t.Errorf("code %s", got)
				}
				if !strings.Contains(string(b), "admin token") {
					t.Errorf("the refusal does not say what is missing: %s", b)
				}
			}
		})
	}
	// The accepted resolve (rerun) returned the halted slice to its phase.
	code, b := call(t, "GET", u+"/v1/asdd/slices/S-1", "", nil, "")
	if code != http.StatusOK || !strings.Contains(string(b), `"status":"DISCOVERY"`) {
		t.Fatalf("slice after resolve: %d %s", code, b)
	}
	// An agent reports a failure it found (custodian halt) without the
	// admin token: it is an agent's operation, not a raw write.
	if code, b := call(t, "POST", u+"/v1/asdd/halt", "", nil, `{"Agent":"validation","Slice":"S-1","Mode":"HALLUCINATED_SPEC_SECTION","Reason":"undefined term"}`); code != http.StatusOK || !strings.Contains(string(b), `"outcome":"halted"`) {
		t.Fatalf("halt without the admin token: %d %s", code, b)
	}
	// A rollback is a human's: refused without the admin token.
	if code, b := call(t, "POST", u+"/v1/rollback", "", nil, `{"key":".asdd/state/manifest.json","to":2,"reason":"undo"}`); code != http.StatusUnauthorized {
		t.Fatalf("rollback without the admin token: %d %s", code, b)
	}
	if code, b := call(t, "POST", u+"/v1/rollback", "adm-secret", nil, `{"key":".asdd/state/manifest.json","to":2,"reason":"undo"}`); code != http.StatusOK {
		t.Fatalf("rollback with the admin token: %d %s", code, b)
	}
}

// With an agents' token too, the admin token is accepted wherever the
// agents' one is, and the agents' token does not open the human actions.
func TestAdminTokenWithAgentToken(t *testing.T) {
	d := start(t, server.Options{Token: "agents", AdminToken: "adm"})
	u := d.url
	if code, b := call(t, "GET", u+"/v1/keys", "adm", nil, ""); code != http.StatusOK {
		t.Fatalf("keys with the admin token: %d %s", code, b)
	}
	if code, _ := call(t, "GET", u+"/v1/keys", "", nil, ""); code != http.StatusUnauthorized {
		t.Fatalf("keys without a token: %d", code)
	}
	if code, b := call(t, "POST", u+"/v1/asdd/resolve", "agents", nil, `{"Slice":"S","Role":"TL","Rationale":"x"}`); code != http.StatusUnauthorized {
		t.Fatalf("resolve with the agents' token: %d %s", code, b)
	}
}

// The unix socket needs no agents' token, but it gives agent rights: the
// agent's sandbox reaches it, so a human decision on it needs the admin
// token as over TCP.
func TestUnixSocketGivesAgentRights(t *testing.T) {
	dir := t.TempDir()
	st, err := file.Open(dir, file.Options{Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := server.New(st, server.Options{AdminToken: "adm", Logger: slog.New(slog.DiscardHandler), Root: dir})
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
	hc := &http.Client{Transport: tr}
	post := func(op, token, body string) (int, string) {
		req, err := http.NewRequest("POST", "http://unix/v1/asdd/"+op, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := post("init", "", `{}`); code != http.StatusUnauthorized || !strings.Contains(b, "UNAUTHORIZED") {
		t.Fatalf("init over the unix socket without the admin token: %d %s", code, b)
	}
	if code, b := post("init", "adm", `{}`); code != http.StatusOK {
		t.Fatalf("init over the unix socket with the admin token: %d %s", code, b)
	}
	if code, b := post("add-slice", "", `{"ID":"S-1"}`); code != http.StatusOK {
		t.Fatalf("an agent's operation over the unix socket: %d %s", code, b)
	}
	if code, b := post("resolve", "", `{"Slice":"S-1","Role":"TL","Rationale":"x"}`); code != http.StatusUnauthorized {
		t.Fatalf("resolve over the unix socket without the admin token: %d %s", code, b)
	}
	code, b := post("resolve", "adm", `{"Slice":"S-1","Role":"TL","Rationale":"x"}`)
	if code == http.StatusUnauthorized {
		t.Fatalf("resolve over the unix socket with the admin token refused: %s", b)
	}
	// The slice is not halted: the rules answer, not the token check.
	if !strings.Contains(b, string(reason.InvalidTransition)) && !strings.Contains(b, `"code"`) {
		t.Fatalf("unexpected answer %d %s", code, b)
	}
}

// With an agents' token, the dashboard's page and assets load without it
// (they hold no state); what the page reads does not.
func TestTokenLeavesTheDashboardPageOpen(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ui "+r.URL.Path)
	})
	d := start(t, server.Options{Token: "agents", AdminToken: "adm", UI: ui})
	tests := []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/", "", http.StatusOK},
		{"GET", "/assets/app.js", "", http.StatusOK},
		{"HEAD", "/assets/style.css", "", http.StatusOK},
		{"GET", "/board.json", "", http.StatusUnauthorized},
		{"GET", "/assets/../board.json", "", http.StatusUnauthorized},
		{"POST", "/", "", http.StatusUnauthorized},
		{"GET", "/v1/keys", "", http.StatusUnauthorized},
		{"GET", "/board.json", "agents", http.StatusOK},
		{"GET", "/board.json", "adm", http.StatusOK},
	}
	for _, tc := range tests {
		req, err := http.NewRequest(tc.method, d.url+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = tc.path // keep "/../" as sent
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s (token %q): %d, want %d", tc.method, tc.path, tc.token, resp.StatusCode, tc.want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// Over TCP a raw write of any document skips the rules its agents'
// operations run, so it needs the admin token like the human actions.
func TestAdminTokenGuardsManifestWrites(t *testing.T) {
	d := start(t, server.Options{Token: "agents", AdminToken: "adm"})
	put := "/v1/doc?create=1&key="
	manifest := `{"value":{"sprint":"S9","slices":[]}}`
	tests := []struct {
		name, key, token, body string
		want                   int
	}{
		{"manifest with the agents' token", ".asdd/state/manifest.json", "agents", manifest, http.StatusUnauthorized},
		{"manifest after another key parameter", "other.json&key=.asdd/state/manifest.json", "agents", `{"value":{}}`, http.StatusUnauthorized},
		{"another document with the agents' token", "notes/a.json", "agents", `{"value":{"a":1}}`, http.StatusUnauthorized},
		{"the task manifest with the agents' token", ".impl/manifest.json", "agents", `{"value":{"tasks":[]}}`, http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, b := call(t, "PUT", d.url+put+tc.key, tc.token, nil, tc.body)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %s", code, tc.want, b)
			}
			if code == http.StatusUnauthorized && !strings.Contains(string(b), "admin token") {
				t.Errorf("the refusal does not say what is missing: %s", b)
			}
		})
	}
	if code, b := call(t, "GET", d.url+"/v1/doc?key=.asdd/state/manifest.json", "agents", nil, ""); code != http.StatusNotFound {
		t.Fatalf("the refused write created the manifest: %d %s", code, b)
	}
	// With the admin token the write reaches the store (and its validators).
	code, b := call(t, "PUT", d.url+put+".asdd/state/manifest.json", "adm", nil, `{"value":{"slices":"none"}}`)
	if code != http.StatusBadRequest || errCode(t, b) != reason.InvalidInput {
		t.Fatalf("admin write of an invalid manifest: %d %s", code, b)
	}
}

// Every PUT /v1/doc runs the document's domain rules, whatever the token:
// an agent writing the task manifest through the daemon cannot reopen a
// merged task (update-status refuses it, and so does the raw write).
func TestPutKeepsDomainRules(t *testing.T) {
	d := start(t, server.Options{})
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	m, err := impl.New("docs/plans/001.md", "001", "Plan", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddTask(impl.NewTask{ID: "T-1", Phase: 1, Description: "one"}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := m.UpdateStatus(impl.StatusUpdate{ID: "T-1", Status: impl.Merged}, now); err != nil {
		t.Fatal(err)
	}
	put := func(v []byte, ifMatch string, create bool) (int, []byte) {
		t.Helper()
		body, err := json.Marshal(map[string]any{"value": json.RawMessage(v), "actor": "agent"})
		if err != nil {
			t.Fatal(err)
		}
		path := "/v1/doc?key=" + impl.Key
		if create {
			path += "&create=1"
		}
		return call(t, "PUT", d.url+path, "", map[string]string{"If-Match": ifMatch}, string(body))
	}
	merged, err := impl.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	if code, b := put(merged, "0", true); code != http.StatusOK {
		t.Fatalf("create: %d %s", code, b)
	}
	m.Tasks[0].Status = impl.Pending
	reopened, err := impl.Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	code, b := put(reopened, "1", false)
	if code < 400 || errCode(t, b) != reason.InvalidTransition || !strings.Contains(string(b), "T-1") {
		t.Fatalf("reopening a merged task: %d %s, want INVALID_TRANSITION naming T-1", code, b)
	}
	if code, b := call(t, "GET", d.url+"/v1/doc?key="+impl.Key, "", nil, ""); code != http.StatusOK || !strings.Contains(string(b), `"revision":1`) {
		t.Fatalf("the refused write changed the document: %d %s", code, b)
	}
}
