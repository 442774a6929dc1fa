package manifestenc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/store"
)

var (
	fixedNow = time.Date(2026, 4, 20, 14, 0, 0, 0, time.UTC)
	agents   = []string{"discovery", "spec", "validation", "domain", "design", "task_planning", "implementation", "qa", "refactor", "security", "devops", "observability", "knowledge"}
)

func readSeed(f *testing.F) []byte {
	raw, err := os.ReadFile("../../../asdd/testdata/seed000.json")
	if err != nil {
		f.Fatal(err)
	}
	return raw
}

// Encoding, step by step (Next), the manifests a chain of operations makes
// (asdd.ApplyFinalized on its own results, as the application layer
// chains them) gives exactly what a full encoding gives (Bytes, Len and
// WriteTo agree with json.Marshal), and the patch Next returns turns the
// previous value into the next one. The operations add slices, beat on
// them, lock and unlock them, add tasks to them and quick-fix; a restart
// now and then decodes the manifest again (no shared structure).
func TestPropertyEncodedNext(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { propertyEncodedNext(t, NewEncoded) })
}

// A deferred encoding (the slices encoded only when asked for, as the CLI
// decodes the manifest) makes the same documents and patches, from its
// first Next on.
func TestPropertyEncodedNextDeferred(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) { propertyEncodedNext(t, NewEncodedDeferred) })
}

func propertyEncodedNext(t *rapid.T, newEncoded func(*asdd.Manifest) (*Encoded, error)) {
	cfg := asdd.DefaultConfig()
	{
		m := asdd.New()
		m.Extra = asdd.Extra(`{"zz_tool": { "kept" : true }}`)
		e, err := newEncoded(m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		checkEncoded(t, e, want)
		now := fixedNow
		ids := []string{"S0"}
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			if rapid.IntRange(0, 15).Draw(t, "restart") == 0 {
				raw, _ := asdd.Encode(e.Manifest)
				dm, err := asdd.Decode(raw)
				if err != nil {
					t.Fatal(err)
				}
				if e, err = newEncoded(dm); err != nil {
					t.Fatal(err)
				}
			}
			id := rapid.SampledFrom(ids).Draw(t, "id")
			agent := rapid.SampledFrom(agents).Draw(t, "agent")
			var op asdd.Op
			switch rapid.IntRange(0, 7).Draw(t, "kind") {
			case 0, 1:
				op = asdd.AddSlice{ID: fmt.Sprintf("S%d", len(ids)), Name: "<" + id + "> & é"}
			case 2, 3:
				n := rapid.IntRange(0, 5).Draw(t, "n")
				op = asdd.Beat{Agent: agent, Slice: rapid.SampledFrom([]string{"", id}).Draw(t, "on"), Completed: &n}
			case 4:
				op = asdd.LockSlice{Slice: id, Holder: agent, TTL: time.Duration(rapid.IntRange(1, 600).Draw(t, "ttl")) * time.Second}
			case 5:
				op = asdd.UnlockSlice{Slice: id, Holder: agent}
			case 6:
				op = asdd.AddTask{Slice: id, Title: "task " + agent}
			case 7:
				op = asdd.Quick{Description: "fix " + id}
			}
			now = now.Add(time.Duration(rapid.IntRange(-30, 900).Draw(t, "clock")) * time.Second)
			out, err := asdd.ApplyFinalized(e.Manifest, op, cfg, now)
			if err != nil {
				continue
			}
			for _, ev := range out.Events {
				if ev.Type == "slice_added" || ev.Type == "quick_fix" {
					ids = append(ids, ev.Slice)
				}
			}
			out.Manifest.Revision = e.Manifest.Revision + 1
			ne, patch, err := e.Next(out.Manifest)
			_, fullErr := asdd.Encode(out.Manifest)
			if (err == nil) != (fullErr == nil) {
				t.Fatalf("%T: Next error %v, Encode error %v", op, err, fullErr)
			}
			if err != nil {
				continue
			}
			want, err := json.Marshal(out.Manifest)
			if err != nil {
				t.Fatal(err)
			}
			checkEncoded(t, ne, want)
			if patch == nil {
				t.Fatalf("%T: no patch for an Apply result", op)
			}
			var ops []patchOp
			if err := json.Unmarshal(patch, &ops); err != nil {
				t.Fatalf("%T: patch %s: %v", op, patch, err)
			}
			if re, _ := json.Marshal(ops); string(re) != string(patch) {
				t.Fatalf("%T: patch\n%s\njson.Marshal writes\n%s", op, patch, re)
			}
			got, err := store.ApplyPatch(e.Bytes(), patch)
			if err != nil {
				t.Fatalf("%T: patch %s: %v", op, patch, err)
			}
			if gs, ws := mustSum(t, got), mustSum(t, want); gs != ws {
				t.Fatalf("%T: patch %s gives\n%s\nwant\n%s", op, patch, got, want)
			}
			e = ne
		}
	}
}

