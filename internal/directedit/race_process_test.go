package directedit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/wire"
)

// staleWriterEnv makes the test binary a stale writer (TestMain): a
// plugin hook that reads a state file, works a little, and writes back
// its copy with one member of its own changed, over and over, with no
// regard for the commits that came in between.
const staleWriterEnv = "CUSTODIAN_TEST_STALE_WRITER"

func TestMain(m *testing.M) {
	if file := os.Getenv(staleWriterEnv); file != "" {
		os.Exit(staleWriter(file, os.Getenv(staleWriterEnv+"_STOP")))
	}
	os.Exit(testbin.Main(m))
}

// staleWriter rewrites file until stop exists: read, sleep 0–3 ms, write
// back with "stale_writer" set to the round's number; half the rounds in
// place (truncate and write), half through a temporary file renamed over
// it (as `jq … > tmp && mv tmp file` does).
func staleWriter(file, stop string) int {
	for i := 1; ; i++ {
		if _, err := os.Stat(stop); err == nil {
			return 0
		}
		b, err := os.ReadFile(file)
		var m map[string]any
		if err != nil || json.Unmarshal(b, &m) != nil {
			continue // mid-rewrite or moved aside: read again
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		m["stale_writer"] = i
		out, _ := json.MarshalIndent(m, "", "  ")
		if i%2 == 0 {
			os.WriteFile(file, out, 0o644)
			continue
		}
		tmp := file + ".hook-tmp"
		if os.WriteFile(tmp, out, 0o644) == nil {
			os.Rename(tmp, file)
		}
	}
}

type project struct {
	t   *testing.T
	bin string
	dir string
}

func (p *project) run(args ...string) (string, int) {
	p.t.Helper()
	cmd := exec.Command(p.bin, append([]string{"-C", p.dir}, args...)...)
	cmd.Env = append(os.Environ(), "CUSTODIAN_ACTOR=race-test")
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			p.t.Fatalf("%v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

func (p *project) want(args ...string) string {
	p.t.Helper()
	out, code := p.run(args...)
	if code != 0 {
		p.t.Fatalf("%v: exit %d\n%s", args, code, out)
	}
	return out
}

// A stale read-modify-write loop (a real process) races real `custodian`
// commands on the task manifest, the workflow state and the ASDD
// manifest, in direct mode and under `custodian serve`: every commit a
// command acknowledged (exit 0) is still there at the end, the writers'
// edits that could be merged were adopted as commits by direct-edit and
// the others kept aside, and `custodian verify` passes.
func TestStaleRewritesNeverUndoAcknowledgedCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, daemon := range []bool{false, true} {
		name := "direct"
		if daemon {
			name = "serve"
		}
		t.Run(name, func(t *testing.T) {
			p := &project{t: t, bin: testbin.Path(t), dir: t.TempDir()}
			p.want("init")
			p.want("impl", "--init", "--plan-path", "docs/plan.md", "--plan-number", "1", "--plan-title", "Race")
			p.want("state", "init", "T1")
			var stopDaemon func()
			if daemon {
				stopDaemon = serve(t, p)
			}
			files := map[string]string{
				"impl":  ".impl/manifest.json",
				"state": ".agents/tmp/state.json",
				"asdd":  asdd.Key,
			}
			stop := filepath.Join(t.TempDir(), "stop")
			var writers []*exec.Cmd
			for _, key := range files {
				w := exec.Command(os.Args[0])
				w.Env = append(os.Environ(), staleWriterEnv+"="+filepath.Join(p.dir, filepath.FromSlash(key)), staleWriterEnv+"_STOP="+stop)
				if err := w.Start(); err != nil {
					t.Fatal(err)
				}
				writers = append(writers, w)
			}
			// The commits, each acknowledged one recorded.
			const each = 12
			var mu sync.Mutex
			acked := map[string][]string{}
			var wg sync.WaitGroup
			commit := func(kind string, args func(i int) ([]string, string)) {
				defer wg.Done()
				for i := 1; i <= each; i++ {
					a, id := args(i)
					out, code := p.run(a...)
					t.Logf("%s %d: exit %d %s", kind, i, code, strings.TrimSpace(out))
					if code == 0 {
						mu.Lock()
						acked[kind] = append(acked[kind], id)
						mu.Unlock()
					}
				}
			}
			wg.Add(3)
			go commit("impl", func(i int) ([]string, string) {
				id := fmt.Sprintf("1.%d", i)
				return []string{"impl", "--add-task", "--task-id", id, "--phase", "1", "--description", "task " + id}, id
			})
			go commit("state", func(i int) ([]string, string) {
				k := fmt.Sprintf("k%d", i)
				return []string{"state", "update", fmt.Sprintf(`{"%s": %d}`, k, i)}, k
			})
			go commit("asdd", func(i int) ([]string, string) {
				id := fmt.Sprintf("S-%d", i)
				return []string{"slice", "add", id}, id
			})
			wg.Wait()
			if err := os.WriteFile(stop, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, w := range writers {
				if err := w.Wait(); err != nil {
					t.Fatalf("stale writer: %v", err)
				}
			}
			// Settle the writers' last edits: a read in direct mode; the
			// daemon settles them as it notices them, and on shutdown.
			for _, key := range files {
				p.want("get", key)
			}
			if daemon {
				stopDaemon()
			}

			var doc struct {
				Tasks []struct {
					ID string `json:"id"`
				} `json:"tasks"`
			}
			json.Unmarshal([]byte(p.want("get", files["impl"])), &doc)
			var tasks []string
			for _, x := range doc.Tasks {
				tasks = append(tasks, x.ID)
			}
			var state map[string]any
			json.Unmarshal([]byte(p.want("get", files["state"])), &state)
			var manifest struct {
				Slices []struct {
					ID string `json:"slice_id"`
				} `json:"slices"`
			}
			json.Unmarshal([]byte(p.want("get", files["asdd"])), &manifest)
			var sliceIDs []string
			for _, s := range manifest.Slices {
				sliceIDs = append(sliceIDs, s.ID)
			}
			for kind, ids := range acked {
				if len(ids) == 0 {
					t.Errorf("no %s command was acknowledged", kind)
				}
				for _, id := range ids {
					var ok bool
					switch kind {
					case "impl":
						ok = slices.Contains(tasks, id)
					case "state":
						_, ok = state[id]
					case "asdd":
						ok = slices.Contains(sliceIDs, id)
					}
					if !ok {
						t.Errorf("%s: the acknowledged %s is gone", files[kind], id)
					}
				}
			}
			adopted, kept := 0, 0
			for _, key := range files {
				hist := p.want("history", key)
				adopted += strings.Count(hist, "direct-edit")
				aside, _ := filepath.Glob(filepath.Join(p.dir, filepath.FromSlash(key)+".unjournaled-*"))
				kept += len(aside)
			}
			t.Logf("%s: %d stale edits adopted by merge, %d kept aside", name, adopted, kept)
			if adopted == 0 {
				t.Error("no stale edit was adopted: the race did not happen")
			}
			p.want("verify")
		})
	}
}

// serve starts `custodian serve` on the project and returns a function
// that stops it (SIGTERM) and checks it exited 0.
func serve(t *testing.T, p *project) func() {
	t.Helper()
	out := &syncbuf.Buffer{}
	cmd := exec.Command(p.bin, "-C", p.dir, "serve", "--addr", "", "--monitor-every", "0", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	c, err := client.New("unix://"+filepath.Join(p.dir, wire.DefaultSocket), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Health(ctx)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not answering: %v\n%s", err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return func() {
		t.Helper()
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve: %v\n%s", err, out.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("daemon did not stop\n%s", out.String())
		}
		t.Logf("daemon output:\n%s", out.String())
	}
}
