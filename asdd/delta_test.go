package asdd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
)

// Encoding a manifest step by step (Encoded.Next) gives exactly what a full
// encoding gives (Bytes, Len and WriteTo agree with json.Marshal), and the
// patch it returns turns the previous value into the next one, for random
// sequences of operations; and ApplyFinalized, chained on its own results
// as the daemon chains them, gives exactly what Apply gives on the same
// manifest (see sameOutcome), its aggregate staying that of its slices
// (see checkAggregate). The sequences add slices, change and halt them,
// take, renew and release leases that expire in the past and in the future
// of later operations, and let the clock step back now and then.
func TestPropertyEncodedNext(t *testing.T) {
	cfg := DefaultConfig()
	seen := map[string]int{}
	defer func() { t.Logf("seen: %v", seen) }()
	rapid.Check(t, func(t *rapid.T) {
		m := New()
		m.Extra = Extra{"zz_tool": json.RawMessage(`{ "kept" : true }`)}
		e, err := NewEncoded(m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		checkEncoded(t, e, want)
		full := m // Apply's chain; e.Manifest is ApplyFinalized's
		now := fixedNow
		for range rapid.IntRange(1, maxSteps).Draw(t, "steps") {
			if rapid.IntRange(0, 15).Draw(t, "restart") == 0 {
				// The daemon restarted: its manifest is decoded, without
				// an aggregate — and, as after a rebuild, may have state
				// marked for review.
				raw, _ := Encode(e.Manifest)
				dm, err := Decode(raw)
				if err != nil {
					t.Fatal(err)
				}
				if len(dm.Slices) > 0 && rapid.IntRange(0, 2).Draw(t, "rebuilt") == 0 {
					s := rapid.SampledFrom(dm.Slices).Draw(t, "guessed")
					s.NeedsHumanReview = []string{"status"}
					if rapid.Bool().Draw(t, "guessedContext") {
						dm.ProjectContext.NeedsHumanReview = []string{"current_sprint"}
					}
				}
				if e, err = NewEncoded(dm); err != nil {
					t.Fatal(err)
				}
				full = dm
			}
			op := genOp(t, e.Manifest)
			switch rapid.IntRange(0, 7).Draw(t, "extra") {
			case 0, 1:
				op = genLeaseOp(t, e.Manifest)
			case 2:
				if e.Manifest.NeedsReview() {
					op = genReviewOp(t, e.Manifest)
				}
			}
			now = now.Add(genStep(t))
			out, err := Apply(full, op, cfg, now)
			fout, ferr := ApplyFinalized(e.Manifest, op, cfg, now)
			sameOutcome(t, op, out, err, fout, ferr)
			if err != nil {
				seen["rejected "+string(reason.CodeOf(err))]++
				continue
			}
			countSeen(seen, e.Manifest, fout)
			checkAggregate(t, op, fout.Manifest, seen)
			full = out.Manifest
			ne, patch, err := e.Next(fout.Manifest)
			_, fullErr := Encode(fout.Manifest)
			if (err == nil) != (fullErr == nil) {
				t.Fatalf("%T: Next error %v, Encode error %v", op, err, fullErr)
			}
			if err != nil {
				continue
			}
			want, err := json.Marshal(fout.Manifest)
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
			gs, _ := store.SumOf(got)
			ws, _ := store.SumOf(want)
			if gs != ws {
				t.Fatalf("%T: patch %s gives\n%s\nwant\n%s", op, patch, got, want)
			}
			e = ne
		}
	})
}

// genStep is how far the clock moves before an operation: mostly seconds
// or minutes (leases of up to 10 minutes outlive several operations, or
// not), sometimes back.
func genStep(t *rapid.T) time.Duration {
	switch rapid.IntRange(0, 7).Draw(t, "clock") {
	case 0:
		return -time.Duration(rapid.IntRange(1, 600).Draw(t, "back")) * time.Second
	case 1, 2, 3:
		return time.Duration(rapid.IntRange(0, 30).Draw(t, "seconds")) * time.Second
	default:
		return time.Duration(rapid.IntRange(0, 1200).Draw(t, "seconds")) * time.Second
	}
}

// genLeaseOp takes, renews or releases a lease, mostly one that succeeds:
// on an existing slice, released by its holder, for a few seconds to
// fifteen minutes.
func genLeaseOp(t *rapid.T, m *Manifest) Op {
	slice := rapid.SampledFrom(propSlices).Draw(t, "leaseSlice")
	if len(m.Slices) > 0 && rapid.IntRange(0, 4).Draw(t, "existing") > 0 {
		slice = rapid.SampledFrom(m.Slices).Draw(t, "leased").SliceID
	}
	holder := rapid.SampledFrom(propAgents[:4]).Draw(t, "leaseHolder")
	if s := m.Slice(slice); s != nil && s.Lock != nil && rapid.Bool().Draw(t, "release") {
		return UnlockSlice{Slice: slice, Holder: s.Lock.Holder}
	}
	return LockSlice{Slice: slice, Holder: holder, TTL: time.Duration(rapid.IntRange(1, 900).Draw(t, "leaseSeconds")) * time.Second}
}

// genReviewOp clears the review marks of the project context or of a
// slice.
func genReviewOp(t *rapid.T, m *Manifest) Op {
	r := ClearReview{Role: "TL", Rationale: "checked"}
	if len(m.ProjectContext.NeedsHumanReview) == 0 || rapid.Bool().Draw(t, "reviewSlice") {
		r.Slice = rapid.SampledFrom(propSlices).Draw(t, "reviewed")
		for _, s := range m.Slices {
			if len(s.NeedsHumanReview) > 0 {
				r.Slice = s.SliceID
			}
		}
	}
	return r
}

// sameOutcome fails unless ApplyFinalized's outcome (or rejection) is
// Apply's: the same manifest, byte for byte (the global score included),
// the same events (lock expiries included), effects, verdict and summary.
func sameOutcome(t fataler, op Op, out *Outcome, err error, fout *Outcome, ferr error) {
	t.Helper()
	sameOutcomeBut(t, op, out, err, fout, ferr, true)
}

// sameOutcomeBut is sameOutcome comparing the manifests only with whole
// (else only their global scores and numbers of slices).
func sameOutcomeBut(t fataler, op Op, out *Outcome, err error, fout *Outcome, ferr error, whole bool) {
	t.Helper()
	if (err == nil) != (ferr == nil) || (err != nil && err.Error() != ferr.Error()) {
		t.Fatalf("%T: Apply error %v, ApplyFinalized error %v", op, err, ferr)
	}
	if err != nil {
		return
	}
	var a, b []byte
	if whole {
		a, _ = json.Marshal(out.Manifest)
		b, _ = json.Marshal(fout.Manifest)
	} else {
		a, _ = json.Marshal([]any{out.Manifest.ProjectContext, len(out.Manifest.Slices)})
		b, _ = json.Marshal([]any{fout.Manifest.ProjectContext, len(fout.Manifest.Slices)})
	}
	if string(a) != string(b) {
		t.Fatalf("%T: ApplyFinalized gave\n%s\nApply\n%s", op, b, a)
	}
	rest := func(o *Outcome) string {
		r, err := json.Marshal(struct {
			Events  []Event
			Effects []Effect
			Verdict error
			Summary string
		}{o.Events, o.Effects, o.Verdict, o.Summary})
		if err != nil {
			t.Fatalf("%T: %v", op, err)
		}
		return string(r)
	}
	if a, b := rest(out), rest(fout); a != b {
		t.Fatalf("%T: ApplyFinalized's outcome\n%s\nApply's\n%s", op, b, a)
	}
}

// checkAggregate fails unless m's aggregate is that of its slices: the
// same exact sum (an incremental sum has the very limbs of a full one) and
// global score, a lock bound at or below the earliest expiry, the number
// of slices marked for review, and an index giving each indexed id its
// slice's position.
func checkAggregate(t fataler, op Op, m *Manifest, seen map[string]int) {
	t.Helper()
	agg := m.agg
	if agg == nil {
		t.Fatalf("%T: no aggregate on ApplyFinalized's manifest", op)
	}
	if !sameList(agg.list, m.Slices) {
		t.Fatalf("%T: the aggregate describes another slice list", op)
	}
	var sum ccsSum
	var exact lockBound
	review := 0
	for _, s := range m.Slices {
		sum.add(s, 1)
		exact.include(s)
		review += needsReview(s)
	}
	if agg.review != review {
		t.Fatalf("%T: aggregate counts %d slices marked for review, there are %d", op, agg.review, review)
	}
	if x := agg.ids; x != nil {
		if x.n > len(m.Slices) || len(x.pos) > x.n {
			t.Fatalf("%T: index of %d ids for %d slices, %d slices", op, len(x.pos), x.n, len(m.Slices))
		}
		for i, s := range m.Slices[:x.n] {
			if j, ok := x.pos[s.SliceID]; !ok || int(j) > i || m.Slices[j].SliceID != s.SliceID {
				t.Fatalf("%T: index puts %s at %d (%v), where it is at %d", op, s.SliceID, j, ok, i)
			}
		}
		seen["indexed"]++
	}
	if *agg.conf != sum {
		t.Fatalf("%T: aggregate sum of %d values, slices have %d", op, agg.conf.n, sum.n)
	}
	if g, ok := sum.mean(); ok != agg.hasGlobal || math.Float64bits(g) != math.Float64bits(agg.global) {
		t.Fatalf("%T: aggregate mean %v (%v), slices' %v (%v)", op, agg.global, agg.hasGlobal, g, ok)
	}
	switch {
	case exact.any && (!agg.locks.any || exact.at.Before(agg.locks.at)):
		t.Fatalf("%T: lock bound %+v above the earliest expiry %v", op, agg.locks, exact.at)
	case !agg.locks.equal(exact):
		seen["stale lock bound"]++
	}
}

// countSeen counts what a step did that the aggregate must follow.
func countSeen(seen map[string]int, in *Manifest, out *Outcome) {
	if in.agg == nil {
		seen["full apply"]++
	}
	for _, ev := range out.Events {
		switch ev.Type {
		case "lock_expired", "slice_added", "quick_fix", "slice_halted", "locked", "unlocked", "review_cleared":
			seen[ev.Type]++
		}
	}
	a, b := in.ProjectContext.GlobalConfidenceScore, out.Manifest.ProjectContext.GlobalConfidenceScore
	if (a == nil) != (b == nil) || a != nil && *a != *b {
		seen["global score changed"]++
	}
}

// A changed slice that breaks the schema is refused by Next, naming it.
func TestEncodedNextValidatesChangedSlice(t *testing.T) {
	m := New()
	m.Slices = append(m.Slices, &Slice{SliceID: "S1", Status: Spec})
	e, err := NewEncoded(m)
	if err != nil {
		t.Fatal(err)
	}
	next := *m
	next.Slices = []*Slice{{SliceID: "S1", Status: Spec, CCS: ptr(1.5)}}
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
	hb := func(status string) *Heartbeat {
		return &Heartbeat{LastExecution: "2026-04-20T14:00:00Z", Status: status}
	}
	keep := hb(HeartbeatIdle)
	base := map[string]*Heartbeat{"b/c": hb(HeartbeatActive), "a~1": hb(HeartbeatIdle), "<x>": keep, "é": hb(HeartbeatIdle), "m": hb(HeartbeatIdle)}
	cases := []struct {
		name string
		edit func(map[string]*Heartbeat)
	}{
		{"none", func(map[string]*Heartbeat) {}},
		{"replace one", func(m map[string]*Heartbeat) { m["b/c"] = hb(HeartbeatIdle) }},
		{"replace all", func(m map[string]*Heartbeat) {
			for k := range m {
				m[k] = hb(HeartbeatActive)
			}
		}},
		{"add first", func(m map[string]*Heartbeat) { m[" "] = hb(HeartbeatActive) }},
		{"add middle and last", func(m map[string]*Heartbeat) { m["b"] = hb(HeartbeatActive); m["zz&"] = hb(HeartbeatIdle) }},
		{"remove one", func(m map[string]*Heartbeat) { delete(m, "a~1") }},
		{"remove all", func(m map[string]*Heartbeat) { clear(m) }},
		{"add, replace and remove", func(m map[string]*Heartbeat) {
			delete(m, "<x>")
			delete(m, "é")
			m["m"] = hb(HeartbeatActive)
			m["a"] = hb(HeartbeatActive)
			m["n"] = keep
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := New()
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
	cases := map[string]*Manifest{
		"empty":     New(),
		"nil parts": {},
		"extra": {Extra: Extra{"zz": json.RawMessage(" { \"a\" : [ 1 , \"<&>\u2028\" ] } "), "aa": json.RawMessage(`null`)},
			ProjectContext: ProjectContext{CurrentSprint: "<s>", Extra: Extra{"k": json.RawMessage(`"&"`)}}},
		"big": {Slices: []*Slice{{SliceID: "S1", Name: big}, {SliceID: "S2"}, {SliceID: "S3", Name: big}},
			AgentHeartbeats: map[string]*Heartbeat{"a": {Status: "x"}}, Revision: 18446744073709551615},
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
	m := New()
	for i := range 2000 {
		m.Slices = append(m.Slices, &Slice{SliceID: fmt.Sprintf("S%04d", i), Name: "slice"})
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

func mustEncoded(t *testing.T, m *Manifest) *Encoded {
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
	m := New()
	for i := range 200 {
		m.Slices = append(m.Slices, &Slice{SliceID: fmt.Sprintf("S%03d", i)})
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
	f.Add(readSeedF(f))
	f.Add([]byte(`{"project_context":{"x":"<>"},"slices":[],"agent_heartbeats":{"a/b":{"last_execution":"x","status":"IDLE"}},"zz":{ "a" : 1 }}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := Decode(raw)
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
	m := New()
	m.Slices = []*Slice{{SliceID: "S1", Status: Spec}, {SliceID: "S2", Status: Spec}}
	e := mustEncoded(t, m)
	fewer := &Manifest{Slices: m.Slices[:1], AgentHeartbeats: m.AgentHeartbeats, Revision: 1}
	extra := &Manifest{Slices: m.Slices, AgentHeartbeats: m.AgentHeartbeats, Revision: 1, Extra: Extra{"x": json.RawMessage(`1`)}}
	for name, next := range map[string]*Manifest{"fewer slices": fewer, "other extra": extra} {
		ne, patch, err := e.Next(next)
		if err != nil || patch != nil {
			t.Fatalf("%s: Next = patch %s, %v; want the full path", name, patch, err)
		}
		want, _ := json.Marshal(next)
		checkEncoded(t, ne, want)
	}
	bad := &Manifest{Slices: []*Slice{{SliceID: "S1", Status: Spec, CCS: ptr(2.0)}}}
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
		m := New()
		for i := range rapid.IntRange(0, 300).Draw(t, "slices") {
			m.Slices = append(m.Slices, &Slice{SliceID: fmt.Sprintf("S%04d", i), Status: Spec})
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
			next := &Manifest{Slices: slices.Clone(prev.Slices), AgentHeartbeats: maps.Clone(prev.AgentHeartbeats), Revision: prev.Revision + 1}
			for range rapid.IntRange(0, 5).Draw(t, "replaced") {
				if len(next.Slices) == 0 {
					break
				}
				i := rapid.IntRange(0, len(next.Slices)-1).Draw(t, "index")
				if rapid.Bool().Draw(t, "edge") { // next to a chunk boundary
					i = min(len(next.Slices)-1, encChunkSize*rapid.IntRange(1, 4).Draw(t, "chunk")+rapid.IntRange(-1, 1).Draw(t, "offset"))
				}
				c := *next.Slices[i]
				c.Name = fmt.Sprintf("step %d <%d>", step, i)
				next.Slices[i] = &c
			}
			for range rapid.IntRange(0, 70).Draw(t, "added") {
				next.Slices = append(next.Slices, &Slice{SliceID: fmt.Sprintf("N%d-%d", step, len(next.Slices)), Status: Spec})
			}
			if rapid.Bool().Draw(t, "beat") {
				next.AgentHeartbeats[rapid.SampledFrom(propAgents).Draw(t, "agent")] = &Heartbeat{LastExecution: "2026-04-20T14:00:00Z", Status: HeartbeatActive}
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

// A heartbeat that names a slice changes no slice: ApplyFinalized's
// manifest shares the slice and the slice list with its input (Next has
// nothing to re-encode), and a slice that does not exist is refused.
func TestBeatOnSliceChangesNoSlice(t *testing.T) {
	w := newWorld(t)
	w.do(AddSlice{ID: "S1"})
	w.do(AddSlice{ID: "S2"})
	for _, apply := range []func(*Manifest, Op, *Config, time.Time) (*Outcome, error){Apply, ApplyFinalized} {
		out, err := apply(w.m, Beat{Agent: "spec", Slice: "S2"}, w.cfg, w.now)
		if err != nil {
			t.Fatal(err)
		}
		if !sameList(out.Manifest.Slices, w.m.Slices) {
			t.Fatal("a heartbeat copied the slice list")
		}
		if got := out.Manifest.AgentHeartbeats["spec_agent"].CurrentSlice; got != "S2" {
			t.Fatalf("current_slice %q", got)
		}
		if _, err := apply(w.m, Beat{Agent: "spec", Slice: "S3"}, w.cfg, w.now); reason.CodeOf(err) != reason.NotFound {
			t.Fatalf("heartbeat on a missing slice: %v", err)
		}
	}
}

// ApplyFinalized frees a lease exactly when Apply does, although it scans
// the leases only once their bound has passed: a lease released or renewed
// leaves the bound too low, which costs one scan, not an expiry missed.
func TestApplyFinalizedLeaseExpiry(t *testing.T) {
	cfg := DefaultConfig()
	full, fin := New(), New()
	now := fixedNow
	steps := []struct {
		after time.Duration
		op    Op
		want  []string // events
	}{
		{0, AddSlice{ID: "A"}, []string{"slice_added"}},
		{0, AddSlice{ID: "B"}, []string{"slice_added"}},
		{0, LockSlice{Slice: "A", Holder: "spec", TTL: time.Minute}, []string{"locked"}},
		{0, LockSlice{Slice: "B", Holder: "design", TTL: 3 * time.Minute}, []string{"locked"}},
		{10 * time.Second, UnlockSlice{Slice: "A", Holder: "spec"}, []string{"unlocked"}},
		{time.Minute, Beat{Agent: "qa"}, []string{"heartbeat"}}, // bound (A's) passed: scan, nothing expires
		{30 * time.Second, LockSlice{Slice: "B", Holder: "design", TTL: 5 * time.Minute}, []string{"locked"}},
		{2 * time.Minute, Beat{Agent: "qa"}, []string{"heartbeat"}}, // B's old expiry: renewed
		{5 * time.Minute, Beat{Agent: "qa"}, []string{"lock_expired", "heartbeat"}},
		{time.Minute, Beat{Agent: "qa"}, []string{"heartbeat"}},
	}
	for i, st := range steps {
		now = now.Add(st.after)
		out, err := Apply(full, st.op, cfg, now)
		fout, ferr := ApplyFinalized(fin, st.op, cfg, now)
		sameOutcome(t, st.op, out, err, fout, ferr)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		var got []string
		for _, e := range fout.Events {
			got = append(got, e.Type)
		}
		if !slices.Equal(got, st.want) {
			t.Fatalf("step %d (%T): events %v, want %v", i, st.op, got, st.want)
		}
		checkAggregate(t, st.op, fout.Manifest, map[string]int{})
		full, fin = out.Manifest, fout.Manifest
	}
}

// On a manifest of hundreds of slices, added one by one and looked up in
// any order (by operations that change the slice, that only read it, that
// must not find it), ApplyFinalized finds exactly what Apply finds.
func TestApplyFinalizedManySlices(t *testing.T) {
	reindexed := 0
	defer func() { t.Logf("indexes made again after more than %d slices were added: %d", maxUnindexed, reindexed) }()
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		full, fin := New(), New()
		now := fixedNow
		ids := []string{"none"}
		steps := rapid.IntRange(1, 3*maxSteps).Draw(t, "steps")
		for step := range steps {
			var op Op
			id := rapid.SampledFrom(ids).Draw(t, "id")
			switch rapid.IntRange(0, 6).Draw(t, "kind") {
			case 0, 1, 2, 6:
				op = AddSlice{ID: fmt.Sprintf("S%04d", len(ids))}
				if rapid.IntRange(0, 9).Draw(t, "duplicate") == 0 {
					op = AddSlice{ID: id}
				}
			case 3:
				op = Beat{Agent: "spec", Slice: id}
			case 4:
				op = LockSlice{Slice: id, Holder: "spec", TTL: time.Minute}
			case 5:
				op = Quick{Description: "fix " + id}
			}
			now = now.Add(time.Second)
			out, err := Apply(full, op, cfg, now)
			fout, ferr := ApplyFinalized(fin, op, cfg, now)
			// Whole manifests now and then: encoding hundreds of slices
			// at every step would make the test slow.
			sameOutcomeBut(t, op, out, err, fout, ferr, step%16 == 0 || step == steps-1)
			if err != nil {
				continue
			}
			checkAggregate(t, op, fout.Manifest, map[string]int{})
			if a, b := fin.agg, fout.Manifest.agg; a != nil && a.ids != nil && b.ids != a.ids {
				reindexed++
			}
			for _, ev := range fout.Events {
				if ev.Type == "slice_added" || ev.Type == "quick_fix" {
					ids = append(ids, ev.Slice)
				}
			}
			full, fin = out.Manifest, fout.Manifest
		}
	})
}

// A heartbeat is encoded by hand, byte for byte as json.Marshal does.
func FuzzHeartbeatMatchesMarshal(f *testing.F) {
	f.Add("2026-11-22T04:25:02Z", "ACTIVE", "", -1, 3, -1, "", "", "")
	f.Add("", "<&>", "SLICE-001", 2, 0, 7, "x\u2028", "\xff", `{"a":1}`)
	f.Fuzz(func(t *testing.T, last, status, slice string, wave, done, left int, retry, esc, extra string) {
		h := Heartbeat{LastExecution: last, Status: status, CurrentSlice: slice, RetryRequestedAt: retry, EscalatedAt: esc}
		for _, p := range []struct {
			v   int
			dst **int
		}{{wave, &h.CurrentWave}, {done, &h.TasksCompleted}, {left, &h.TasksRemaining}} {
			if p.v >= 0 {
				*p.dst = &p.v
			}
		}
		if json.Valid([]byte(extra)) && extra != "" {
			h.Extra = Extra{"zz": json.RawMessage(extra)}
		}
		want, err := json.Marshal(plainHeartbeat(h))
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Extra) > 0 {
			if want, err = encodeWithExtra(plainHeartbeat(h), h.Extra); err != nil {
				t.Fatal(err)
			}
		}
		got, err := h.MarshalJSON()
		if err != nil || string(got) != string(want) {
			t.Fatalf("MarshalJSON = %s, %v; want %s", got, err, want)
		}
		mb, err := encodeMember("k", &h)
		if err != nil {
			t.Fatal(err)
		}
		if wm, _ := json.Marshal(&h); string(mb.value()) != string(wm) {
			t.Fatalf("member value %s, json.Marshal %s", mb.value(), wm)
		}
	})
}

// Events are encoded by hand, byte for byte as encoding/json encodes the
// struct.
func FuzzEventMatchesMarshal(f *testing.F) {
	f.Add("heartbeat", "", "spec", "status", "ACTIVE", 3, true)
	f.Add("halt", "SLICE-001", "", "<why>", "a\u2028b", -1, false)
	f.Fuzz(func(t *testing.T, typ, slice, agent, k, v string, n int, withData bool) {
		e := Event{Type: typ, Slice: slice, Agent: agent}
		if withData {
			e.Data = map[string]any{k: v, k + "_n": n, k + "_f": float64(n) / 3, k + "_l": []any{v, nil, true}, k + "_m": map[string]any{v: n}}
		}
		type plain Event
		want, err := json.Marshal(plain(e))
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.MarshalJSON()
		if err != nil || string(got) != string(want) {
			t.Fatalf("MarshalJSON = %s, %v\nwant %s", got, err, want)
		}
	})
}