// A heartbeat member is encoded as json.Marshal encodes it in a map.
func FuzzEncodeMemberHeartbeat(f *testing.F) {
	f.Add("k", "2026-11-22T04:25:02Z", "ACTIVE", "", 3, `{"a":1}`)
	f.Add("a/b<>", "", "<&>", "SLICE-001", -1, "")
	f.Fuzz(func(t *testing.T, key, last, status, slice string, n int, extra string) {
		h := asdd.Heartbeat{LastExecution: last, Status: status, CurrentSlice: slice}
		if n >= 0 {
			h.CurrentWave = &n
		}
		if json.Valid([]byte(extra)) && extra != "" {
			h.Extra = asdd.Extra(`{"zz":` + extra + `}`)
		}
		mb, err := encodeMember(key, &h)
		if err != nil {
			t.Fatal(err)
		}
		wm, _ := json.Marshal(map[string]*asdd.Heartbeat{key: &h})
		if want := string(wm[1 : len(wm)-1]); string(mb.enc) != want {
			t.Fatalf("member %s, json.Marshal %s", mb.enc, want)
		}
	})
}

// A changed slice that breaks the schema is refused by Next, naming it.
func TestEncodedNextValidatesChangedSlice(t *testing.T) {
	m := asdd.New()
	m.Slices = append(m.Slices, &asdd.Slice{SliceID: "S1", Status: asdd.Spec})
	e, err := NewEncoded(m)
	if err != nil {
		t.Fatal(err)
	}
	next := *m
	next.Slices = []*asdd.Slice{&asdd.Slice{SliceID: "S1", Status: asdd.Spec, CCS: ptr(1.5)}}
	if _, _, err := e.Next(&next); err == nil || !strings.Contains(err.Error(), "/slices/0/ccs") {
		t.Fatalf("Next accepted a CCS of 1.5 or did not name it: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

// checkEncoded fails unless e's WriteTo (run first, so that it streams the
// parts), Bytes and Len all give want.
func checkEncoded(t fataler, e *Encoded, want []byte) {
	t.Helper()
	var buf bytes.Buffer
	n, err := e.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v; wrote %d bytes", n, err, buf.Len())
	}
	if buf.String() != string(want) {
		t.Fatalf("WriteTo wrote\n%s\nwant\n%s", buf.Bytes(), want)
	}
	if e.Len() != len(want) {
		t.Fatalf("Len = %d, want %d", e.Len(), len(want))
	}
	if got := e.Bytes(); string(got) != string(want) {
		t.Fatalf("Bytes =\n%s\nwant\n%s", got, want)
	}
	buf.Reset()
	if n, err := e.WriteTo(&buf); err != nil || n != int64(len(want)) || buf.String() != string(want) {
		t.Fatalf("WriteTo after Bytes = %d, %v, %q", n, err, buf.Bytes())
	}
	for i := range e.Manifest.Slices {
		w, _ := json.Marshal(e.Manifest.Slices[i])
		if string(e.Slice(i)) != string(w) {
			t.Fatalf("Slice(%d) = %s, want %s", i, e.Slice(i), w)
		}
	}
}

// fataler is what checkEncoded needs of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Heartbeats added, replaced and removed under keys that need escaping
// (in JSON, HTML-safe JSON and JSON pointers) are encoded in
// json.Marshal's key order, and the patch names them correctly.
func TestEncodedNextHeartbeatKeys(t *testing.T) {
	hb := func(status string) *asdd.Heartbeat {
		return &asdd.Heartbeat{LastExecution: "2026-04-20T14:00:00Z", Status: status}
	}
	keep := hb(asdd.HeartbeatIdle)
	base := map[string]*asdd.Heartbeat{"b/c": hb(asdd.HeartbeatActive), "a~1": hb(asdd.HeartbeatIdle), "<x>": keep, "é": hb(asdd.HeartbeatIdle), "m": hb(asdd.HeartbeatIdle)}
	cases := []struct {
		name string
		edit func(map[string]*asdd.Heartbeat)
	}{
		{"none", func(map[string]*asdd.Heartbeat) {}},
		{"replace one", func(m map[string]*asdd.Heartbeat) { m["b/c"] = hb(asdd.HeartbeatIdle) }},
		{"replace all", func(m map[string]*asdd.Heartbeat) {
			for k := range m {
				m[k] = hb(asdd.HeartbeatActive)
			}
		}},
		{"add first", func(m map[string]*asdd.Heartbeat) { m[" "] = hb(asdd.HeartbeatActive) }},
		{"add middle and last", func(m map[string]*asdd.Heartbeat) {
			m["b"] = hb(asdd.HeartbeatActive)
			m["zz&"] = hb(asdd.HeartbeatIdle)
		}},
		{"remove one", func(m map[string]*asdd.Heartbeat) { delete(m, "a~1") }},
		{"remove all", func(m map[string]*asdd.Heartbeat) { clear(m) }},
		{"add, replace and remove", func(m map[string]*asdd.Heartbeat) {
			delete(m, "<x>")
			delete(m, "é")
			m["m"] = hb(asdd.HeartbeatActive)
			m["a"] = hb(asdd.HeartbeatActive)
			m["n"] = keep
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := asdd.New()
			m.AgentHeartbeats = maps.Clone(base)
			e, err := NewEncoded(m)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(m)
			checkEncoded(t, e, want)
			next := *m
			next.AgentHeartbeats = maps.Clone(base)
			c.edit(next.AgentHeartbeats)
			next.Revision++
			ne, patch, err := e.Next(&next)
			if err != nil {
				t.Fatal(err)
			}
			want, _ = json.Marshal(&next)
			checkEncoded(t, ne, want)
			got, err := store.ApplyPatch(e.Bytes(), patch)
			if err != nil {
				t.Fatalf("patch %s: %v", patch, err)
			}
			if gs, ws := mustSum(t, got), mustSum(t, want); gs != ws {
				t.Fatalf("patch %s gives\n%s\nwant\n%s", patch, got, want)
			}
		})
	}
}

// The unknown members and every part are written as json.Marshal writes
// them: compacted, with <, > and & escaped; an empty manifest (no slices,
// no heartbeats, nil maps) too.
func TestNewEncodedMatchesMarshal(t *testing.T) {
	big := strings.Repeat("long name <&> ", 5000) // a part larger than WriteTo's buffer
	cases := map[string]*asdd.Manifest{
		"empty":     asdd.New(),
		"nil parts": {},
		"extra": {Extra: asdd.Extra("{\"zz\": { \"a\" : [ 1 , \"<&>\u2028\" ] } , \"aa\": null}"),
			ProjectContext: asdd.ProjectContext{CurrentSprint: "<s>", Extra: asdd.Extra(`{"k":"&"}`)}},
		"big": {Slices: []*asdd.Slice{&asdd.Slice{SliceID: "S1", Name: big}, &asdd.Slice{SliceID: "S2"}, &asdd.Slice{SliceID: "S3", Name: big}},
			AgentHeartbeats: map[string]*asdd.Heartbeat{"a": {Status: "x"}}, Revision: 18446744073709551615},
	}
	for name, m := range cases {
		t.Run(name, func(t *testing.T) {
			e, err := NewEncoded(m)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			checkEncoded(t, e, want)
		})
	}
}

// WriteTo stops at the first failed write and reports how much was
// written; a short write without an error is io.ErrShortWrite.
func TestEncodedWriteToErrors(t *testing.T) {
	m := asdd.New()
	for i := range 2000 {
		m.Slices = append(m.Slices, &asdd.Slice{SliceID: fmt.Sprintf("S%04d", i), Name: "slice"})
	}
	want, _ := json.Marshal(m)
	boom := errors.New("disk full")
	for _, limit := range []int{0, 1, 40000, len(want) - 1} {
		for _, short := range []bool{false, true} {
			for _, made := range []bool{false, true} {
				e := mustEncoded(t, m)
				if made {
					e.Bytes()
				}
				w := &limitWriter{limit: limit, err: boom, short: short}
				n, err := e.WriteTo(w)
				wantErr := boom
				if short {
					wantErr = io.ErrShortWrite
				}
				if !errors.Is(err, wantErr) || n != int64(w.buf.Len()) || !bytes.HasPrefix(want, w.buf.Bytes()) {
					t.Fatalf("limit %d short %v made %v: WriteTo = %d, %v after writing %d bytes", limit, short, made, n, err, w.buf.Len())
				}
			}
		}
	}
}

func mustEncoded(t *testing.T, m *asdd.Manifest) *Encoded {
	t.Helper()
	e, err := NewEncoded(m)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// limitWriter accepts limit bytes, then fails with err, or (short) returns
// fewer bytes than given without an error.
type limitWriter struct {
	buf   bytes.Buffer
	limit int
	err   error
	short bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	room := w.limit - w.buf.Len()
	if len(p) <= room {
		return w.buf.Write(p)
	}
	w.buf.Write(p[:room])
	if w.short {
		return room, nil
	}
	return room, w.err
}

// Concurrent Bytes callers (and WriteTo callers) all get the same slice,
// made once (go test -race checks the rest).
func TestEncodedBytesConcurrent(t *testing.T) {
	m := asdd.New()
	for i := range 200 {
		m.Slices = append(m.Slices, &asdd.Slice{SliceID: fmt.Sprintf("S%03d", i)})
	}
	e := mustEncoded(t, m)
	want, _ := json.Marshal(m)
	const n = 8
	got := make([][]byte, n)
	written := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var buf bytes.Buffer
			if _, err := e.WriteTo(&buf); err != nil {
				t.Error(err)
			}
			written[i] = buf.String()
			got[i] = e.Bytes()
		})
	}
	wg.Wait()
	for i := range n {
		if &got[i][0] != &got[0][0] || len(got[i]) != len(got[0]) {
			t.Fatalf("caller %d got a different slice", i)
		}
		if written[i] != string(want) {
			t.Fatalf("WriteTo %d wrote %q", i, written[i])
		}
	}
	if string(got[0]) != string(want) {
		t.Fatalf("Bytes = %s, want %s", got[0], want)
	}
}

