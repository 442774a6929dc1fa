package file_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/store/storetest"
)

// TestManyProcesses runs 64 custodian processes that each commit 50 updates
// to distinct fields of one document at once.
func TestManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in the full (non -short) pass")
	}
	t.Parallel()
	bin := testbin.Path(t)
	dir := t.TempDir()
	// 16 processes by default, 64 in a soak run.
	procs, each := testenv.Rounds(16, 64), 50
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(bin, "-C", dir, "debug", "write", "shared/doc.json", "--writer", fmt.Sprintf("p%02d", p), "--count", fmt.Sprint(each))
			if p%2 == 1 {
				// Half the processes seal the journal every few kB, the
				// others never: each must follow the other's files.
				cmd.Env = append(os.Environ(), file.SegmentBytesEnv+"=4096")
			} else {
				cmd.Env = append(os.Environ(), file.SegmentBytesEnv+"=-1")
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("process %d: %v\n%s", p, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s := open(t, dir, file.Options{})
	doc, err := s.Get(ctx, "shared/doc.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(doc.Value, &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != procs*each || doc.Revision != uint64(procs*each) {
		t.Fatalf("%d fields at revision %d, want %d", len(m), doc.Revision, procs*each)
	}
	for p := range procs {
		for i := range each {
			if v, ok := m[fmt.Sprintf("p%02d-%d", p, i)]; !ok || !strings.HasSuffix(v, fmt.Sprintf("/%d", i)) {
				t.Fatalf("update p%02d-%d lost", p, i)
			}
		}
	}
	recs, err := s.History(ctx, "shared/doc.json", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.Rev != uint64(i+1) {
			t.Fatalf("revision %d at position %d: gap or duplicate", r.Rev, i)
		}
	}
	if out, err := exec.Command(bin, "-C", dir, "verify").CombinedOutput(); err != nil {
		t.Fatalf("custodian verify: %v\n%s", err, out)
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "shared", "doc.journal.*-*.ndjson"))
	if len(segs) < 10 {
		t.Fatalf("%d journal segments", len(segs))
	}
	t.Logf("%d journal segments", len(segs))
}

// TestKillNine kills a writer with SIGKILL at random moments, again and
// again: after each kill the snapshot on disk parses, the document equals
// the replay of its journal, and every commit the writer acknowledged (printed)
// is there.
func TestKillNine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs in the full (non -short) pass")
	}
	t.Parallel()
	bin := testbin.Path(t)
	dir := t.TempDir()
	// A soak run kills 200 times; a default run 20 times, and more when the
	// kills found too little to check (no acknowledged commit, no sealed
	// segment): a slow machine makes the test longer, not red.
	rounds := testenv.Rounds(20, 200)
	deadline := time.Now().Add(3 * time.Minute)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	type ack struct {
		field string
		rev   uint64
	}
	var acked []ack
	recoverable := 0 // crash images verify found recoverable
	snap := filepath.Join(dir, "shared", "doc.json")
	sealed := func() bool {
		segs, _ := filepath.Glob(filepath.Join(dir, "shared", "doc.journal.*-*.ndjson"))
		return len(segs) > 0
	}
	round := 0
	for ; round < rounds || ((len(acked) == 0 || !sealed()) && time.Now().Before(deadline)); round++ {
		cmd := exec.Command(bin, "-C", dir, "debug", "write", "shared/doc.json", "--writer", "w", "--cycle", "8", "--count", "100000")
		// Most writers seal the journal every 2 kB (about ten commits), so
		// kills land during rotations; some never seal it.
		seg := "2048"
		if rng.IntN(4) == 0 {
			seg = "-1"
		}
		cmd.Env = append(os.Environ(), file.SegmentBytesEnv+"="+seg)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan []ack, 1)
		first, ended := make(chan struct{}), make(chan struct{})
		go func() {
			var got []ack
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var a ack
				if _, err := fmt.Sscanf(sc.Text(), "committed %s %d", &a.field, &a.rev); err == nil {
					got = append(got, a)
					if len(got) == 1 {
						close(first)
					}
				}
			}
			close(ended)
			lines <- got
		}()
		// Most kills come at a random moment after the writer's first
		// commit, however long a busy machine takes to start it; some at
		// a random moment from its start (while it opens and recovers).
		if rng.IntN(5) != 0 {
			select {
			case <-first:
			case <-ended:
			case <-time.After(time.Until(deadline)):
			}
		}
		time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		cmd.Process.Signal(syscall.SIGKILL)
		acked = append(acked, <-lines...)
		cmd.Wait()
		if b, err := os.ReadFile(snap); err == nil && !json.Valid(b) {
			t.Fatalf("round %d: snapshot on disk does not parse after SIGKILL", round)
		}
		if len(acked) == 0 {
			continue
		}
		s, err := file.Open(dir, file.Options{Logger: testenv.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		// Issue 18 item 11: verify, on the crash image itself (before any
		// recovery), recognises what a kill leaves and passes.
		rep, err := s.VerifyDocument(ctx, "shared/doc.json")
		if err != nil && !(reason.CodeOf(err) == reason.NotFound && len(acked) == 0) {
			t.Fatalf("round %d: verify of the crash image: %v", round, err)
		}
		if len(rep.Recovery) > 0 {
			recoverable++
		}
		doc, err := s.Get(ctx, "shared/doc.json")
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if !json.Valid(doc.Value) {
			t.Fatalf("round %d: document does not parse", round)
		}
		storetest.VerifyAll(t, s) // equals the replay of its journal
		recs, err := s.History(ctx, "shared/doc.json", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range acked {
			if a.rev > uint64(len(recs)) || recs[a.rev-1].Reason != "set "+a.field {
				t.Fatalf("round %d: acknowledged commit %s at revision %d lost", round, a.field, a.rev)
			}
		}
		s.Close()
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "shared", "doc.journal.*-*.ndjson"))
	t.Logf("%d kills, %d acknowledged commits, all present; %d journal segments; %d crash images verify called recoverable, none corrupt", round, len(acked), len(segs), recoverable)
	if len(segs) == 0 {
		t.Fatal("no journal segment was sealed: the kills never met a rotation")
	}
}
