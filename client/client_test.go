package client

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

func TestReadEvent(t *testing.T) {
	stream := ": hello\n\nid: 7\nevent: commit\ndata: {\"a\":\ndata: 1}\n\r\n: keep-alive\n\ndata: x\n\n"
	br := bufio.NewReader(strings.NewReader(stream))
	var got []Event
	for {
		var ev Event
		ok, err := ReadEvent(br, &ev)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			got = append(got, ev)
		}
	}
	if len(got) != 2 {
		t.Fatalf("got %d events: %+v", len(got), got)
	}
	if got[0].ID != "7" || got[0].Type != "commit" || string(got[0].Data) != "{\"a\":\n1}" {
		t.Fatalf("first event %+v", got[0])
	}
	if got[1].Type != "message" || string(got[1].Data) != "x" {
		t.Fatalf("second event %+v", got[1])
	}
}

// Long lines (a commit of a big patch) are read whole.
func TestReadEventLongLine(t *testing.T) {
	data := strings.Repeat("z", 200<<10)
	br := bufio.NewReaderSize(strings.NewReader("data: "+data+"\n\n"), 4096)
	var ev Event
	ok, err := ReadEvent(br, &ev)
	if err != nil || !ok || string(ev.Data) != data {
		t.Fatalf("ok %v err %v len %d", ok, err, len(ev.Data))
	}
}

func FuzzReadEvent(f *testing.F) {
	f.Add([]byte("id: 1\nevent: commit\ndata: {}\n\n"))
	f.Add([]byte(": c\n\ndata\n\n"))
	f.Add([]byte("data: a\r\ndata: b\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		br := bufio.NewReaderSize(strings.NewReader(string(b)), 16)
		for range 1000 {
			var ev Event
			ok, err := ReadEvent(br, &ev)
			if err != nil {
				return
			}
			if ok && ev.Data == nil {
				t.Fatal("an event without data")
			}
		}
	})
}

// Error responses come back as the daemon's *reason.Error, so errors.Is and
// exit codes work as on local errors.
func TestDecodeError(t *testing.T) {
	tests := []struct {
		status int
		body   string
		code   reason.Code
		exit   int
	}{
		{423, `{"error":{"code":"SLICE_LOCKED","message":"S-1 is locked by alice"}}`, reason.SliceLocked, reason.ExitConflict},
		{422, `{"error":{"code":"BELOW_THRESHOLD","message":"0.5 < 0.7"}}`, reason.BelowThreshold, reason.ExitRejected},
		{400, `{"error":{"code":"INVALID_INPUT","message":"bad"}}`, reason.InvalidInput, reason.ExitUsage},
		{500, `{"error":{"code":"CORRUPT_STATE","message":"bad hash"}}`, reason.CorruptState, reason.ExitIntegrity},
		{500, `{"error":{"code":"INTERNAL","message":"boom"}}`, "", reason.ExitInternal},
		{502, `<html>bad gateway</html>`, "", reason.ExitInternal},
		{http.StatusUnauthorized, `{"error":{"code":"UNAUTHORIZED","message":"a bearer token is required"}}`, reason.Unauthorized, reason.ExitUnauthorized},
	}
	for _, tc := range tests {
		err := decodeError(tc.status, []byte(tc.body))
		if reason.CodeOf(err) != tc.code {
			t.Errorf("%s: code %q, want %q", tc.body, reason.CodeOf(err), tc.code)
		}
		if tc.code != "" && !errors.Is(err, tc.code) {
			t.Errorf("%s: errors.Is(%s) false", tc.body, tc.code)
		}
		if got := reason.ExitCode(err); got != tc.exit {
			t.Errorf("%s: exit %d, want %d", tc.body, got, tc.exit)
		}
	}
}

func TestNewAddresses(t *testing.T) {
	for addr, ok := range map[string]bool{
		"http://127.0.0.1:7420":          true,
		"https://custodian.example:443/": true,
		"unix:///tmp/x/custodian.sock":   true,
		"ftp://x":                        false,
		"127.0.0.1:7420":                 false,
	} {
		_, err := New(addr, Options{})
		if (err == nil) != ok {
			t.Errorf("New(%q): %v", addr, err)
		}
	}
}
