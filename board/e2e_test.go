package board_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/custodian-dev/custodian/internal/testbin"
)

var docsImg = flag.Bool("docs-img", false, "also write the board's screenshot to docs/img/board.png")

// chromium finds Debian's browser. Without it the browser tests skip —
// unless $CI is set: CI installs it (.ci/install) and must run them.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed but $CI is set: the browser tests must run in CI (.ci/install installs it)")
	}
	t.Skip("chromium is not installed: run .ci/install (apt-get install chromium) to run the dashboard's browser tests")
	return ""
}

// artifacts is where screenshots go: $CUSTODIAN_ARTIFACTS, or the test's
// temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("CUSTODIAN_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// project is a project directory and the custodian binary.
type project struct {
	t   *testing.T
	bin string
	dir string
}

func (p *project) run(args ...string) string {
	p.t.Helper()
	return p.runExit(0, args...)
}

// runEnv runs custodian with more environment and stdout only.
func (p *project) runEnv(env []string, args ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.bin, append([]string{"-C", p.dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		p.t.Fatalf("custodian %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// runExit runs custodian and checks its exit code.
func (p *project) runExit(code int, args ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.bin, append([]string{"-C", p.dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	if got := cmd.ProcessState.ExitCode(); got != code {
		p.t.Fatalf("custodian %s: exit %d, want %d\n%s", strings.Join(args, " "), got, code, out.String())
	}
	return out.String()
}

func (p *project) write(rel, content string) {
	p.t.Helper()
	path := filepath.Join(p.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// serve starts `custodian serve` on a free loopback port and returns the
// dashboard's address.
func (p *project) serve(adminToken string, more ...string) string {
	p.t.Helper()
	cmd := exec.Command(p.bin, append([]string{"-C", p.dir, "serve", "--addr", "127.0.0.1:0", "--monitor-every", "0", "--log-level", "warn", "--admin-token", adminToken}, more...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	urls := make(chan string, 1)
	var mu sync.Mutex
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`^dashboard: (http://\S+/)`)
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	p.t.Cleanup(func() {
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
	case u := <-urls:
		return u
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		p.t.Fatalf("custodian serve did not print the dashboard's address:\n%s", log.String())
	}
	return ""
}

// browser starts headless chromium with a fresh profile and no network
// access of its own. Its TMPDIR is the test's too: chromium keeps its
// singleton socket there, in a directory it leaves behind when killed.
func browser(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(1680, 1050),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 100*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	return ctx
}

// waitFor polls a JavaScript predicate until it is true.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(wctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		dump, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 3000)`))
		t.Fatalf("waiting for %s: %v\npage text:\n%s", what, err, dump)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, dir, name string) []byte {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", path)
	return png
}

func cardIn(column, slice string) string {
	return fmt.Sprintf(`!!document.querySelector('[data-column=%q] [data-slice=%q]')`, column, slice)
}

// The dashboard in a real browser against a real daemon: it loads; a
// proposal made through the CLI moves a card to the next column without a
// reload; a halted slice shows its block reason; resolving it without the
// admin token is refused, and with it moves the card back.
func TestDashboardInChromium(t *testing.T) {
	exe := chromium(t)
	t.Parallel()
	shots := artifacts(t)
	p := &project{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.run("init", "--sprint", "2026-W47")
	p.run("slice", "add", "SLICE-001", "--name", "User login")
	p.run("slice", "add", "SLICE-002", "--name", "Payment retries")
	p.run("slice", "add", "SLICE-003", "--name", "Audit trail")
	p.write("specs/SLICE-001/intent.md", "# Login\nUsers sign in with e-mail and password.\n")
	p.write("specs/SLICE-002/intent.md", "# Payment retries\nRetry failed card payments.\n")
	p.write("specs/SLICE-003/intent.md", "# Audit trail\n")
	p.write("specs/SLICE-003/requirements.md", "# Requirements\nREQ-001 every change is logged.\n")
	p.run("propose", "--agent", "discovery", "--slice", "SLICE-003", "--score", "0.93", "--uncertainty", "retention period unknown", "--artifact", "intent=specs/SLICE-003/intent.md")
	p.run("propose", "--agent", "spec", "--slice", "SLICE-003", "--score", "0.88", "--uncertainty", "export format open", "--artifact", "requirements=specs/SLICE-003/requirements.md")
	p.run("heartbeat", "--agent", "spec", "--status", "ACTIVE", "--slice", "SLICE-003")
	// More of what the board shows: a lease, a task plan, a heartbeat with
	// progress, an implementation plan and a cycle.
	p.run("lock", "SLICE-003", "--holder", "validation", "--ttl", "2h")
	p.run("tasks", "add", "SLICE-003", "T1", "--wave", "1", "--title", "audit table migration")
	p.run("tasks", "add", "SLICE-003", "T2", "--wave", "2", "--depends-on", "T1", "--title", "write-through logger")
	p.run("heartbeat", "--agent", "implementation", "--status", "ACTIVE", "--slice", "SLICE-003", "--wave", "1", "--done", "0", "--remaining", "2")
	p.run("impl", "--init", "--plan-path", "plans/audit.md", "--plan-number", "7", "--plan-title", "Audit trail")
	p.run("impl", "--add-task", "--task-id", "T-101", "--phase", "1", "--description", "audit table migration")
	p.run("impl", "--add-task", "--task-id", "T-102", "--phase", "1", "--description", "retention job")
	p.run("impl", "--add-task", "--task-id", "T-201", "--phase", "2", "--description", "write-through logger", "--depends-on", "1")
	p.run("impl", "--update-status", "--task-id", "T-101", "--status", "in_progress", "--branch", "impl/T-101")
	p.run("cycle", "create", "Rate-limit the login endpoint", "--id", "cycle-v1-20261122T000000-a1b2c3")
	const token = "e2e-admin-token"
	// Over TCP every read needs a token: the page starts with the agents'
	// token (reads, but no human action), as a teammate watching the board.
	const agents = "e2e-agents-token"
	url := p.serve(token, "--token", agents)

	ctx := browser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#admin="+agents)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}

	// The board loads: every column, the three cards where they belong.
	waitFor(t, ctx, "the board", cardIn("DISCOVERY", "SLICE-001"))
	cols := eval[[]string](t, ctx, `[...document.querySelectorAll('[data-column]')].map(c => c.dataset.column)`)
	if want := "DISCOVERY SPEC VALIDATION DESIGN IMPLEMENTATION CI_CD OBSERVABILITY DONE BLOCKED"; strings.Join(cols, " ") != want {
		t.Fatalf("columns %v, want %s", cols, want)
	}
	waitFor(t, ctx, "SLICE-003 in VALIDATION", cardIn("VALIDATION", "SLICE-003"))
	waitFor(t, ctx, "the live stream", `document.getElementById('live').textContent === 'live'`)
	// The chain of SLICE-003 is drawn with its weak link (spec, 0.88).
	weak := eval[string](t, ctx, `document.querySelector('#card-SLICE-003 .weak').textContent`)
	if weak != "weak link: spec 0.880" {
		t.Errorf("weak link %q", weak)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#card-SLICE-003 svg.chain .weakest').length`); n != 1 {
		t.Errorf("%d weakest bars, want 1", n)
	}
	if hb := eval[string](t, ctx, `document.querySelector('[data-agent="spec_agent"]').innerText`); !strings.Contains(hb, "ACTIVE") || !strings.Contains(hb, "ago") {
		t.Errorf("heartbeat row %q", hb)
	}
	// A marker that a reload would lose.
	eval[bool](t, ctx, `window.__noReload = 'still here'; true`)
	loads := eval[int](t, ctx, `window.custodianBoard.loads`)

	// A proposal through the CLI (sent to the daemon over its socket)
	// moves SLICE-001 on to SPEC, live.
	p.run("propose", "--agent", "discovery", "--slice", "SLICE-001", "--score", "0.97", "--artifact", "intent=specs/SLICE-001/intent.md")
	waitFor(t, ctx, "SLICE-001 in SPEC", cardIn("SPEC", "SLICE-001"))
	if got := eval[string](t, ctx, `String(window.__noReload)`); got != "still here" {
		t.Fatalf("the page reloaded (marker %q)", got)
	}
	if n := eval[int](t, ctx, `window.custodianBoard.loads`); n <= loads {
		t.Errorf("board fetched %d times, want more than %d after a commit", n, loads)
	}
	waitFor(t, ctx, "the commit in the journal", `[...document.querySelectorAll('#journal .commit .reason')].some(e => e.textContent.includes('SLICE-001'))`)

	// A halted slice shows its block reason.
	p.runExit(3, "propose", "--agent", "discovery", "--slice", "SLICE-002", "--score", "0.60", "--uncertainty", "which gateway errors are retryable", "--artifact", "intent=specs/SLICE-002/intent.md")
	var shown struct {
		Block struct {
			Reason string `json:"block_reason"`
		} `json:"block"`
	}
	var shownSlice struct {
		Slice map[string]any `json:"slice"`
	}
	if err := json.Unmarshal([]byte(p.run("--json", "slice", "show", "SLICE-002")), &shownSlice); err != nil {
		t.Fatal(err)
	}
	slice := shownSlice.Slice
	wantReason, _ := slice["block_reason"].(string)
	if wantReason == "" {
		t.Fatalf("SLICE-002 was not halted: %v", slice)
	}
	waitFor(t, ctx, "SLICE-002 in BLOCKED", cardIn("BLOCKED", "SLICE-002")+` && !!document.querySelector('#card-SLICE-002 .block-reason')`)
	shown.Block.Reason = eval[string](t, ctx, `document.querySelector('#card-SLICE-002 .block-reason').textContent`)
	if shown.Block.Reason != wantReason {
		t.Errorf("block reason on the card %q, want %q", shown.Block.Reason, wantReason)
	}
	waitFor(t, ctx, "the escalation", `!!document.querySelector('#escalations [data-escalation]')`)
	waitFor(t, ctx, "the plan and the cycle", `!!document.querySelector('#plan [data-phase="2"]') && !!document.querySelector('#cycles [data-cycle]')`)
	// A hand edit shows as a drift mark (the board rechecks on a timer or
	// the next commit).
	p.write("specs/SLICE-001/intent.md", "# Login\nUsers sign in with e-mail, password or a passkey.\n")
	p.run("heartbeat", "--agent", "validation", "--status", "ACTIVE", "--slice", "SLICE-003")
	waitFor(t, ctx, "the drift mark", `!!document.querySelector('#card-SLICE-001 .drift')`)
	noJunk(t, ctx)
	png := screenshot(t, ctx, shots, "board-blocked.png")
	if *docsImg {
		if err := os.WriteFile(filepath.Join("..", "docs", "img", "board.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// `custodian status` of the same moment, coloured as on a terminal,
	// drawn by the same browser for the docs.
	statusPNG := terminalShot(t, ctx, p.runEnv([]string{"CLICOLOR_FORCE=1"}, "status"))
	if err := os.WriteFile(filepath.Join(shots, "status.png"), statusPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	if *docsImg {
		if err := os.WriteFile(filepath.Join("..", "docs", "img", "status.png"), statusPNG, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	resolve := func() {
		t.Helper()
		act(t, ctx, `#card-SLICE-002 button[data-op="resolve"]`, "retryable errors listed in the intent")
	}

	// Without the admin token the daemon refuses, and the card stays.
	resolve()
	waitFor(t, ctx, "the refusal", `!document.getElementById('toast').hidden && document.getElementById('toast').textContent.startsWith('refused')`)
	screenshot(t, ctx, shots, "board-refused.png")
	if !eval[bool](t, ctx, cardIn("BLOCKED", "SLICE-002")) {
		t.Fatal("SLICE-002 left BLOCKED without the admin token")
	}
	if st := p.run("--json", "slice", "show", "SLICE-002"); !strings.Contains(st, `"status": "BLOCKED"`) {
		t.Fatalf("the refused resolve changed the slice:\n%s", st)
	}

	// With the token the resolution goes through and the card moves back.
	eval[bool](t, ctx, `document.getElementById('admin-token').value = ''; true`) // it holds the agents' token
	if err := chromedp.Do(ctx,
		chromedp.Click(`#admin-token`),
		chromedp.SendKeys(`#admin-token`, token+"\r"),
	); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "admin mode", `document.body.classList.contains('admin')`)
	resolve()
	waitFor(t, ctx, "SLICE-002 back in DISCOVERY", cardIn("DISCOVERY", "SLICE-002"))
	if got := eval[string](t, ctx, `String(window.__noReload)`); got != "still here" {
		t.Fatalf("the page reloaded (marker %q)", got)
	}
	screenshot(t, ctx, shots, "board-resolved.png")
	// The resolution is recorded as the CLI would: by the role, with the
	// rationale, the escalation resolved.
	after := p.run("--json", "slice", "show", "SLICE-002")
	for _, want := range []string{`"status": "RESOLVED"`, `"rationale": "retryable errors listed in the intent"`, `"resolved_by": "TL`} {
		if !strings.Contains(after, want) {
			t.Errorf("slice after the resolution lacks %s:\n%s", want, after)
		}
	}
}

// ansiHTML renders text with the SGR sequences `status` uses as HTML, as
// a dark terminal would show it.
func ansiHTML(text string) string {
	colors := map[string]string{"31": "#ff6b6b", "32": "#69db7c", "33": "#ffd43b", "34": "#74c0fc", "35": "#e599f7", "36": "#66d9e8"}
	var b strings.Builder
	b.WriteString(`<!doctype html><meta charset="utf-8"><style>body{margin:0;background:#1e1e2e}pre{margin:0;padding:14px 18px;display:inline-block;color:#dfe3ea;background:#1e1e2e;font:13px/1.35 "DejaVu Sans Mono",monospace}</style><pre id="term">`)
	open := false
	re := regexp.MustCompile("\x1b\\[([0-9;]*)m")
	last := 0
	esc := func(s string) string {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	}
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(esc(text[last:m[0]]))
		last = m[1]
		if open {
			b.WriteString("</span>")
			open = false
		}
		var style []string
		for _, code := range strings.Split(text[m[2]:m[3]], ";") {
			switch code {
			case "1":
				style = append(style, "font-weight:bold")
			case "2":
				style = append(style, "opacity:.6")
			case "4":
				style = append(style, "text-decoration:underline")
			default:
				if c, ok := colors[code]; ok {
					style = append(style, "color:"+c)
				}
			}
		}
		if len(style) > 0 {
			b.WriteString(`<span style="` + strings.Join(style, ";") + `">`)
			open = true
		}
	}
	b.WriteString(esc(text[last:]))
	if open {
		b.WriteString("</span>")
	}
	b.WriteString("</pre>")
	return b.String()
}

// terminalShot draws coloured terminal text in a new tab and returns a
// screenshot of it.
func terminalShot(t *testing.T, ctx context.Context, text string) []byte {
	t.Helper()
	if !strings.Contains(text, "\x1b[") {
		t.Fatalf("status is not coloured with CLICOLOR_FORCE=1:\n%s", text)
	}
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	url := "data:text/html;base64," + base64.StdEncoding.EncodeToString([]byte(ansiHTML(text)))
	if err := chromedp.Do(tab, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(tab, chromedp.Screenshot("#term"))
	if err != nil {
		t.Fatalf("screenshot of the terminal: %v", err)
	}
	return png
}

// act clicks an action button, fills the dialog's rationale and submits.
func act(t *testing.T, ctx context.Context, button, rationale string) {
	t.Helper()
	// The board re-renders cards on live updates; a node found a moment
	// before can be gone when the click lands, so try the click again.
	var err error
	for range 5 {
		if err = chromedp.Do(ctx, chromedp.Click(button)); err == nil || !strings.Contains(err.Error(), "Could not find node") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("%s: %v", button, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.WaitVisible(`#action-dialog`),
		chromedp.SetValue(`#action-form textarea[name="rationale"]`, rationale),
		chromedp.Click(`#action-submit`),
	); err != nil {
		t.Fatalf("%s in the dialog: %v", button, err)
	}
}

// Review, the third human action: after a rebuild the guessed fields are
// marked NEEDS_HUMAN_REVIEW; with the admin token (taken from the address
// serve prints) a human clears a slice's marks and the project's.
func TestDashboardReviewAfterRebuild(t *testing.T) {
	exe := chromium(t)
	t.Parallel()
	shots := artifacts(t)
	p := &project{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.write(".asdd/specs/SLICE-001/intent.md", "# Intent\nUsers log in.\n")
	p.write(".asdd/specs/SLICE-001/requirements.md", "# Requirements\nREQ-001 …\n")
	p.run("rebuild")
	const token = "review-token"
	url := p.serve(token)
	ctx := browser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"#admin="+token)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the review marks", `!!document.querySelector('#card-SLICE-001 .review') && !!document.getElementById('review-project')`)
	waitFor(t, ctx, "admin mode from the address", `document.body.classList.contains('admin') && location.hash === ''`)
	noJunk(t, ctx)
	screenshot(t, ctx, shots, "review-before.png")

	act(t, ctx, `#card-SLICE-001 button[data-op="clear-review"]`, "checked the rebuilt slice against the specs")
	waitFor(t, ctx, "the slice's marks cleared", `!!document.getElementById('card-SLICE-001') && !document.querySelector('#card-SLICE-001 .review')`)
	act(t, ctx, `#review-project`, "project context checked")
	waitFor(t, ctx, "the banner gone", `document.getElementById('review-banner').hidden`)
	screenshot(t, ctx, shots, "review-after.png")

	var b struct {
		NeedsReview bool `json:"needs_human_review"`
	}
	if err := json.Unmarshal([]byte(p.run("--json", "status")), &b); err != nil {
		t.Fatal(err)
	}
	if b.NeedsReview {
		t.Error("the state still needs a human review")
	}
}

// noJunk fails when the page shows JavaScript's placeholders for missing
// values.
func noJunk(t *testing.T, ctx context.Context) {
	t.Helper()
	if bad := eval[string](t, ctx, `(document.body.innerText.match(/\b(null|undefined|NaN|\[object Object\])\b/) || [""])[0]`); bad != "" {
		t.Errorf("the page shows %q", bad)
	}
}

// A daemon started with --token: the page loads, asks for a token, and
// once the admin token is entered reads the board and follows it live.
func TestDashboardWithReadToken(t *testing.T) {
	exe := chromium(t)
	t.Parallel()
	p := &project{t: t, bin: testbin.Path(t), dir: t.TempDir()}
	p.run("init")
	p.run("slice", "add", "SLICE-001", "--name", "User login")
	p.write("specs/SLICE-001/intent.md", "# Login\n")
	url := p.serve("adm", "--token", "agents")
	ctx := browser(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the request for a token", `document.getElementById('live').textContent === 'token needed' && document.getElementById('summary').textContent.includes('needs a token')`)
	if n := eval[int](t, ctx, `document.querySelectorAll('[data-slice]').length`); n != 0 {
		t.Fatalf("%d cards shown without a token", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`#admin-token`), chromedp.SendKeys(`#admin-token`, "adm\r")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the board with the token", cardIn("DISCOVERY", "SLICE-001")+` && document.getElementById('live').textContent === 'live'`)
	p.runEnv([]string{"CUSTODIAN_TOKEN=agents"}, "propose", "--agent", "discovery", "--slice", "SLICE-001", "--score", "0.97", "--artifact", "intent=specs/SLICE-001/intent.md")
	waitFor(t, ctx, "SLICE-001 in SPEC, live", cardIn("SPEC", "SLICE-001"))
}
