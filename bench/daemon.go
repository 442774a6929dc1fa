package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/daemon"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// Finalized is Manifest's manifest of n slices (no tasks) read back as
// the daemon reads it and finalized once by Apply at now (a heartbeat from
// spec), as the daemon's latest manifest is: the starting point of the
// benchmarks of one operation on a large manifest.
func Finalized(n int, now time.Time) (*asdd.Manifest, error) {
	raw, err := Manifest(n, 0)
	if err != nil {
		return nil, err
	}
	m, err := asdd.Decode(raw)
	if err != nil {
		return nil, err
	}
	out, err := asdd.Apply(m, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive}, asdd.DefaultConfig(), now)
	if err != nil {
		return nil, err
	}
	return out.Manifest, nil
}

// Manifest returns an ASDD manifest with n slices (a realistic mix of
// phases, confidence chains and artifacts) and tasksPer tasks in each.
func Manifest(n, tasksPer int) ([]byte, error) {
	m := asdd.New()
	m.ProjectContext.CurrentSprint = "BENCH"
	phases := asdd.Lifecycle
	list := make([]*asdd.Slice, 0, n)
	for i := range n {
		id := fmt.Sprintf("SLICE-%05d", i)
		s := &asdd.Slice{
			SliceID: id, Name: "bench slice " + strconv.Itoa(i), Type: "FEATURE",
			Status: phases[i%(len(phases)-1)], GovernanceMode: "MANUAL",
			PhaseData: map[string]string{
				"intent":       ".asdd/specs/" + id + "/intent.md",
				"requirements": ".asdd/specs/" + id + "/requirements.md",
			},
			ConfidenceChain: []asdd.ChainEntry{
				{Agent: "discovery", Score: 0.97, Timestamp: "2026-11-01T00:00:00Z"},
				{Agent: "spec", Score: 0.96, Timestamp: "2026-11-01T00:10:00Z"},
			},
			ArtifactHashes: map[string]string{
				".asdd/specs/" + id + "/intent.md":       "sha256:" + strings.Repeat("a", 64),
				".asdd/specs/" + id + "/requirements.md": "sha256:" + strings.Repeat("b", 64),
			},
			CreatedAt: "2026-11-01T00:00:00Z", UpdatedAt: "2026-11-01T00:10:00Z",
		}
		for t := range tasksPer {
			s.Tasks = append(s.Tasks, asdd.Task{ID: fmt.Sprintf("T%03d", t), Title: "task " + strconv.Itoa(t), Wave: 1 + t/10, Status: "pending"})
		}
		list = append(list, s)
	}
	m.Slices = list
	m.Revision = 1 // as after `custodian init`: Seed makes it revision 1
	return asdd.Encode(m)
}

// Seed writes manifest (made by Manifest) as the first commit of the project at dir, directly
// through the file store.
func Seed(dir string, manifest []byte) error {
	s, err := file.Open(dir, file.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	_, err = s.Update(context.Background(), asdd.Key, func(store.Document) (store.Change, error) {
		return store.Change{Value: manifest, Actor: "bench", Reason: "seed"}, nil
	}, store.Create())
	return err
}

// Daemon is a daemon on a unix socket and a client of it: in this process
// (StartDaemon, StartMCPDaemon: package daemon, as `custodian serve` runs
// it) or a `custodian serve` process (StartServe).
type Daemon struct {
	Client *client.Client
	sock   string // StartDaemon's socket
	cancel context.CancelFunc
	done   chan error
	cmd    *exec.Cmd // StartServe's process
	out    bytes.Buffer
}

// adminToken is the admin token of the daemons the benchmarks start: the
// benchmark is the project's human, and seeds documents with raw writes
// (a human decision on every door since the socket gives agent rights).
var adminToken = func() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "bench-" + hex.EncodeToString(b)
}()

