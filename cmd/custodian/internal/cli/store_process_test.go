package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/internal/syncbuf"
	"github.com/custodian-dev/custodian/internal/testbin"
)

// TestSocketlessDaemonIsNamed: with `serve --socket ""` a
// command run directly on the files cannot reach the daemon; it must not
// wait for the lock the daemon holds for its lifetime, but fail within a
// second naming the daemon (pid, address), exit 4.
func TestSocketlessDaemonIsNamed(t *testing.T) {
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
	out := &syncbuf.Buffer{}
	cmd := exec.Command(p.bin, "-C", p.dir, "serve", "--socket", "", "--addr", addr, "--monitor-every", "0", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()
	c, err := client.New("http://"+addr, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := c.Get(ctx, asdd.Key) // the daemon takes the manifest's lock
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not answering: %v\n%s", err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	direct := &proc{t: t, bin: p.bin, dir: p.dir, env: []string{"CUSTODIAN_SERVER="}}
	for _, args := range [][]string{{"status"}, {"slice", "add", "S-2"}, {"get", asdd.Key}, {"verify", asdd.Key}} {
		start := time.Now()
		got, code := direct.run(args...)
		took := time.Since(start)
		if code != 4 || took > time.Second || !strings.Contains(got, fmt.Sprintf("pid %d", cmd.Process.Pid)) || !strings.Contains(got, addr) {
			t.Errorf("custodian %s with a socketless daemon: exit %d after %v\n%s", strings.Join(args, " "), code, took, got)
		}
	}
	// Through the daemon, the same commands work.
	viaTCP := &proc{t: t, bin: p.bin, dir: p.dir, env: []string{"CUSTODIAN_SERVER=http://" + addr}}
	viaTCP.want(0, "status")
	// Issue 18 item 16: --server before the subcommand is accepted.
	direct.want(0, "--server", "http://"+addr, "status")
	direct.want(0, "--server=http://"+addr, "get", asdd.Key)
}

// TestDaemonNoticesDirectEdits: while `custodian serve` runs,
// a direct edit of the ASDD manifest is noticed at once (fsnotify): a
// valid one (a rename) is adopted as a commit by direct-edit
// (direct_edits: adopt, the default); one the domain's rules refuse (a
// slice moved to DONE by hand) is kept aside, the file on disk goes back
// to the committed value and an escalation notice says why; each is
// reported on the daemon's stdout.
func TestDaemonNoticesDirectEdits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	p := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want(0, "init")
	p.want(0, "slice", "add", "S-1")
	d := startServe(t, p.dir)
	defer func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		if code := d.wait(t); code != 0 {
			t.Errorf("serve exit %d\n%s", code, d.out.String())
		}
	}()
	manifest := filepath.Join(p.dir, filepath.FromSlash(asdd.Key))
	edit := func(f func(m map[string]any)) {
		t.Helper()
		b, err := os.ReadFile(manifest)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ = json.MarshalIndent(m, "", "  ")
		if err := os.WriteFile(manifest, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slice := func(m map[string]any) map[string]any { return m["slices"].([]any)[0].(map[string]any) }
	await := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				ents, _ := os.ReadDir(filepath.Dir(manifest))
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				b, _ := os.ReadFile(manifest)
				j, _ := os.ReadFile(filepath.Join(filepath.Dir(manifest), "journal.ndjson"))
				t.Fatalf("%s: not within 5 s\n%s\nfiles: %v\nmanifest: %s\njournal: %s", what, d.out.String(), names, b, j)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	served := func() *asdd.Manifest {
		doc, err := d.c.Get(context.Background(), asdd.Key)
		if err != nil {
			t.Fatal(err)
		}
		m, err := asdd.Decode(doc.Value)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	edit(func(m map[string]any) { slice(m)["name"] = "renamed by hand" })
	await("adoption", func() bool { return served().Slices[0].Name == "renamed by hand" })
	hist := p.want(0, "history", asdd.Key)
	if !strings.Contains(hist, "direct-edit") {
		t.Fatalf("history has no direct-edit commit:\n%s", hist)
	}
	await("report", func() bool { return strings.Contains(d.out.String(), "adopted as revision") })

	// The file says DONE, the daemon says DISCOVERY: the lifecycle is
	// the rules', so the edit is refused and the file put back.
	edit(func(m map[string]any) { slice(m)["status"] = "DONE" })
	await("rejection", func() bool { return strings.Contains(d.out.String(), "rejected (INVALID_TRANSITION") })
	await("the file restored", func() bool {
		b, _ := os.ReadFile(manifest)
		return strings.Contains(string(b), `"DISCOVERY"`) && !strings.Contains(string(b), `"DONE"`)
	})
	if got := served().Slices[0].Status; got != "DISCOVERY" {
		t.Fatalf("served status %s after a rejected edit", got)
	}
	notices, _ := filepath.Glob(filepath.Join(p.dir, ".asdd", "escalations", "direct-edit-*.md"))
	aside, _ := filepath.Glob(manifest + ".unjournaled-*")
	if len(notices) != 1 || len(aside) != 1 {
		t.Fatalf("notices %v, kept aside %v", notices, aside)
	}
	if b, _ := os.ReadFile(aside[0]); !strings.Contains(string(b), `"DONE"`) {
		t.Fatal("the rejected edit is not what was kept aside")
	}
	p.want(0, "verify")
}

// TestDaemonRefusesFIFOArtifacts: proposals naming a FIFO as
// their artifact, sent to the daemon at once, are each refused promptly
// (exit 2) and pin no thread of the daemon.
func TestDaemonRefusesFIFOArtifacts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	p := &proc{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.want(0, "init")
	p.want(0, "slice", "add", "S-1")
	os.MkdirAll(filepath.Join(p.dir, "specs", "S-1"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(p.dir, "specs", "S-1", "intent.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startServe(t, p.dir)
	defer func() {
		d.cmd.Process.Signal(syscall.SIGTERM)
		d.wait(t)
	}()
	threads := func() int {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
		if err != nil {
			t.Skip("no /proc")
		}
		for _, l := range strings.Split(string(b), "\n") {
			if n, ok := strings.CutPrefix(l, "Threads:"); ok {
				var v int
				fmt.Sscan(strings.TrimSpace(n), &v)
				return v
			}
		}
		return 0
	}
	before := threads()
	const n = 24
	type result struct {
		out  string
		code int
		took time.Duration
	}
	results := make(chan result, n)
	for range n {
		go func() {
			start := time.Now()
			out, code := p.run("propose", "--agent", "discovery", "--slice", "S-1", "--score", "0.97", "--artifact", "intent=specs/S-1/intent.md")
			results <- result{out, code, time.Since(start)}
		}()
	}
	for range n {
		r := <-results
		if r.code != 2 || !strings.Contains(r.out, "intent.md") || r.took > 10*time.Second {
			t.Errorf("propose with a FIFO artifact: exit %d after %v\n%s", r.code, r.took, r.out)
		}
	}
	if after := threads(); after > before+8 {
		t.Errorf("daemon threads %d after the proposals, %d before: requests are pinned", after, before)
	}
	p.want(0, "status") // the daemon still answers
}