// NewEncoded on any manifest Decode accepts gives json.Marshal's bytes
// through Bytes, Len and WriteTo.
func FuzzNewEncoded(f *testing.F) {
	f.Add(readSeed(f))
	f.Add([]byte(`{"project_context":{"x":"<>"},"slices":[],"agent_heartbeats":{"a/b":{"last_execution":"x","status":"IDLE"}},"zz":{ "a" : 1 }}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := asdd.Decode(raw)
		if err != nil {
			return
		}
		e, err := NewEncoded(m)
		if err != nil {
			t.Fatalf("decoded manifest does not encode: %v", err)
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		checkEncoded(t, e, want)
	})
}

// A manifest that does not share its structure with the previous one the
// way Apply's output does (fewer slices, other unknown members) is encoded
// and validated in full, with no patch; an invalid one is refused.
func TestEncodedNextFallback(t *testing.T) {
	m := asdd.New()
	m.Slices = []*asdd.Slice{&asdd.Slice{SliceID: "S1", Status: asdd.Spec}, &asdd.Slice{SliceID: "S2", Status: asdd.Spec}}
	e := mustEncoded(t, m)
	fewer := &asdd.Manifest{Slices: []*asdd.Slice{m.Slices[0]}, AgentHeartbeats: m.AgentHeartbeats, Revision: 1}
	extra := &asdd.Manifest{Slices: m.Slices, AgentHeartbeats: m.AgentHeartbeats, Revision: 1, Extra: asdd.Extra(`{"x":1}`)}
	for name, next := range map[string]*asdd.Manifest{"fewer slices": fewer, "other extra": extra} {
		ne, patch, err := e.Next(next)
		if err != nil || patch != nil {
			t.Fatalf("%s: Next = patch %s, %v; want the full path", name, patch, err)
		}
		want, _ := json.Marshal(next)
		checkEncoded(t, ne, want)
	}
	bad := &asdd.Manifest{Slices: []*asdd.Slice{&asdd.Slice{SliceID: "S1", Status: asdd.Spec, CCS: ptr(2.0)}}}
	if _, _, err := e.Next(bad); err == nil || !strings.Contains(err.Error(), "ccs") {
		t.Fatalf("Next accepted a CCS of 2 on the full path or did not name it: %v", err)
	}
}

// On manifests of hundreds of slices (encodings kept in chunks), Next
// with slices replaced anywhere and added past the end, chained over
// several steps, gives json.Marshal's bytes and a patch that applies; the
// Encodeds it started from still give theirs.
func TestPropertyEncodedNextManySlices(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := asdd.New()
		for i := range rapid.IntRange(0, 300).Draw(t, "slices") {
			m.Slices = append(m.Slices, &asdd.Slice{SliceID: fmt.Sprintf("S%04d", i), Status: asdd.Spec})
		}
		e, err := NewEncoded(m)
		if err != nil {
			t.Fatal(err)
		}
		type kept struct {
			e    *Encoded
			want []byte
		}
		var history []kept
		for step := range rapid.IntRange(1, 6).Draw(t, "steps") {
			prev := e.Manifest
			next := &asdd.Manifest{Slices: slices.Clone(prev.Slices), AgentHeartbeats: maps.Clone(prev.AgentHeartbeats), Revision: prev.Revision + 1}
			for range rapid.IntRange(0, 5).Draw(t, "replaced") {
				if len(next.Slices) == 0 {
					break
				}
				i := rapid.IntRange(0, len(next.Slices)-1).Draw(t, "index")
				c := *next.Slices[i]
				c.Name = fmt.Sprintf("step %d <%d>", step, i)
				next.Slices[i] = &c
			}
			for range rapid.IntRange(0, 70).Draw(t, "added") {
				next.Slices = append(next.Slices, &asdd.Slice{SliceID: fmt.Sprintf("N%d-%d", step, len(next.Slices)), Status: asdd.Spec})
			}
			if rapid.Bool().Draw(t, "beat") {
				next.AgentHeartbeats[rapid.SampledFrom(agents).Draw(t, "agent")] = &asdd.Heartbeat{LastExecution: "2026-04-20T14:00:00Z", Status: asdd.HeartbeatActive}
			}
			ne, patch, err := e.Next(next)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(next)
			checkEncoded(t, ne, want)
			got, err := store.ApplyPatch(e.Bytes(), patch)
			if err != nil {
				t.Fatalf("patch %s: %v", patch, err)
			}
			if gs, _ := store.SumOf(got); gs != mustSum(t, want) {
				t.Fatalf("patch %s gives\n%s\nwant\n%s", patch, got, want)
			}
			history = append(history, kept{ne, want})
			e = ne
		}
		for _, h := range history {
			checkEncoded(t, h.e, h.want)
		}
	})
}

func mustSum(t fataler, raw []byte) string {
	s, err := store.SumOf(raw)
	if err != nil {
		t.Fatalf("sum: %v", err)
	}
	return s
}
