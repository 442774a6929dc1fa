package file_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// The daemon's crash test: a child process (this test binary, re-executed)
// holds the manifest in Hold mode with snapshots rewritten every
// millisecond, and many goroutines commit to it — most through a patch with
// a memo and a lazy value (as the daemon's ASDD operations do), some with a
// patch and the whole value, some with the whole value alone — printing
// each acknowledged revision. The parent kills it with SIGKILL at random
// moments, again and again, and after each kill checks that every
// acknowledged commit is in the journal with its actor, that the files
// verify, that the value is the replay of the journal, and that recovery
// never moved a snapshot aside (a snapshot the daemon wrote is always
// identified, by its record's sum or by a mark).

// raceEnabled is set when the tests run with the race detector.
var raceEnabled bool

const (
	crashDirEnv   = "CUSTODIAN_HELD_CRASH_DIR"
	crashRoundEnv = "CUSTODIAN_HELD_CRASH_ROUND"
	crashMembers  = 2000 // members of the document: a rewrite takes a few ms
	crashWriters  = 12
)

// crashMember is a member's value, compact JSON.
func crashMember(w, i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d,"pad":"%s"}`, w, i, strings.Repeat("p", 40+i%23)))
}

// crashMemo is the writers' decoded form of the document: never changed
// once committed (each commit makes a new map).
type crashMemo struct {
	m    map[string]json.RawMessage
	keys []string // sorted
}

func newCrashMemo(m map[string]json.RawMessage) *crashMemo {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return &crashMemo{m: m, keys: keys}
}

// bytes is the compact JSON of a crashMemo (keys sorted, as json.Marshal
// writes a map).
// MarshalJSON makes the memo a store.Change.Model.
func (m *crashMemo) MarshalJSON() ([]byte, error) { return m.bytes(), nil }

func (m *crashMemo) bytes() []byte {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Quote(k))
		buf.WriteByte(':')
		buf.Write(m.m[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// crashProposer is how the writers of one store's document: each update
// proposes its patch with its crashMemo as the change's model, which the
// store hands back with the revision (Document.Model) to the next update.
type crashProposer struct{}

// crashUpdate is one update's proposal.
type crashUpdate struct {
	next *crashMemo
}

// update commits writer w's i-th change (crashChange).
func (c *crashProposer) update(ctx context.Context, s store.Store, key string, w, i int, actor string, rng *rand.Rand) (store.Result, error) {
	return s.Update(ctx, key, crashChange(&crashUpdate{}, w, i, actor, rng))
}

// crashChange proposes writer w's i-th change to cur: set or remove one
// member, through a patch (most changes), or the whole value.
func crashChange(u *crashUpdate, w, i int, actor string, rng *rand.Rand) store.UpdateFunc {
	return func(cur store.Document) (store.Change, error) {
		var old map[string]json.RawMessage
		var keys []string
		if m, ok := cur.Model.(*crashMemo); ok {
			old, keys = m.m, m.keys
		} else {
			raw, err := cur.Bytes()
			if err != nil || raw == nil {
				return store.Change{}, fmt.Errorf("no value at revision %d: %v", cur.Revision, err)
			}
			if err := json.Unmarshal(raw, &old); err != nil {
				return store.Change{}, err
			}
			for k, v := range old { // the memo holds compact values
				var b bytes.Buffer
				if err := json.Compact(&b, v); err != nil {
					return store.Change{}, err
				}
				old[k] = b.Bytes()
			}
			keys = newCrashMemo(old).keys
		}
		next := make(map[string]json.RawMessage, len(old)+1)
		for k, v := range old {
			next[k] = v
		}
		k := fmt.Sprintf("m%04d", rng.IntN(crashMembers*6/5))
		var patch string
		at, found := slices.BinarySearch(keys, k)
		switch {
		case found && rng.IntN(10) == 0:
			keys = slices.Delete(slices.Clone(keys), at, at+1)
		case !found:
			keys = slices.Insert(slices.Clone(keys), at, k)
		}
		if _, ok := old[k]; ok && len(keys) < len(old) {
			delete(next, k)
			patch = fmt.Sprintf(`[{"op":"remove","path":"/%s"}]`, k)
		} else {
			next[k] = crashMember(w, i)
			op := "add"
			if _, ok := old[k]; ok {
				op = "replace"
			}
			patch = fmt.Sprintf(`[{"op":"%s","path":"/%s","value":%s}]`, op, k, next[k])
		}
		u.next = &crashMemo{m: next, keys: keys}
		ch := store.Change{Actor: actor, Reason: "crash test"}
		if rng.IntN(20) == 0 { // the whole value: the store diffs it
			ch.Value = u.next.bytes()
		} else { // the patch, with the writer's model of the value
			ch.Patch, ch.Model = json.RawMessage(patch), u.next
		}
		return ch, nil
	}
}

// TestHeldCrashChild is the child writer of TestHeldCrashKillNine; it runs
// only when that test starts it.
func TestHeldCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("the child writer of TestHeldCrashKillNine")
	}
	round := os.Getenv(crashRoundEnv)
	s, err := file.Open(dir, file.Options{
		Hold:             true,
		SnapshotInterval: time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(os.Stderr, nil)),
		// The journal is sealed into a segment every few hundred
		// commits: kills land during rotations too.
		SegmentBytes: 8 << 10,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	// Load (and recover) before the writers start.
	if _, err := s.Get(ctx, key); err != nil {
		fmt.Fprintln(os.Stderr, "get:", err)
		os.Exit(2)
	}
	var out sync.Mutex
	fmt.Println("ready")
	var wg sync.WaitGroup
	cache := &crashProposer{}
	for w := range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(w)))
			for i := 0; ; i++ {
				actor := fmt.Sprintf("r%s-w%d-%d", round, w, i)
				res, err := cache.update(ctx, s, key, w, i, actor, rng)
				if err != nil {
					fmt.Fprintln(os.Stderr, "update:", err)
					os.Exit(2)
				}
				if !res.Changed {
					continue
				}
				if res.Record == nil || res.Record.Actor != actor || res.Record.Rev != res.Revision {
					fmt.Fprintf(os.Stderr, "update: result %+v for %s\n", res.Record, actor)
					os.Exit(2)
				}
				// One write(2) per line: a kill never tears one.
				out.Lock()
				os.Stdout.WriteString(fmt.Sprintf("ack %d %s\n", res.Revision, actor))
				out.Unlock()
			}
		}()
	}
	// The parent kills us long before this.
	time.Sleep(20 * time.Second)
	os.Exit(3)
}

// crashIdentity says how the snapshot on disk is identified against the
// journal, as recovery would: "sum" (a record's sum), "mark" (a mark whose
// file hash and record hash match), "none", "missing" or "unparsable"; and
// how many records it is behind.
func crashIdentity(t *testing.T, dir string) (how string, behind uint64) {
	t.Helper()
	snap, err := os.ReadFile(path(dir, "manifest.json"))
	if os.IsNotExist(err) {
		return "missing", 0
	}
	if err != nil {
		t.Fatal(err)
	}
	sum, err := store.SumOf(snap)
	if err != nil {
		return "unparsable", 0
	}
	var recs []store.Record
	for _, f := range append(segFiles(t, dir), path(dir, "journal.ndjson")) {
		jb, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		for _, line := range bytes.SplitAfter(jb, []byte("\n")) {
			if len(line) == 0 || line[len(line)-1] != '\n' {
				break // a torn tail
			}
			r, err := store.DecodeRecord(bytes.TrimSpace(line))
			if err != nil {
				t.Fatalf("%s: journal record %d: %v", f, len(recs)+1, err)
			}
			if r.Rev != uint64(len(recs)+1) {
				t.Fatalf("%s: revision %d after %d records", f, r.Rev, len(recs))
			}
			recs = append(recs, r)
		}
	}
	last := uint64(len(recs))
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Sum == sum {
			return "sum", last - recs[i].Rev
		}
	}
	var marks []struct {
		Rev  uint64 `json:"rev"`
		Hash string `json:"hash"`
		File string `json:"file"`
	}
	if b, err := os.ReadFile(path(dir, ".marks")); err == nil {
		json.Unmarshal(b, &marks)
	}
	fh := store.HashBytes(snap)
	for i := len(marks) - 1; i >= 0; i-- {
		m := marks[i]
		if m.File == fh && m.Rev >= 1 && m.Rev <= last && recs[m.Rev-1].Hash == m.Hash {
			return "mark", last - m.Rev
		}
	}
	return "none", 0
}

// logCounter counts the store's recovery notices by message.
type logCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *logCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, line := range strings.Split(string(p), "\n") {
		if i := strings.Index(line, "msg="); i >= 0 {
			msg := line[i+4:]
			if strings.HasPrefix(msg, `"`) {
				if j := strings.Index(msg[1:], `"`); j >= 0 {
					msg = msg[1 : j+1]
				}
			}
			c.n[msg]++
		}
	}
	return len(p), nil
}

