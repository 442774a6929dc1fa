package client

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/jsonscan"
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
		{http.StatusUnauthorized, `{"error":{"code":"UNAUTHORIZED","message":"a bearer token is required"}}`, "UNAUTHORIZED", reason.ExitUnauthorized},
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

// The daemon's operation responses are encoded by hand, byte for byte as
// encoding/json encodes the struct.
func TestOpResponseMatchesMarshal(t *testing.T) {
	type plain OpResponse
	n := 3
	for _, r := range []OpResponse{
		{},
		{Revision: 7, Summary: "heartbeat from spec_agent (ACTIVE)", Events: []asdd.Event{{Type: "heartbeat", Agent: "spec", Data: map[string]any{"status": "ACTIVE", "n": 2}}}},
		{Revision: 9, Summary: "<halt> & more", Events: []asdd.Event{}, Verdict: &reason.Error{Code: reason.BelowThreshold, Message: "0.5 < 0.7"},
			Slice: &asdd.Slice{SliceID: "SLICE-001", Status: "SPEC"}, Warnings: []string{"w1", "w\"2"},
			Effects: []EffectSummary{{Kind: "marker", Path: "docs/x.md"}}},
		{Revision: 1, Slice: &asdd.Slice{SliceID: "S", Tasks: []asdd.Task{{ID: "T1", Wave: n, Title: "a<b"}}}},
	} {
		want, err := json.Marshal(plain(r))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.MarshalJSON()
		if err != nil || string(got) != string(want) {
			t.Errorf("MarshalJSON = %s, %v\nwant %s", got, err, want)
		}
		var encoded []json.RawMessage
		for _, e := range r.Events {
			eb, _ := e.MarshalJSON()
			encoded = append(encoded, eb)
		}
		if r.Events != nil {
			if app, err := r.AppendJSON(nil, append([]json.RawMessage{}, encoded...)); err != nil || string(app) != string(want) {
				t.Errorf("AppendJSON with encoded events = %s, %v\nwant %s", app, err, want)
			}
		}
		var back OpResponse
		if err := json.Unmarshal(got, &back); err != nil || back.Revision != r.Revision || back.Summary != r.Summary {
			t.Errorf("round trip of %s: %+v, %v", got, back, err)
		}
		// The daemon's usual answers take the decoder's fast path.
		if r.Verdict == nil && r.Slice == nil && r.Warnings == nil && r.Effects == nil {
			if p := (opParser{*jsonscan.New(got)}); !p.response(&back) {
				t.Errorf("%s is not read by the fast path", got)
			}
		}
	}
}

// OpResponse's decoder gives exactly what encoding/json gives, or the same
// error, on any input.
func FuzzOpResponseDecode(f *testing.F) {
	for _, s := range []string{
		`{"revision":2,"summary":"heartbeat from spec_agent (ACTIVE)","events":[{"type":"heartbeat","agent":"spec","data":{"status":"ACTIVE"}}]}`,
		`{"revision":9,"summary":"x","events":[],"verdict":{"code":"BELOW_THRESHOLD","message":"m"}}`,
		`{"revision":1,"summary":"","events":null}`,
		` { "revision" : 18446744073709551615 , "events" : [ { "type" : "t" , "slice" : "S" , "data" : { "a" : -0.5e3 , "b" : true , "c" : null , "d" : false } } ] } `,
		`{"revision":1,"revision":2}`, `{"Revision":1}`, `{"revision":-0}`, `{"revision":1e2}`, `null`, `{"summary":"\u00e9\n"}`,
		`{"events":[{"data":{"n":1e400}}]}`, `{"events":[{"data":{"x":[1]}}]}`, `{"summary":"` + "\xff" + `"}`, `{}`, `{"events":[{}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		type plain OpResponse
		var want plain
		werr := json.Unmarshal(b, &want)
		var got OpResponse
		gerr := got.UnmarshalJSON(b)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: encoding/json %v, UnmarshalJSON %v", b, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(OpResponse(want), got) {
			t.Fatalf("%q:\nencoding/json %#v\nUnmarshalJSON %#v", b, want, got)
		}
	})
}

// A heartbeat's request body is byte for byte json.Marshal's.
func FuzzEncodeOp(f *testing.F) {
	f.Add("spec_agent", "ACTIVE", "", int64(3), true, false, true)
	f.Add("<&>\u2028", "\xff", "SLICE-1", int64(-1), false, true, false)
	f.Fuzz(func(t *testing.T, agent, status, slice string, n int64, wave, completed, remaining bool) {
		v := int(n)
		b := asdd.Beat{Agent: agent, Status: status, Slice: slice}
		if wave {
			b.Wave = &v
		}
		if completed {
			b.Completed = &v
		}
		if remaining {
			b.Remaining = &v
		}
		want, _ := json.Marshal(b)
		got, err := encodeOp(b)
		if err != nil || string(got) != string(want) {
			t.Fatalf("encodeOp %s, %v; json.Marshal %s", got, err, want)
		}
	})
}
