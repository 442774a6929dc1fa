package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/client"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store"
)

// Issue 18 item 13: watch streams are capped: one past Options.MaxWatchers
// is refused with 503 and Retry-After, and a slot freed is taken again.
func TestWatchStreamsCapped(t *testing.T) {
	d := start(t, server.Options{MaxWatchers: 2})
	url := d.url + "/v1/watch?key=state/doc.json"
	_, drop1 := sse(t, url, "")
	_, drop2 := sse(t, url, "")
	defer drop2()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "UNAVAILABLE") {
		t.Fatalf("third stream: %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	drop1()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		code := resp.StatusCode
		resp.Body.Close()
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a freed slot was not taken again: %d", code)
		}
		time.Sleep(10 * time.Millisecond)
	}
	http.DefaultClient.CloseIdleConnections()
}

// Streams are fed from memory; one that starts further back than the hub
// keeps (256 commits) reads the journal up to there, then joins the others,
// with no gap and no repeat, while commits go on.
func TestWatchFanOutCatchesUp(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	const key = "state/doc.json"
	url := d.url + "/v1/watch?key=" + key
	if _, err := d.c.Update(ctx, key, setN(1), store.Create()); err != nil {
		t.Fatal(err)
	}
	// Each stream is read as it comes, by its own goroutine, as a client
	// does (churn).
	read := func(name, url string, from uint64) <-chan error {
		errc := make(chan error, 1)
		go func() { errc <- churn(url, name, from+1, 1<<30, 320) }()
		return errc
	}
	done := []<-chan error{read("live", url+"&from=0", 0)}
	for i := 2; i <= 300; i++ {
		if _, err := d.c.Update(ctx, key, setN(i)); err != nil {
			t.Fatal(err)
		}
	}
	done = append(done, read("late", url+"&from=0", 0), read("mid", url+"&from=100", 100))
	for i := 301; i <= 320; i++ {
		if _, err := d.c.Update(ctx, key, setN(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, errc := range done {
		select {
		case err := <-errc:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a stream did not deliver revisions up to 320 in 30 s")
		}
	}
}

// BenchmarkCommitWithIdleWatchers measures a commit (an ASDD heartbeat
// through the daemon over loopback HTTP, back to back) with no watch
// stream, with 2,000 idle streams (on a document nobody changes: issue 18
// item 13 wants this within 2x of none; it was 0.7 ms against 39 ms when
// every stream polled the journal) and with 2,000 live streams (on the
// manifest itself: each commit is written to every stream, so the cost
// grows with the bytes delivered). The streams are held by another
// process, as agents' and dashboards' are: raw connections that read and
// discard what they get.
//
//	go test ./server -run XXX -bench CommitWithIdleWatchers -benchtime 2000x
func BenchmarkCommitWithIdleWatchers(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
		key  string
	}{{"watchers=0", 0, ""}, {"idle=2000", 2000, "state/idle.json"}, {"live=2000", 2000, asdd.Key}} {
		b.Run(bc.name, func(b *testing.B) {
			doc, err := bench.Manifest(10, 0)
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			if err := bench.Seed(dir, doc); err != nil {
				b.Fatal(err)
			}
			d := startIn(b, dir, server.Options{MaxWatchers: bc.n + 16})
			if bc.n > 0 {
				if _, err := d.c.Update(context.Background(), "state/idle.json", setN(1), store.Create()); err != nil {
					b.Fatal(err)
				}
				holdWatchers(b, strings.TrimPrefix(d.url, "http://"), bc.key, bc.n)
			}
			ctx := context.Background()
			agents := asdd.DefaultConfig().Agents
			k := 0
			b.ResetTimer()
			for b.Loop() {
				k++
				if _, err := d.c.Heartbeat(ctx, asdd.Beat{Agent: agents[k%len(agents)].Name, Status: "ACTIVE", Completed: &k}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// holdWatchers starts this test binary again as TestHelperWatchers, which
// opens n watch streams of key to addr and reads them until its stdin closes
// (at the end of b).
func holdWatchers(b *testing.B, addr, key string, n int) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWatchers$")
	cmd.Env = append(os.Environ(), "WATCHERS_ADDR="+addr, "WATCHERS_KEY="+key, fmt.Sprintf("WATCHERS_N=%d", n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		b.Fatalf("watchers: %q %v", line, err)
	}
}

// TestHelperWatchers is the process holdWatchers starts; it does nothing
// in a normal run.
func TestHelperWatchers(t *testing.T) {
	addr := os.Getenv("WATCHERS_ADDR")
	if addr == "" {
		t.Skip("a helper process for BenchmarkCommitWithIdleWatchers")
	}
	n, _ := strconv.Atoi(os.Getenv("WATCHERS_N"))
	ready := make(chan error, n)
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "GET /v1/watch?key=%s HTTP/1.1\r\nHost: %s\r\n\r\n", os.Getenv("WATCHERS_KEY"), addr)
		go func() {
			br := bufio.NewReader(c)
			line, err := br.ReadString('\n')
			if err == nil && !strings.Contains(line, " 200 ") {
				err = fmt.Errorf("watch: %s", line)
			}
			ready <- err
			_, _ = io.Copy(io.Discard, br)
		}()
	}
	for range n {
		if err := <-ready; err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	for _, c := range conns {
		c.Close()
	}
}

// Streams that come and go (resuming with Last-Event-ID) while commits go
// on each see every revision once, in order.
func TestWatchFanOutUnderChurn(t *testing.T) {
	d := start(t, server.Options{})
	ctx := context.Background()
	const key, total = "state/churn.json", 400
	if _, err := d.c.Update(ctx, key, setN(0), store.Create()); err != nil {
		t.Fatal(err)
	}
	url := d.url + "/v1/watch?key=" + key + "&from=0"
	done := make(chan error, 8)
	for w := range 8 {
		go func() { done <- churn(url, fmt.Sprintf("stream %d", w), 1, 20+w*7, total+1) }()
	}
	for i := 1; i <= total; i++ {
		if _, err := d.c.Update(ctx, key, setN(i)); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("streams did not finish")
		}
	}
}

// churn reads revisions first to last from url, reconnecting with
// Last-Event-ID after every n, and checks each arrives once, in order. A
// stream the server ends (its client fell behind by a socket's buffers:
// fanOutWriteTimeout, likely on a loaded machine) is resumed the same way,
// as a client does.
func churn(url, name string, first uint64, n int, last uint64) error {
	next, ended := first, 0
	for next <= last {
		req, _ := http.NewRequest("GET", url, nil)
		if next > 1 {
			req.Header.Set("Last-Event-ID", fmt.Sprint(next-1))
		}
		tr := &http.Transport{}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			return err
		}
		br := bufio.NewReader(resp.Body)
		for i := 0; i < n && next <= last; {
			var ev client.Event
			ok, err := client.ReadEvent(br, &ev)
			if err != nil {
				if ended++; ended > 100 {
					resp.Body.Close()
					return fmt.Errorf("%s: ended 100 times, last at %d: %v", name, next, err)
				}
				break // resumed from next
			}
			if !ok {
				continue
			}
			var c store.Commit
			if err := json.Unmarshal(ev.Data, &c); err != nil || ev.Type != "commit" {
				resp.Body.Close()
				return fmt.Errorf("%s: event %s %s", name, ev.Type, ev.Data)
			}
			if c.Rev != next {
				resp.Body.Close()
				return fmt.Errorf("%s: got %d, want %d", name, c.Rev, next)
			}
			next++
			i++
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
	}
	return nil
}
