package asdd

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/reason"
)

// ApplyFinalized, chained on its own results as the application layer
// chains them, gives exactly what Apply gives on the same manifest (see
// sameOutcome), its aggregate staying that of its slices (see
// checkAggregate), for random sequences of operations. The sequences add
// slices, change and halt them, take, renew and release leases that
// expire in the past and in the future of later operations, and let the
// clock step back now and then.
func TestPropertyApplyFinalized(t *testing.T) {
	cfg := DefaultConfig()
	seen := map[string]int{}
	defer func() { t.Logf("seen: %v", seen) }()
	rapid.Check(t, func(t *rapid.T) {
		m := New()
		m.Extra = Extra(`{"zz_tool": { "kept" : true }}`)
		full, fin := m, m // Apply's chain; ApplyFinalized's
		now := fixedNow
		for range rapid.IntRange(1, maxSteps).Draw(t, "steps") {
			if rapid.IntRange(0, 15).Draw(t, "restart") == 0 {
				// The daemon restarted: its manifest is decoded, without
				// an aggregate — and, as after a rebuild, may have state
				// marked for review.
				raw, _ := Encode(fin)
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
				full, fin = dm, dm
			}
			op := genOp(t, fin)
			switch rapid.IntRange(0, 7).Draw(t, "extra") {
			case 0, 1:
				op = genLeaseOp(t, fin)
			case 2:
				if fin.NeedsReview() {
					op = genReviewOp(t, fin)
				}
			}
			now = now.Add(genStep(t))
			out, err := Apply(full, op, cfg, now)
			fout, ferr := ApplyFinalized(fin, op, cfg, now)
			sameOutcome(t, op, out, err, fout, ferr)
			if err != nil {
				seen["rejected "+string(reason.CodeOf(err))]++
				continue
			}
			countSeen(seen, fin, fout)
			checkAggregate(t, op, fout.Manifest, seen)
			checkSliceLookup(t, fout.Manifest)
			full, fin = out.Manifest, fout.Manifest
		}
	})
}

// checkSliceLookup checks Manifest.Slice (which uses the aggregate's index
// of ids on the daemon's manifest) against a reading of every id.
func checkSliceLookup(t *rapid.T, m *Manifest) {
	ids := []string{"NO-SUCH-SLICE"}
	for _, s := range m.Slices {
		ids = append(ids, s.SliceID)
	}
	for _, id := range ids {
		var want *Slice
		for _, s := range m.Slices {
			if s.SliceID == id {
				want = s
				break
			}
		}
		if got := m.Slice(id); got != want {
			t.Fatalf("Slice(%q) = %p, want %p", id, got, want)
		}
	}
}

// fataler is what the checks need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
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
			if j, ok := x.pos[s.SliceID]; !ok || int(j) > i || m.Slices[int(j)].SliceID != s.SliceID {
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

// A heartbeat that names a slice changes no slice: ApplyFinalized's
// manifest shares the slice and the slice list with its input (the
// application layer has nothing to re-encode), and a slice that does not exist is refused.
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

// A heartbeat is encoded byte for byte as encoding/json encodes its fields
// followed by its unknown members (as the previous releases wrote it).
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
		v1 := struct {
			LastExecution    string `json:"last_execution"`
			Status           string `json:"status"`
			CurrentSlice     string `json:"current_slice,omitempty"`
			CurrentWave      *int   `json:"current_wave,omitempty"`
			TasksCompleted   *int   `json:"tasks_completed,omitempty"`
			TasksRemaining   *int   `json:"tasks_remaining,omitempty"`
			RetryRequestedAt string `json:"retry_requested_at,omitempty"`
			EscalatedAt      string `json:"escalated_at,omitempty"`
		}{h.LastExecution, h.Status, h.CurrentSlice, h.CurrentWave, h.TasksCompleted, h.TasksRemaining, h.RetryRequestedAt, h.EscalatedAt}
		want, err := json.Marshal(v1)
		if err != nil {
			t.Fatal(err)
		}
		if json.Valid([]byte(extra)) && extra != "" {
			h.Extra = Extra(`{"zz":` + extra + `}`)
			raw, err := json.Marshal(json.RawMessage(extra)) // compacted, escaped
			if err != nil {
				t.Fatal(err)
			}
			want = append(append(want[:len(want)-1], `,"zz":`...), raw...)
			want = append(want, '}')
		}
		got, err := h.MarshalJSON()
		if err != nil || string(got) != string(want) {
			t.Fatalf("MarshalJSON = %s, %v; want %s", got, err, want)
		}
	})
}
