package doctest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// moduleRoot is the repository's root (README.md, docs/).
func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// docFiles lists README.md and docs/*.md (not the generated docs/commands/).
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(moduleRoot(), "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return append([]string{filepath.Join(moduleRoot(), "README.md")}, files...)
}

const defaultTimeout = 60 * time.Second

// daemonAdminToken is the admin token of the daemon a "daemon" block runs
// with; the block gets it as $CUSTODIAN_ADMIN_TOKEN.
const daemonAdminToken = "doctest-admin-token"

// TestDocExamples runs every shell example of README.md and docs/*.md (see
// the package doc). A failure names the file and line of the example.
func TestDocExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary for every example")
	}
	bin := testbin.Path(t)
	var mu sync.Mutex
	var failed []string
	t.Cleanup(func() {
		if len(failed) > 0 {
			sort.Strings(failed)
			t.Logf("examples that fail (fix the doc or the binary; see internal/doctest/doc.go for the format):\n  %s", strings.Join(failed, "\n  "))
		}
	})
	for _, path := range docFiles(t) {
		rel, _ := filepath.Rel(moduleRoot(), path)
		rel = filepath.ToSlash(rel)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := Parse(rel, string(text))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		indented := IndentedCommands(string(text))
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			for _, n := range indented {
				name := fmt.Sprintf("%s:%d", rel, n)
				t.Errorf("%s: a shell command in an indented block: fence it (```sh or ```console) so that it runs", name)
				mu.Lock()
				failed = append(failed, name+" (indented command)")
				mu.Unlock()
			}
			p := newProject(t, bin)
			for i := range blocks {
				b := &blocks[i]
				name := fmt.Sprintf("%s:%d", rel, b.Line)
				if b.Lang == "" {
					t.Errorf("%s: a fenced block without a language: tag it sh or console to have it run, or text, json, yaml… if it is not a shell example", name)
					mu.Lock()
					failed = append(failed, name+" (untagged block)")
					mu.Unlock()
					continue
				}
				if !b.Runs() {
					continue
				}
				ok := t.Run(fmt.Sprintf("line%d", b.Line), func(t *testing.T) { p.runBlock(t, b) })
				if !ok {
					mu.Lock()
					failed = append(failed, name)
					mu.Unlock()
				}
			}
		})
	}
}

// project is the scratch project a file's examples run in.
type project struct {
	dir  string
	env  []string
	etcd string     // host:port of the file's etcd server, once started
	file *testing.T // the file's test: what lives as long as the project ends with it
}

func newProject(t *testing.T, bin string) *project {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "project")
	home := filepath.Join(root, "home")
	binDir := filepath.Join(root, "bin")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{dir, home, binDir, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// custodian on PATH is the binary under test, nothing else.
	if err := os.Symlink(bin, filepath.Join(binDir, "custodian")); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CUSTODIAN_") || k == "PATH" || k == "HOME" || k == "TMPDIR" || k == "CI" || strings.HasPrefix(k, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home, "TMPDIR="+tmp,
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Docs", "GIT_AUTHOR_EMAIL=docs@example.com",
		"GIT_COMMITTER_NAME=Docs", "GIT_COMMITTER_EMAIL=docs@example.com", "NO_COLOR=1", "TERM=dumb")
	p := &project{dir: dir, env: env, file: t}
	if out, err := p.shell(context.Background(), "git init -q -b main"); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	return p
}

// shell runs a bash script in the project, in a process group of its own
// (killed whole when ctx ends), and returns its combined output.
func (p *project) shell(ctx context.Context, script string) (string, error) {
	return p.shellEnv(ctx, p.env, script)
}

// shellEnv is shell with another environment.
func (p *project) shellEnv(ctx context.Context, env []string, script string) (string, error) {
	cmd := exec.Command("bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = p.dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return out.String(), err
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return out.String(), fmt.Errorf("timed out: %w", ctx.Err())
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

var (
	loopbackRE    = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	etcdMembersRE = regexp.MustCompile(`10\.0\.0\.\d+:2379(,10\.0\.0\.\d+:2379)*`)
)

// startEtcd starts a single-member etcd server for the file's examples
// (once; it stops when the file's test ends) and returns its client
// address. Without Debian's etcd the block is skipped, except in CI.
func (p *project) startEtcd(t *testing.T) string {
	if p.etcd != "" {
		return p.etcd
	}
	exe, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("etcd is not installed but $CI is set: the etcd examples must run in CI (.ci/install installs it)")
		}
		t.Skip("etcd is not installed (apt-get install etcd-server): the etcd examples do not run")
	}
	// A free port can be taken by another process before etcd binds it
	// (a busy machine runs many tests): start again on new ports then.
	for attempt := 1; ; attempt++ {
		client, peer := "127.0.0.1:"+freePort(t), "127.0.0.1:"+freePort(t)
		dataDir := filepath.Join(filepath.Dir(p.dir), fmt.Sprintf("etcd-%d", attempt))
		cmd := exec.Command(exe, "--name", "doc", "--data-dir", dataDir,
			"--listen-client-urls", "http://"+client, "--advertise-client-urls", "http://"+client,
			"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
			"--initial-cluster", "doc=http://"+peer, "--log-level", "error")
		var log syncbuf.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		p.file.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
		healthy, err := etcdHealthy(client, exited, 60*time.Second)
		if healthy {
			p.etcd = client
			return client
		}
		if strings.Contains(log.String(), "address already in use") && attempt < 5 {
			t.Logf("etcd lost its port to another process (%s); starting it again", client)
			continue
		}
		t.Fatalf("etcd did not become healthy: %v\n%s", err, log.String())
	}
}