// StartDaemon serves the project at dir in this process, assembled by
// package daemon exactly as `custodian serve --addr "" --monitor-every 0`
// runs it (the held store, the application layer, the dashboard and the
// MCP door mounted, serve's runtime settings), on a unix socket.
func StartDaemon(dir string) (*Daemon, error) {
	ctx, cancel := context.WithCancel(context.Background())
	dd, err := daemon.Start(ctx, daemon.Config{Root: dir, Socket: "bench.sock", Board: true, MCP: true,
		MemoryLimit: daemon.DefaultMemoryLimit, AdminToken: adminToken})
	if err != nil {
		cancel()
		return nil, err
	}
	d := &Daemon{cancel: cancel, done: make(chan error, 1), sock: dd.Socket()}
	go func() { d.done <- dd.Wait() }()
	if d.Client, err = client.New("unix://"+dd.Socket(), client.Options{Token: adminToken}); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close stops the daemon and flushes its store; a process gets SIGINT and
// must exit cleanly.
func (d *Daemon) Close() error {
	if d.Client != nil {
		defer d.Client.Close()
	}
	if d.cmd != nil {
		if d.cmd.ProcessState != nil {
			return nil
		}
		if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
			return err
		}
		if err := d.cmd.Wait(); err != nil {
			return fmt.Errorf("custodian serve: %v: %s", err, d.out.String())
		}
		return nil
	}
	d.cancel()
	return <-d.done
}

