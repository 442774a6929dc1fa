package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/server"
)

// At debug level each request is logged with its status; at info level
// nothing is, and answers are the same either way. A panicking handler
// answers a JSON 500 and is logged.
func TestRequestLog(t *testing.T) {
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			panic("kaboom")
		}
		http.NotFound(w, r)
	})
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		var log syncbuf.Buffer
		srv := server.New(nil, server.Options{UI: ui, Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: level}))})
		get := func(path string) (int, string) {
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			b, _ := io.ReadAll(rec.Result().Body)
			return rec.Code, string(b)
		}
		if code, body := get("/v1/health"); code != http.StatusOK || !strings.Contains(body, "ok") {
			t.Fatalf("%v: health %d %s", level, code, body)
		}
		if code, _ := get("/nothing"); code != http.StatusNotFound {
			t.Fatalf("%v: /nothing %d", level, code)
		}
		code, body := get("/boom")
		if code != http.StatusInternalServerError || !strings.Contains(body, `"code":"INTERNAL"`) {
			t.Fatalf("%v: panic answered %d %s", level, code, body)
		}
		out := log.String()
		if !strings.Contains(out, "panic in handler") || !strings.Contains(out, "kaboom") {
			t.Fatalf("%v: panic not logged: %s", level, out)
		}
		logged := strings.Contains(out, "path=/v1/health status=200") && strings.Contains(out, "path=/nothing status=404") &&
			strings.Contains(out, "path=/boom status=500")
		if level == slog.LevelDebug && !logged {
			t.Fatalf("debug log lacks the requests' lines:\n%s", out)
		}
		if level == slog.LevelInfo && strings.Contains(out, "msg=request") {
			t.Fatalf("info log has request lines:\n%s", out)
		}
	}
}
