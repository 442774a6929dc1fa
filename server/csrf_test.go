package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/server"
)

// A web page in the user's browser can send "simple" requests to the
// loopback daemon without a CORS preflight: a text/plain, form or multipart
// body, or no body. None of them may change anything; a JSON request still
// does. And on TCP without a token, a Host header that is not loopback (DNS
// rebinding) is refused.
func TestCrossSiteRequestsRefused(t *testing.T) {
	d := start(t, server.Options{})
	quick := `{"ID":"Q-1","Description":"fix"}`
	init := `{"Sprint":"s"}`
	tests := []struct {
		name, method, path, ctype, host, body string
		want                                  int
	}{
		{"text/plain form post", "POST", "/v1/asdd/init", "text/plain", "", init, http.StatusUnsupportedMediaType},
		{"form-urlencoded", "POST", "/v1/asdd/init", "application/x-www-form-urlencoded", "", "a=b", http.StatusUnsupportedMediaType},
		{"multipart", "POST", "/v1/asdd/init", "multipart/form-data; boundary=x", "", "--x--", http.StatusUnsupportedMediaType},
		{"no content type", "POST", "/v1/asdd/init", "", "", init, http.StatusUnsupportedMediaType},
		{"no body no type", "POST", "/v1/verify?key=x.json", "", "", "", http.StatusUnsupportedMediaType},
		{"put text/plain", "PUT", "/v1/doc?key=a.json&create=1", "text/plain;charset=utf-8", "", `{"Value":{}}`, http.StatusUnsupportedMediaType},
		{"delete no type", "DELETE", "/v1/doc?key=a.json", "", "", "", http.StatusUnsupportedMediaType},
		{"malformed type", "POST", "/v1/asdd/init", "application/json; =", "", init, http.StatusUnsupportedMediaType},
		{"rebinding host", "POST", "/v1/asdd/init", "application/json", "evil.example:7420", init, http.StatusForbidden},
		{"rebinding host on a read", "GET", "/v1/keys", "", "evil.example", "", http.StatusForbidden},
		{"json", "POST", "/v1/asdd/init", "application/json", "", init, http.StatusOK},
		{"json with charset, localhost", "POST", "/v1/asdd/quick", "application/json; charset=utf-8", "localhost:7420", quick, http.StatusOK},
		{"json-patch type, ::1", "POST", "/v1/asdd/quick", "application/json-patch+json", "[::1]:7420", strings.Replace(quick, "Q-1", "Q-2", 1), http.StatusOK},
		{"read, 127.0.0.2", "GET", "/v1/keys", "", "127.0.0.2", "", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.ctype != "" {
				hdr["Content-Type"] = tc.ctype
			}
			code, b := callRaw(t, tc.method, d.url+tc.path, tc.host, hdr, tc.body)
			if code != tc.want {
				t.Fatalf("%d, want %d: %s", code, tc.want, b)
			}
			if code >= 400 {
				var e struct {
					Error struct{ Code, Message string }
				}
				if err := json.Unmarshal(b, &e); err != nil || e.Error.Code != "INVALID_INPUT" || e.Error.Message == "" {
					t.Fatalf("refusal body %s (%v), want INVALID_INPUT with a message", b, err)
				}
			}
		})
	}
	// Nothing the refused requests carried reached the state.
	keys, err := d.c.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k == "a.json" {
			t.Errorf("a refused PUT created %s", k)
		}
	}
}

// With a token, any Host is accepted (the token is what a rebinding page
// lacks), but a state change still needs a JSON body.
func TestCrossSiteWithToken(t *testing.T) {
	d := start(t, server.Options{Token: "tok"})
	code, b := callRaw(t, "GET", d.url+"/v1/keys", "custodian.example.org", map[string]string{"Authorization": "Bearer tok"}, "")
	if code != http.StatusOK {
		t.Fatalf("read with token and a remote Host: %d %s", code, b)
	}
	code, b = callRaw(t, "POST", d.url+"/v1/asdd/init", "", map[string]string{"Authorization": "Bearer tok", "Content-Type": "text/plain"}, `{"Sprint":"s"}`)
	if code != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain with token: %d %s", code, b)
	}
}

// callRaw is call with an explicit Host header and no default content type.
func callRaw(t *testing.T, method, url, host string, hdr map[string]string, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
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