// etcdHealthy waits until the etcd at client answers its health check, the
// process exits, or the time is up.
func etcdHealthy(client string, exited <-chan struct{}, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		resp, err := http.Get("http://" + client + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return true, nil
			}
		}
		select {
		case <-exited:
			return false, fmt.Errorf("etcd exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			return false, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *project) runBlock(t *testing.T, b *Block) {
	timeout := b.Do.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	where := fmt.Sprintf("%s:%d", b.File, b.Line)
	var substs []func(string) string
	subst := func(s string) string {
		for _, f := range substs {
			s = f(s)
		}
		return s
	}
	if b.Do.Etcd {
		addr := p.startEtcd(t)
		substs = append(substs, func(s string) string { return etcdMembersRE.ReplaceAllString(s, addr) })
	}
	env := p.env
	if b.Do.Daemon {
		addr := p.startDaemon(t)
		substs = append(substs, func(s string) string { return strings.ReplaceAll(s, "127.0.0.1:7420", addr) })
		env = append(append([]string(nil), env...), "CUSTODIAN_ADMIN_TOKEN="+daemonAdminToken)
	}
	shell := func(ctx context.Context, script string) (string, error) { return p.shellEnv(ctx, env, script) }
	switch {
	case b.Do.LongRunning:
		for i, line := range b.Body {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			p.longRunning(t, fmt.Sprintf("%s:%d", b.File, b.Line+1+i), line)
		}
	case b.Lang == "sh":
		script := subst(strings.Join(b.Body, "\n"))
		out, err := shell(ctx, script)
		if code := exitCode(err); code != b.Do.Exit {
			t.Errorf("%s: the example exited %d, want %d (%v):\n%s\n--- output:\n%s", where, code, b.Do.Exit, err, indent(script), indent(out))
		}
	case b.Lang == "console":
		cmds, err := b.Commands()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cmds {
			out, err := shell(ctx, subst(c.Text))
			code := exitCode(err)
			want := make([]string, len(c.Want))
			for i, w := range c.Want {
				want[i] = subst(w)
			}
			got := strings.Split(out, "\n")
			if code != c.Exit || !Match(want, got) {
				t.Errorf("%s:%d: $ %s\nexit %d (want %d); output:\n%s\n--- want:\n%s", b.File, c.Line, c.Text, code, c.Exit, indent(out), indent(strings.Join(want, "\n")))
			}
		}
	}
}

// startDaemon starts custodian serve in the project on a free loopback
// port, stops it when the test ends, and returns its host:port.
func (p *project) startDaemon(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(lookPath(t, p.env), "serve", "--addr", "127.0.0.1:0", "--monitor-every", "0", "--log-level", "warn", "--admin-token", daemonAdminToken)
	cmd.Dir, cmd.Env = p.dir, p.env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan string, 1)
	var log bytes.Buffer
	var mu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := loopbackRE.FindString(sc.Text()); m != "" && strings.HasPrefix(sc.Text(), "dashboard: ") {
				select {
				case addrs <- m:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case a := <-addrs:
		return a
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("custodian serve did not start:\n%s", log.String())
	}
	return ""
}

func lookPath(t *testing.T, env []string) string {
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(path) {
				if fi, err := os.Stat(filepath.Join(d, "custodian")); err == nil && !fi.IsDir() {
					return filepath.Join(d, "custodian")
				}
			}
		}
	}
	t.Fatal("custodian is not on the examples' PATH")
	return ""
}

// longRunning starts a server command, checks that it is still running
// after 2 s, and stops it. A loopback port in the line is replaced by a
// free one, and --addr 127.0.0.1:0 is added when the line gives none, so
// that examples never depend on a fixed port being free.
func (p *project) longRunning(t *testing.T, where, line string) {
	t.Helper()
	line = loopbackRE.ReplaceAllStringFunc(line, func(string) string { return "127.0.0.1:" + freePort(t) })
	if code, _, _ := strings.Cut(line, "#"); !strings.Contains(code, "--addr") && strings.HasPrefix(code, "custodian serve") {
		line = strings.TrimSpace(code) + " --addr 127.0.0.1:0"
	}
	cmd := exec.Command("bash", "--noprofile", "--norc", "-c", "exec "+line)
	cmd.Dir, cmd.Env = p.dir, p.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Errorf("%s: %s\nended within 2 s (%v); a server should keep running:\n%s", where, line, err, indent(out.String()))
		return
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Errorf("%s: %s did not stop on SIGINT within 15 s", where, line)
	}
}

func freePort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "    (nothing)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