// StartServe starts exe serve on the project at dir as a separate process
// (unix socket only, no monitor) and waits until it answers.
func StartServe(exe, dir string) (*Daemon, error) {
	sock := ServeSocket(dir)
	d := &Daemon{cmd: exec.Command(exe, "-C", dir, "serve", "--addr", "", "--socket", sock, "--monitor-every", "0", "--log-level", "error", "--admin-token", adminToken)}
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.out
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	fail := func(err error) (*Daemon, error) {
		_ = d.cmd.Process.Kill()
		_ = d.cmd.Wait()
		return nil, err
	}
	c, err := client.New("unix://"+sock, client.Options{Token: adminToken})
	if err != nil {
		return fail(err)
	}
	d.Client = c
	for deadline := time.Now().Add(60 * time.Second); ; {
		if err := c.Health(context.Background()); err == nil {
			return d, nil
		}
		if time.Now().After(deadline) {
			c.Close()
			return fail(fmt.Errorf("custodian serve did not start: %s", d.out.String()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var (
	beatSeq    atomic.Int64
	beatAgents = sync.OnceValue(func() []asdd.Agent { return asdd.DefaultConfig().Agents })
)

// beat is one proposal of the daemon benchmarks: an agent's heartbeat
// with a new tasks-completed count, run by the daemon through the ASDD rules
// (asdd.Apply) and committed durably.
func beat(ctx context.Context, c *client.Client, w int) error {
	agents := beatAgents()
	n := int(beatSeq.Add(1))
	_, err := c.Heartbeat(ctx, asdd.Beat{Agent: agents[w%len(agents)].Name, Status: asdd.HeartbeatActive, Completed: &n})
	return err
}

// DaemonProposals measures proposals/s through the daemon with clients
// concurrent clients, after one untimed proposal: the daemon reads and
// decodes the manifest on its first use, a one-time cost per daemon start
// that is not the cost of a commit.
func DaemonProposals(d *Daemon, name string, clients int, budget time.Duration) (Result, error) {
	ctx := context.Background()
	if err := beat(ctx, d.Client, 0); err != nil {
		return Result{}, err
	}
	lat, el, err := Run(clients, budget, 2*clients, func(w, i int) error { return beat(ctx, d.Client, w) })
	return Stats(name, clients, 0, lat, el), err
}

// HTTPRoundTrips measures the daemon's HTTP round trip alone (GET
// /v1/health: no store, no rules) with clients concurrent clients, on the
// same client and socket as the proposals: the ceiling of any operation.
func HTTPRoundTrips(d *Daemon, clients int, budget time.Duration) (Result, error) {
	ctx := context.Background()
	lat, el, err := Run(clients, budget, 2*clients, func(w, i int) error { return d.Client.Health(ctx) })
	return Stats(fmt.Sprintf("HTTP round trip alone (GET /v1/health), %d client(s)", clients), clients, 0, lat, el), err
}

// SliceReads measures reading one slice over the API, one client.
func SliceReads(d *Daemon, name string, slices int, budget time.Duration) (Result, error) {
	ctx := context.Background()
	lat, el, err := Run(1, budget, 100, func(w, i int) error {
		_, err := d.Client.Slice(ctx, fmt.Sprintf("SLICE-%05d", (i*7919)%slices))
		return err
	})
	return Stats(name, 1, 0, lat, el), err
}

// CLIProposals measures the same proposal as one custodian process each
// (no daemon): exe is the custodian binary.
func CLIProposals(exe, dir string, budget time.Duration, minOps int) (Result, error) {
	agents := asdd.DefaultConfig().Agents
	lat, el, err := Run(1, budget, minOps, func(w, i int) error {
		cmd := exec.Command(exe, "-C", dir, "heartbeat", "--agent", agents[i%len(agents)].Name, "--status", asdd.HeartbeatActive, "--done", strconv.Itoa(i+1))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Env = append(os.Environ(), "CUSTODIAN_SERVER=")
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("custodian heartbeat: %v: %s", err, out.String())
		}
		return nil
	})
	return Stats("CLI mode: one process per proposal", 1, 0, lat, el), err
}

// Memory is what a `custodian serve` process uses once it holds a manifest
// and served proposals on it.
type Memory struct {
	Tasks    int    `json:"tasks"`
	Slices   int    `json:"slices"`
	DocBytes int    `json:"doc_bytes"`
	RSS      uint64 `json:"rss_bytes"`      // resident set after the load
	PeakRSS  uint64 `json:"peak_rss_bytes"` // the process's peak resident set
}

// MeasureMemory seeds a manifest of slices×tasksPer tasks in dir, starts
// exe serve on it as a separate process, runs proposals for budget, and
// reads the daemon's memory from /proc (Linux; zeros elsewhere).
func MeasureMemory(exe, dir string, slices, tasksPer int, budget time.Duration) (Memory, Result, error) {
	doc, err := Manifest(slices, tasksPer)
	if err != nil {
		return Memory{}, Result{}, err
	}
	if err := Seed(dir, doc); err != nil {
		return Memory{}, Result{}, err
	}
	d, err := StartServe(exe, dir)
	if err != nil {
		return Memory{}, Result{}, err
	}
	r, err := DaemonProposals(d, fmt.Sprintf("daemon process, 4 clients, %d tasks", slices*tasksPer), 4, budget)
	if err != nil {
		d.Close()
		return Memory{}, r, err
	}
	m := Memory{Tasks: slices * tasksPer, Slices: slices, DocBytes: len(doc)}
	m.RSS, m.PeakRSS = procMemory(d.cmd.Process.Pid)
	return m, r, d.Close()
}

// procMemory reads a process's resident and peak resident set sizes.
func procMemory(pid int) (rss, peak uint64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		kb := func(v string) uint64 {
			n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			rss = kb(v)
		}
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			peak = kb(v)
		}
	}
	return rss, peak
}

// DaemonWrites measures the daemon without the ASDD rules: clients
// concurrent clients each overwrite the ASDD manifest with a whole value of
// about 1 KB (one slice, no revision check), as a human's raw write does:
// the document API checks it against the manifest's schema only, and it is
// committed like any proposal (group commit: concurrent writes share
// journal fsyncs; the snapshot is rewritten in the background). The
// documents plugins read from disk (the agent state, the task manifest, the
// cycles) would measure their snapshot rewrite at each commit instead. It
// shows what the HTTP layer, the store and group commit cost by themselves.
// It replaces the manifest: give it a daemon on a project of its own.
func DaemonWrites(d *Daemon, clients int, budget time.Duration) (Result, error) {
	ctx := context.Background()
	tmpl, err := Manifest(1, 0)
	if err != nil {
		return Result{}, err
	}
	const name = `"bench slice 0"`
	at := bytes.Index(tmpl, []byte(name))
	if at < 0 {
		return Result{}, fmt.Errorf("bench: no %s in the manifest", name)
	}
	lat, el, err := Run(clients, budget, 2*clients, func(w, i int) error {
		v := make([]byte, 0, len(tmpl)+16)
		v = append(v, tmpl[:at]...)
		v = fmt.Appendf(v, `"raw write %d of writer %d"`, i, w)
		v = append(v, tmpl[at+len(name):]...)
		_, err := d.Client.Write(ctx, asdd.Key, store.Change{Value: v, Actor: "bench"}, true)
		return err
	})
	return Stats(fmt.Sprintf("daemon, %d clients, 1 KB raw manifest writes (schema only, no rules)", clients), clients, len(tmpl), lat, el), err
}
