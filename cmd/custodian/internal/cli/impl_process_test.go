package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// TestImplConcurrentProcesses: 20 separate custodian processes update 20
// different tasks at once. No update may be lost, and the journal holds one
// commit per update.
func TestImplConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testbin.Path(t)
	dir := t.TempDir()
	const n = 20
	now := time.Date(2026, 2, 22, 10, 0, 0, 0, time.UTC)
	mustImpl := func(args ...string) {
		t.Helper()
		if _, stderr, code := implExec(t, dir, now, "", append([]string{"impl"}, args...)...); code != 0 {
			t.Fatalf("impl %v: exit %d: %s", args, code, stderr)
		}
	}
	mustImpl("--init", "--plan-path", "p.md", "--plan-number", "001", "--plan-title", "Concurrency")
	for i := range n {
		mustImpl("--add-task", "--task-id", fmt.Sprintf("1.%d", i+1), "--phase", "1", "--description", fmt.Sprintf("task %d", i+1))
	}
	before := implHistory(t, dir)

	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("1.%d", i+1)
			cmd := exec.Command(bin, "impl", "--update-status", "--task-id", id, "--status", "in_progress", "--branch", "impl/001/"+id)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CUSTODIAN_ACTOR=worker-"+id)
			<-start
			out, err := cmd.CombinedOutput()
			want := fmt.Sprintf("Task %s status updated to in_progress\n", id)
			if err != nil || string(out) != want {
				errs[i] = fmt.Sprintf("%s: %v: %q", id, err, out)
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}

	// All 20 updates are in the manifest on disk.
	raw, err := os.ReadFile(filepath.Join(dir, ".impl", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := impl.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range m.Tasks {
		if task.Status != impl.InProgress || task.Branch == nil || *task.Branch != "impl/001/"+task.ID {
			t.Errorf("task %s lost its update: status %s branch %v", task.ID, task.Status, task.Branch)
		}
	}

	// custodian history shows exactly 20 new commits, one per worker.
	after := implHistory(t, dir)
	if got := len(after) - len(before); got != n {
		t.Fatalf("history grew by %d commits, want %d", got, n)
	}
	actors := map[string]bool{}
	for _, r := range after[len(before):] {
		if !strings.HasPrefix(r.Reason, "update-status 1.") {
			t.Errorf("unexpected commit %d: %q", r.Rev, r.Reason)
		}
		actors[r.Actor] = true
	}
	if len(actors) != n {
		t.Errorf("%d distinct actors in the new commits, want %d", len(actors), n)
	}
	// And the journal verifies.
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Verify(context.Background(), impl.Key); err != nil {
		t.Fatalf("verify: %v", err)
	}
}

// implHistory runs custodian history --json on the manifest in-process.
func implHistory(t *testing.T, dir string) []store.Record {
	t.Helper()
	return implHistoryOf(t, dir, impl.Key)
}

// implHistoryOf runs custodian history --json on a document in-process.
func implHistoryOf(t *testing.T, dir, key string) []store.Record {
	t.Helper()
	stdout, stderr, code := implExec(t, dir, time.Now(), "", "--json", "history", key)
	if code != 0 {
		t.Fatalf("history: exit %d: %s%s", code, stdout, stderr)
	}
	var recs []store.Record
	if err := json.Unmarshal([]byte(stdout), &recs); err != nil {
		t.Fatalf("history output: %v\n%s", err, stdout)
	}
	return recs
}

// BenchmarkImplUpdateStatus measures one custodian impl --update-status, in
// process, through the file store (lock, journal append and fsync, snapshot
// rewrite), on a 10-task and a 1,000-task manifest. The process start-up a
// real invocation adds is not included.
func BenchmarkImplUpdateStatus(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			m, err := impl.New("p.md", "001", "Bench", time.Now())
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if err := m.AddTask(impl.NewTask{ID: fmt.Sprintf("t%d", i), Phase: i/10 + 1, Description: fmt.Sprintf("task number %d of the benchmark plan", i)}, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			raw, err := impl.Encode(m)
			if err != nil {
				b.Fatal(err)
			}
			s, err := file.Open(dir, file.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Update(context.Background(), impl.Key, func(store.Document) (store.Change, error) {
				return store.Change{Value: raw, Reason: "seed"}, nil
			}, store.Create()); err != nil {
				b.Fatal(err)
			}
			s.Close()
			b.SetBytes(int64(len(raw)))
			statuses := []string{"in_progress", "validating"}
			i := 0
			for b.Loop() {
				// A fresh App per operation, as a fresh process would have.
				_, stderr, code := implExec(b, dir, time.Now(), "", "impl", "--update-status", "--task-id", fmt.Sprintf("t%d", n-1), "--status", statuses[i%2])
				if code != 0 {
					b.Fatalf("exit %d: %s", code, stderr)
				}
				i++
			}
		})
	}
}
