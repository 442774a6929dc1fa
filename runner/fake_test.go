package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
)

// memState is the runner's State on an in-memory manifest: the same
// asdd.Apply as the CLI's, no store, no files.
type memState struct {
	mu  sync.Mutex
	m   *asdd.Manifest
	cfg *asdd.Config
}

func (s *memState) Manifest(context.Context) (*asdd.Manifest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m, nil // Apply copies on write: a returned manifest never changes
}

func (s *memState) Apply(_ context.Context, op asdd.Op, cfg *asdd.Config) (*asdd.Outcome, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg == nil {
		cfg = s.cfg
	}
	// As the application layer does: the custodian hashes the artifacts
	// an operation names (here: a hash of the path).
	if p, ok := op.(asdd.Proposal); ok {
		arts := make([]asdd.Artifact, len(p.Artifacts))
		for i, a := range p.Artifacts {
			arts[i], _ = s.Artifact(a.Name, a.Path, "")
		}
		p.Artifacts = arts
		if p.Trace != nil {
			t, _ := s.Artifact("trace", p.Trace.Path, "")
			p.Trace = &t
		}
		op = p
	}
	o, err := asdd.Apply(s.m, op, cfg, time.Now())
	if err != nil {
		return nil, err
	}
	s.m = o.Manifest
	return o, nil
}

// Artifact is the fake hash of a project file: a hash of its path.
func (s *memState) Artifact(name, path, _ string) (asdd.Artifact, error) {
	h := sha256.Sum256([]byte(path))
	return asdd.Artifact{Name: name, Path: path, SHA256: "sha256:" + hex.EncodeToString(h[:])}, nil
}

func (s *memState) must(t *testing.T, op asdd.Op) *asdd.Outcome {
	t.Helper()
	o, err := s.Apply(context.Background(), op, nil)
	if err != nil {
		t.Fatalf("%T: %v", op, err)
	}
	return o
}

func (s *memState) slice(id string) *asdd.Slice {
	m, _ := s.Manifest(context.Background())
	return m.Slice(id)
}

// fakeRun is what one fake agent process does.
type fakeRun struct {
	sleep time.Duration
	out   string
	code  int
	hang  bool
}

// fakeStarter runs agents as goroutines: behave decides each run from the
// process's environment; it records starts and ends in order and the most
// processes alive at once.
type fakeStarter struct {
	mu         sync.Mutex
	behave     func(env map[string]string) fakeRun
	pid        int
	running    int
	maxRunning int
	log        []string
}

func (f *fakeStarter) Start(s ProcSpec) (Process, error) {
	env := map[string]string{}
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	run := f.behave(env)
	name := env["CUSTODIAN_SLICE"] + "/" + env["CUSTODIAN_AGENT"]
	if env["CUSTODIAN_TASK"] != "" {
		name += "/" + env["CUSTODIAN_TASK"]
	}
	f.mu.Lock()
	f.pid++
	p := &fakeProc{pid: 100000 + f.pid, kill: make(chan struct{}), done: make(chan struct{})}
	f.running++
	f.maxRunning = max(f.maxRunning, f.running)
	f.log = append(f.log, "start "+name)
	f.mu.Unlock()
	go func() {
		defer close(p.done)
		var wait <-chan time.Time
		if !run.hang {
			wait = time.After(run.sleep)
		}
		select {
		case <-wait:
			io.WriteString(s.Stdout, run.out)
			p.code = run.code
		case <-p.kill:
			p.code = -1
		}
		f.mu.Lock()
		f.running--
		f.log = append(f.log, "end "+name)
		f.mu.Unlock()
	}()
	return p, nil
}

func (f *fakeStarter) starts(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, l := range f.log {
		if l == "start "+name {
			n++
		}
	}
	return n
}

type fakeProc struct {
	pid  int
	code int
	once sync.Once
	kill chan struct{}
	done chan struct{}
}

func (p *fakeProc) Pid() int { return p.pid }
func (p *fakeProc) Wait() (int, error) {
	<-p.done
	return p.code, nil
}
func (p *fakeProc) Kill() error {
	p.once.Do(func() { close(p.kill) })
	return nil
}

var phaseArtifact = map[string]string{"discovery": "intent", "spec": "requirements", "domain": "domain_model", "design": "design", "task_planning": "tasks"}

// result is the stdout of an agent that reports score with its artifact.
func result(agent string, score float64) string {
	s := fmt.Sprintf(`{"score": %v`, score)
	if a := phaseArtifact[agent]; a != "" {
		s += fmt.Sprintf(`, "artifacts": {%q: "specs/%s.md"}`, a, a)
	}
	if score < 0.95 {
		s += `, "uncertainty_factors": ["scripted"]`
	}
	return "working…\n" + s + "}\n"
}

// testConfig gives every agent but knowledge a command and the timeout.
func testConfig(timeout time.Duration) *asdd.Config {
	cfg := asdd.DefaultConfig()
	for i := range cfg.Agents {
		if cfg.Agents[i].Name != "knowledge" {
			cfg.Agents[i].Command = []string{"agent"}
			cfg.Agents[i].Timeout = asdd.Duration(timeout)
		}
	}
	return cfg
}

func newTestRunner(t *testing.T, cfg *asdd.Config, st *memState, fs *fakeStarter, o Options) *Runner {
	t.Helper()
	o.Root, o.Config, o.State, o.Starter = t.TempDir(), cfg, st, fs
	o.Poll = 5 * time.Millisecond
	o.Env = []string{"PATH=/usr/bin", "CUSTODIAN_TASK=leaked", "CUSTODIAN_ADMIN_TOKEN=the-persons"}
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newMemState(t *testing.T, cfg *asdd.Config, slices ...string) *memState {
	st := &memState{m: asdd.New(), cfg: cfg}
	st.must(t, asdd.Init{})
	for _, id := range slices {
		st.must(t, asdd.AddSlice{ID: id})
	}
	return st
}