// TestHeldCrashKillNine is the daemon's crash test described at the top of
// this file.
func TestHeldCrashKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in the full (non -short) pass")
	}
	t.Parallel()
	dir := t.TempDir()
	seedCrashDoc(t, dir, crashMembers)

	// A soak run kills at least 30 times and for 14 s; a default run 8
	// times, and for 2 s; both go on (up to maxRounds) until the kills
	// have interrupted 20 acknowledged commits (a busy machine commits
	// less before each kill).
	minRounds, maxRounds, slow := testenv.Rounds(8, 30), 120, 1
	if raceEnabled {
		minRounds, slow = min(minRounds, 10), 5
	}
	budget := testenv.Duration(2*time.Second, 14*time.Second)
	start := time.Now()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	acked := map[uint64]string{} // revision -> actor
	ids := map[string]int{}      // how the snapshot left by each kill is identified
	var behind, maxBehind uint64
	current := 0 // kills that left the snapshot at the journal's last revision
	childLog := &logCounter{n: map[string]int{}}
	parentLog := &logCounter{n: map[string]int{}}
	rounds := 0
	for round := 0; round < maxRounds && (round < minRounds || time.Since(start) < budget || len(acked) < 20); round++ {
		rounds++
		cmd := exec.Command(os.Args[0], "-test.run=^TestHeldCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.Itoa(round))
		cmd.Stderr = io.MultiWriter(childLog, &prefixed{t: t})
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan struct{})
		lines := make(chan map[uint64]string)
		go func() {
			got := map[uint64]string{}
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var rev uint64
				var actor string
				if sc.Text() == "ready" {
					close(ready)
				} else if _, err := fmt.Sscanf(sc.Text(), "ack %d %s", &rev, &actor); err == nil {
					got[rev] = actor
				}
			}
			lines <- got
		}()
		if rng.IntN(5) == 0 {
			// Sometimes while it opens and recovers.
			time.Sleep(time.Duration(rng.IntN(30_000*slow)) * time.Microsecond)
		} else {
			select {
			case <-ready:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("round %d: the child never became ready", round)
			}
			time.Sleep(time.Duration(rng.IntN(80_000*slow)) * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		got := <-lines
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: the child ended before the kill: %v", round, err)
		}
		for rev, actor := range got {
			if a, ok := acked[rev]; ok {
				t.Fatalf("round %d: revision %d acknowledged twice (%s, then %s)", round, rev, a, actor)
			}
			acked[rev] = actor
		}

		how, b := crashIdentity(t, dir)
		ids[how]++
		if b == 0 && (how == "sum" || how == "mark") {
			current++
		}
		behind += b
		maxBehind = max(maxBehind, b)
		if how == "none" || how == "unparsable" {
			t.Errorf("round %d: the snapshot left by the kill is %s", round, how)
		}

		// Odd rounds check a copy, so that the next child recovers the
		// crash itself (in Hold mode); even rounds recover in place.
		check := dir
		if round%2 == 1 {
			check = t.TempDir()
			copyTree(t, dir, check)
		}
		crashCheck(t, round, check, acked, parentLog)
		for _, d := range []string{dir, check} {
			for _, pat := range []string{"*.unjournaled-*", "*.corrupt-*"} {
				if aside := glob(t, d, pat); len(aside) > 0 {
					t.Fatalf("round %d: moved aside: %v", round, aside)
				}
			}
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d kills in %v, %d acknowledged commits, all present; %d journal segments", rounds, time.Since(start).Round(time.Millisecond), len(acked), len(segFiles(t, dir)))
	t.Logf("snapshot after each kill identified by: %v; at the last revision %d times, else replayed: behind by %.1f records on average, %d at most", ids, current, float64(behind)/float64(rounds), maxBehind)
	t.Logf("recovery notices, direct mode: %v", parentLog.n)
	t.Logf("recovery notices, Hold mode (child): %v", childLog.n)
}

// crashCheck reopens dir in direct mode and checks it.
func crashCheck(t *testing.T, round int, dir string, acked map[uint64]string, log *logCounter) {
	t.Helper()
	s, err := file.Open(dir, file.Options{Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Issue 18 item 11: verify, on the crash image itself (before any
	// recovery), recognises what a daemon's kill leaves and passes.
	if _, err := s.VerifyDocument(ctx, key); err != nil {
		t.Fatalf("round %d: verify of the crash image: %v", round, err)
	}
	doc, err := s.Get(ctx, key)
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	if err := s.Verify(ctx, key); err != nil {
		t.Fatalf("round %d: verify: %v", round, err)
	}
	recs, err := s.History(ctx, key, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if uint64(len(recs)) != doc.Revision {
		t.Fatalf("round %d: %d records, document at revision %d", round, len(recs), doc.Revision)
	}
	for rev, actor := range acked {
		if rev > uint64(len(recs)) {
			t.Fatalf("round %d: acknowledged revision %d (%s) lost: the journal ends at %d", round, rev, actor, len(recs))
		}
		if got := recs[rev-1].Actor; got != actor {
			t.Fatalf("round %d: acknowledged revision %d was %s, the journal has %s", round, rev, actor, got)
		}
	}
	// Verify replayed the journal and found the snapshot equal to the
	// result; the value read is the snapshot's.
	snap, err := os.ReadFile(path(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(snap, doc.Value) {
		t.Fatalf("round %d: the value read is not the verified snapshot (the replay of the journal)", round)
	}
}

// prefixed passes a child's stderr lines other than the store's notices to
// the test log.
type prefixed struct {
	t   *testing.T
	mu  sync.Mutex
	buf []byte
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		line := string(p.buf[:i])
		p.buf = p.buf[i+1:]
		if !strings.Contains(line, "level=WARN") && line != "" && !strings.HasPrefix(line, "PASS") {
			p.t.Logf("child: %s", line)
		}
	}
	return len(b), nil
}

// seedCrashDoc commits the crash tests' document in direct mode: n members.
func seedCrashDoc(t *testing.T, dir string, n int) {
	t.Helper()
	seed := map[string]json.RawMessage{}
	for i := range n {
		seed[fmt.Sprintf("m%04d", i)] = crashMember(-1, i)
	}
	sb, _ := json.Marshal(seed)
	s0 := open(t, dir, file.Options{})
	if _, err := s0.Update(t.Context(), key, func(store.Document) (store.Change, error) {
		return store.Change{Value: sb, Actor: "seed"}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	s0.Close()
}
