package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/admincred"
	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// daemonProc is `custodian serve` running as a separate process.
type daemonProc struct {
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan error
	c    *client.Client
}

func startServe(t *testing.T, dir string, args ...string) *daemonProc {
	t.Helper()
	out := &syncbuf.Buffer{}
	cmd := exec.Command(testbin.Path(t), append([]string{"-C", dir, "serve", "--addr", "", "--monitor-every", "0", "--log-level", "warn"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-d.done
		}
	})
	sock := filepath.Join(dir, cmdutil.DefaultSocket)
	// The test's client is the human's: it holds the admin token (the
	// project's credential, which the daemon takes unless --admin-token).
	token, _, err := admincred.Ensure(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		if a == "--admin-token" && i+1 < len(args) {
			token = args[i+1]
		}
	}
	c, err := client.New("unix://"+sock, client.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	d.c = c
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Health(ctx)
		cancel()
		if err == nil {
			return d
		}
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("serve exited: %v\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not answering: %v\n%s", err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *daemonProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("daemon did not stop\n%s", d.out.String())
	}
	d.c.Close()
	return d.cmd.ProcessState.ExitCode()
}

var volatile = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z|\d+(\.\d+)?(ms|s|m)\b|sha256:[0-9a-f]{64}`)

// Every command gives the same output and exit code through the daemon as
// directly on the files; a second daemon is refused naming the first's pid;
// SIGTERM leaves files that verify.
func TestServeSameResultsAsDirect(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	bin := testbin.Path(t)
	direct := &proc{t: t, bin: bin, dir: t.TempDir()}
	served := &proc{t: t, bin: bin, dir: t.TempDir()}
	// serve needs a project directory (it refuses elsewhere, creating
	// nothing); init then goes through the daemon.
	for _, p := range []*proc{direct, served} {
		if err := os.Mkdir(filepath.Join(p.dir, ".asdd"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d := startServe(t, served.dir)

	steps := [][]string{
		{"init", "--sprint", "S1"},
		{"slice", "add", "S-1", "--name", "Login"},
		{"lock", "S-1", "--holder", "alice"},
		{"propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.97", "--artifact", "intent=specs/S-1/intent.md"},
		{"unlock", "S-1", "--holder", "alice"},
		{"propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.97", "--artifact", "intent=specs/S-1/intent.md"},
		{"propose", "--agent", "spec", "--slice", "S-1", "--score", "0.90", "--artifact", "requirements=specs/S-1/requirements.md"},
		{"propose", "--agent", "spec", "--slice", "S-1", "--score", "0.60", "--artifact", "requirements=specs/S-1/requirements.md", "--uncertainty", "unsure"},
		{"--json", "slice", "show", "S-1"},
		{"resolve", "S-1", "--role", "TL"},
		{"resolve", "S-1", "--role", "TL", "--rationale", "clarified", "--root-cause", "vague intent"},
		{"--json", "resolve", "S-1", "--role", "TL", "--rationale", "again"},
		{"review", "--project", "--role", "TL"},
		{"heartbeat", "--agent", "spec", "--status", "ACTIVE", "--slice", "S-1"},
		{"status"},
		{"--json", "history"},
		{"get", ".asdd/state/manifest.json", "--rev", "2"},
		{"diff", ".asdd/state/manifest.json", "1", "3"},
		{"verify"},
		{"slice", "show", "NOPE"},
		{"propose", "--agent", "nobody", "--slice", "S-1", "--score", "2"},
	}
	for _, p := range []*proc{direct, served} {
		p.write("specs/S-1/intent.md", "# intent\n")
		p.write("specs/S-1/requirements.md", "# requirements\n")
	}
	for _, args := range steps {
		outD, codeD := direct.run(args...)
		outS, codeS := served.run(args...)
		if codeD != codeS {
			t.Fatalf("custodian %s: exit %d direct, %d through the daemon\ndirect: %s\ndaemon: %s", strings.Join(args, " "), codeD, codeS, outD, outS)
		}
		a, b := volatile.ReplaceAllString(outD, "<v>"), volatile.ReplaceAllString(outS, "<v>")
		if a != b {
			t.Fatalf("custodian %s: output differs\ndirect:\n%s\ndaemon:\n%s", strings.Join(args, " "), outD, outS)
		}
	}

	// The commits went through the daemon.
	if n := commitsServed(t, served.dir); n < 5 {
		t.Fatalf("the daemon counted %v commits", n)
	}

	// A second daemon on the same project is refused and names the holder.
	out, code := served.run("serve", "--addr", "", "--monitor-every", "0")
	if code != 4 || !strings.Contains(out, fmt.Sprintf("pid %d", d.cmd.Process.Pid)) {
		t.Fatalf("second daemon: exit %d, want 4 naming pid %d:\n%s", code, d.cmd.Process.Pid, out)
	}

	// SIGTERM: a clean stop, files whole, socket gone.
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d.wait(t); code != 0 {
		t.Fatalf("serve exit %d after SIGTERM\n%s", code, d.out.String())
	}
	if _, err := os.Stat(filepath.Join(served.dir, cmdutil.DefaultSocket)); !os.IsNotExist(err) {
		t.Fatalf("socket left behind: %v", err)
	}
	served.want(0, "verify")
	// The same document: a snapshot's member order is not part of it (a
	// member added after a slice was written goes after its others, and
	// the daemon writes its snapshot only now and then, direct mode after
	// every commit).
	a, _ := os.ReadFile(filepath.Join(direct.dir, asdd.Key))
	b, _ := os.ReadFile(filepath.Join(served.dir, asdd.Key))
	if x, y := sameJSON(t, volatile.ReplaceAllString(string(a), "<v>")), sameJSON(t, volatile.ReplaceAllString(string(b), "<v>")); x != y {
		t.Fatalf("manifests differ\ndirect:\n%s\ndaemon:\n%s", a, b)
	}
}

// sameJSON returns doc's JSON value re-encoded with its members in key
// order.
func sameJSON(t *testing.T, doc string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The daemon killed with SIGKILL in the middle of a load of commits, then
// restarted: every acknowledged commit is in the journal, with the hash the
// client was given, and the files verify.
func TestServeKill9UnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".asdd"), 0o755); err != nil { // a project
		t.Fatal(err)
	}
	// Small journal segments: the daemon is killed while it seals them.
	const segments = "--journal-segment-size=8KB"
	d := startServe(t, dir, segments)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := d.c.Op(ctx, "init", asdd.Init{}); err != nil {
		t.Fatal(err)
	}
	type ack struct {
		key  string
		rev  uint64
		hash string
		who  string
	}
	var (
		mu   sync.Mutex
		acks []ack
		n    atomic.Int64
		wg   sync.WaitGroup
	)
	agents := asdd.DefaultConfig().Agents
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				var a ack
				if w < 8 {
					// Agents' heartbeats, run by the daemon on the manifest.
					done := w*100000 + i
					r, err := d.c.Heartbeat(ctx, asdd.Beat{Agent: agents[w].Name, Status: "ACTIVE", Completed: &done})
					if err != nil {
						return
					}
					a = ack{key: asdd.Key, rev: r.Revision, who: agents[w].Name}
				} else {
					// Generic documents, one per writer, through CAS.
					key := fmt.Sprintf("load/w%02d.json", w)
					res, err := d.c.Update(ctx, key, func(cur store.Document) (store.Change, error) {
						return store.Change{Value: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)), Actor: key}, nil
					}, store.Create())
					if err != nil {
						return
					}
					a = ack{key: key, rev: res.Revision, hash: res.Record.Hash, who: key}
				}
				mu.Lock()
				acks = append(acks, a)
				mu.Unlock()
				n.Add(1)
			}
		}()
	}
	sealed := func() []string {
		segs, _ := filepath.Glob(filepath.Join(dir, ".asdd", "state", "journal.*-*.ndjson"))
		return segs
	}
	for deadline := time.Now().Add(2 * time.Minute); n.Load() < 400 || len(sealed()) < 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if len(sealed()) < 2 {
		t.Fatalf("no journal segments sealed under load:\n%s", d.out.String())
	}
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.wait(t)
	cancel()
	wg.Wait()

	// Restarted: the daemon recovers and serves everything acknowledged.
	d2 := startServe(t, dir, segments)
	hist := map[string]map[uint64]store.Record{}
	for _, a := range acks {
		if hist[a.key] == nil {
			recs, err := d2.c.History(context.Background(), a.key, 0, 0)
			if err != nil {
				t.Fatalf("history %s: %v", a.key, err)
			}
			hist[a.key] = map[uint64]store.Record{}
			for _, r := range recs {
				hist[a.key][r.Rev] = r
			}
		}
		r, ok := hist[a.key][a.rev]
		switch {
		case !ok:
			t.Fatalf("acknowledged commit %s@%d lost", a.key, a.rev)
		case a.hash != "" && r.Hash != a.hash:
			t.Fatalf("%s@%d: hash %s, acknowledged %s", a.key, a.rev, r.Hash, a.hash)
		case r.Actor != a.who:
			t.Fatalf("%s@%d: actor %s, acknowledged %s", a.key, a.rev, r.Actor, a.who)
		}
	}
	t.Logf("%d acknowledged commits before SIGKILL, all present; %d journal segments", len(acks), len(sealed()))
	// The snapshot the killed daemon left (its revision named by a mark,
	// not by a sum) was recognised, not taken for a hand edit.
	for _, pat := range []string{"*.unjournaled-*", "*.corrupt-*"} {
		if aside, _ := filepath.Glob(filepath.Join(dir, ".asdd", "state", pat)); len(aside) > 0 {
			t.Fatalf("recovery moved a daemon snapshot aside: %v\n%s", aside, d2.out.String())
		}
	}
	if err := d2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := d2.wait(t); code != 0 {
		t.Fatalf("restarted daemon exit %d\n%s", code, d2.out.String())
	}
	st, err := file.Open(dir, file.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := st.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := st.Verify(context.Background(), k); err != nil {
			t.Fatalf("verify %s: %v", k, err)
		}
	}
}

// commitsServed reads custodian_commits_total from the daemon's metrics.
func commitsServed(t *testing.T, dir string) float64 {
	t.Helper()
	sock := filepath.Join(dir, cmdutil.DefaultSocket)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://custodian/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^custodian_commits_total (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no commit counter in\n%s", b)
	}
	var n float64
	fmt.Sscan(string(m[1]), &n)
	return n
}

// The daemon runs the heartbeat monitor: an ACTIVE agent that goes silent
// past its timeout gets a retry request without anyone running a command.
func TestServeRunsTheMonitor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	p := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want(0, "init")
	cfgPath := filepath.Join(p.dir, ".asdd", "config.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	short := strings.Replace(string(cfg), "timeout: 15m", "timeout: 1s", 1)
	if short == string(cfg) {
		t.Fatal("heartbeat timeout not found in config.yaml")
	}
	if err := os.WriteFile(cfgPath, []byte(short), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startServe(t, p.dir, "--monitor-every", "200ms")
	ctx := context.Background()
	if _, err := d.c.Heartbeat(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		doc, err := d.c.Get(ctx, asdd.Key)
		if err != nil {
			t.Fatal(err)
		}
		m, err := asdd.Decode(doc.Value)
		if err != nil {
			t.Fatal(err)
		}
		if h := m.AgentHeartbeats[asdd.HeartbeatKey("spec")]; h != nil && h.RetryRequestedAt != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no retry request after 20s\n%s", d.out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The heartbeat plus the monitor's own commit: the metrics count both
	// (the monitor counts its commit just after it is visible).
	for n := commitsServed(t, p.dir); n < 2; n = commitsServed(t, p.dir) {
		if time.Now().After(deadline) {
			t.Fatalf("custodian_commits_total %v after a heartbeat and the monitor's retry request, want >= 2", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := d.wait(t); code != 0 {
		t.Fatalf("serve exit %d after SIGINT\n%s", code, d.out.String())
	}
}

// The agents' ASDD commands run as the daemon's own operations: a
// heartbeat or a lock through the daemon is one POST /v1/asdd/{op}, not a
// read and a compare-and-swap of the whole manifest.
func TestServeRunsAgentCommandsAsOperations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	// A project deep in the filesystem too: its socket's path is over the
	// kernel's 108 bytes (package unixsock).
	for _, depth := range []int{0, 150} {
		t.Run(fmt.Sprintf("project path of %d+ bytes", depth), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for len(dir) < depth {
				dir = filepath.Join(dir, "a-project-deep-in-the-filesystem")
			}
			p := &proc{t: t, bin: testbin.Path(t), dir: dir}
			p.want(0, "init")
			p.want(0, "slice", "add", "S-1")
			d := startServe(t, p.dir, "--log-level", "debug")
			p.want(0, "heartbeat", "--agent", "spec", "--status", "ACTIVE")
			p.want(0, "lock", "S-1", "--holder", "alice")
			if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := d.wait(t); code != 0 {
				t.Fatalf("serve exit %d\n%s", code, d.out.String())
			}
			log := d.out.String()
			for _, want := range []string{"path=/v1/asdd/heartbeat", "path=/v1/asdd/lock"} {
				if !strings.Contains(log, want) {
					t.Errorf("the daemon's log has no %s:\n%s", want, log)
				}
			}
			if strings.Contains(log, "method=PUT") {
				t.Errorf("an agent command wrote the whole manifest:\n%s", log)
			}
			if _, err := os.Stat(filepath.Join(dir, cmdutil.DefaultSocket)); err == nil {
				t.Errorf("the socket is still there after the daemon stopped")
			}
		})
	}
}

// Over TCP the human actions and every raw write of the manifest need the
// admin token ($CUSTODIAN_ADMIN_TOKEN for the CLI): an agent with only the
// agents' token cannot resolve a halt or roll the manifest back by writing
// it whole, which would skip the rules. The agents' operations need no
// more than before.
func TestServeTCPHumanActionsNeedAdminToken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want(0, "init")
	p.want(0, "slice", "add", "S-1")
	p.write("specs/S-1/intent.md", "# intent\n")
	d := startServe(t, p.dir, "--addr", addr, "--admin-token", "adm", "--token", "agents")
	defer func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		if code := d.wait(t); code != 0 {
			t.Errorf("serve exit %d\n%s", code, d.out.String())
		}
	}()
	// The agent cannot read the human's admin credential (its sandbox
	// hides it): a configuration directory of its own.
	agent := &proc{t: t, bin: p.bin, dir: p.dir, env: []string{"CUSTODIAN_SERVER=http://" + addr, "CUSTODIAN_ADMIN_TOKEN=", "CUSTODIAN_TOKEN=agents", "XDG_CONFIG_HOME=" + t.TempDir()}}
	human := &proc{t: t, bin: p.bin, dir: p.dir, env: []string{"CUSTODIAN_SERVER=http://" + addr, "CUSTODIAN_ADMIN_TOKEN=adm"}}

	agent.want(0, "heartbeat", "--agent", "discovery", "--status", "ACTIVE")
	agent.want(3, "propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.60", "--uncertainty", "vague", "--artifact", "intent=specs/S-1/intent.md")
	// The daemon rewrites the snapshot file later: read through it.
	manifest := func() *asdd.Manifest {
		doc, err := d.c.Get(context.Background(), asdd.Key)
		if err != nil {
			t.Fatal(err)
		}
		m, err := asdd.Decode(doc.Value)
		if err != nil {
			t.Fatal(err)
		}
		m.Revision = doc.Revision
		return m
	}
	rev := manifest().Revision
	for _, args := range [][]string{
		{"resolve", "S-1", "--role", "TL", "--rationale", "mine"},
		{"rollback", asdd.Key, "--to", "1", "--reason", "undo the halt"},
		{"init", "--sprint", "S2"},
	} {
		out := agent.want(6, args...)
		if !strings.Contains(out, "UNAUTHORIZED") || !strings.Contains(out, "CUSTODIAN_ADMIN_TOKEN") {
			t.Errorf("custodian %s without the admin token: %s", strings.Join(args, " "), out)
		}
	}
	if got := manifest().Revision; got != rev {
		t.Fatalf("refused writes changed the manifest: revision %d, was %d", got, rev)
	}
	human.want(0, "resolve", "S-1", "--role", "TL", "--rationale", "clarified")
	if s := manifest().Slices[0]; s.Status != "DISCOVERY" || s.HaltedAgent != "" {
		t.Fatalf("slice after resolve: %+v", s)
	}
	human.want(0, "rollback", asdd.Key, "--to", fmt.Sprint(rev), "--reason", "undo the resolve")
}
