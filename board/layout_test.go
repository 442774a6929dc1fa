package board_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/custodian-dev/custodian/internal/testbin"
)

// layoutProblems lists, in the page, what a reader would call a broken
// layout: the page or a column or a card wider than its box (sideways
// scrolling, cut-off content), a column header that does not fit or runs
// into its neighbour, a word of a label broken across lines, an empty
// column as wide as a full one.
const layoutProblems = `(() => {
  const p = [];
  const de = document.documentElement;
  if (de.scrollWidth > de.clientWidth) p.push("the page scrolls sideways: " + de.scrollWidth + " > " + de.clientWidth);
  const board = document.getElementById("board");
  if (board.scrollWidth > board.clientWidth + 1) p.push("the board scrolls sideways: " + board.scrollWidth + " > " + board.clientWidth);
  const cols = [...document.querySelectorAll("[data-column]")];
  for (const c of cols) {
    const r = c.getBoundingClientRect();
    if (r.right > de.clientWidth + 0.5 || r.left < -0.5) p.push(c.dataset.column + " is cut off: " + r.left + ".." + r.right + " of " + de.clientWidth);
    const h2 = c.querySelector("h2");
    if (h2.scrollWidth > h2.clientWidth + 1 || h2.scrollHeight > h2.clientHeight + 1) p.push(c.dataset.column + "'s header does not fit its column");
    const empty = c.querySelectorAll("[data-slice]").length === 0;
    if (empty && r.width > 40) p.push("empty " + c.dataset.column + " is " + Math.round(r.width) + " px wide");
    if (!empty && r.width < 150) p.push(c.dataset.column + " with cards is only " + Math.round(r.width) + " px wide");
  }
  for (let i = 0; i < cols.length; i++) for (let j = i + 1; j < cols.length; j++) {
    const a = cols[i].querySelector("h2").getBoundingClientRect(), b = cols[j].querySelector("h2").getBoundingClientRect();
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) p.push("the headers of " + cols[i].dataset.column + " and " + cols[j].dataset.column + " overlap");
  }
  for (const el of document.querySelectorAll(".column, .card, .panel")) {
    if (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX === "visible") p.push((el.id || el.dataset.column || el.className) + " overflows its box: " + el.scrollWidth + " > " + el.clientWidth);
  }
  // Words of labels stay whole.
  for (const el of document.querySelectorAll(".column h2, .slice-id, .card .name, .card .status, .ccs, .weak, .meta li, .block .mode, .awaiting, .panel h2, header")) {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      for (const m of n.textContent.matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (tops.size > 1) p.push("the word " + JSON.stringify(m[0]) + " is broken across lines");
      }
    }
  }
  return p;
})()`

// The board of a busy project (the demo, plus slices in IMPLEMENTATION and
// CI_CD and one halted below its minimum) at 1,366×768 and 1,920×1,080: no
// sideways scroll, nothing cut off or overlapping, no word broken, empty
// phases collapsed; a healthy weak link is neutral, one below its minimum
// red; heartbeat commits are hidden from the journal until asked for.
func TestDashboardLayout(t *testing.T) {
	exe := chromium(t)
	t.Parallel()
	shots := artifacts(t)
	bin := testbin.Path(t)
	p := &project{t: t, bin: bin, dir: filepath.Join(t.TempDir(), "demo")}
	p.runExit(0, "demo", p.dir)
	p.run("slice", "add", "SLICE-005", "--name", "Payment retries with exponential backoff")
	p.run("slice", "add", "SLICE-006", "--name", "Settlement export to the accounting system")
	p.run("slice", "add", "SLICE-007", "--name", "Onboarding checklist")
	p.run("slice", "add", "SLICE-008", "--name", "Password reset by e-mail")
	p.run("run", "SLICE-005", "--until", "IMPLEMENTATION", "--status-every", "0")
	p.run("run", "SLICE-006", "--until", "CI_CD", "--status-every", "0")
	p.write("specs/SLICE-008/intent.md", "# Password reset\n")
	p.runExit(3, "propose", "--agent", "discovery", "--slice", "SLICE-008", "--score", "0.60", "--uncertainty", "token lifetime unknown", "--artifact", "intent=specs/SLICE-008/intent.md")
	url := p.serve("layout-token")

	ctx := browser(t, exe)
	for _, vp := range []struct {
		w, h int64
		name string
	}{{1366, 768, "1366"}, {1920, 1080, "1920"}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(vp.w, vp.h), chromedp.Navigate(url+"#admin=layout-token")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, "the board", cardIn("IMPLEMENTATION", "SLICE-005")+" && "+cardIn("CI_CD", "SLICE-006")+" && "+cardIn("QUICK_FIX", "QUICK-001")+" && "+cardIn("BLOCKED", "SLICE-008"))
		waitFor(t, ctx, "the journal", `document.querySelectorAll('#journal .commit').length > 0`)
		if w := eval[int](t, ctx, `document.documentElement.clientWidth`); w != int(vp.w) {
			t.Fatalf("viewport %d px wide, want %d", w, vp.w)
		}
		for _, problem := range eval[[]string](t, ctx, layoutProblems) {
			t.Errorf("%d×%d: %s", vp.w, vp.h, problem)
		}
		png := screenshot(t, ctx, shots, "board-"+vp.name+".png")
		if *docsImg && vp.w == 1366 {
			if err := os.WriteFile(filepath.Join("..", "docs", "img", "board-1366.png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	noJunk(t, ctx)

	// Empty phases are collapsed: here DISCOVERY has SLICE-007, SPEC none.
	if n := eval[int](t, ctx, `document.querySelectorAll('.column.empty[data-column="SPEC"]').length`); n != 1 {
		t.Error("the empty SPEC column is not collapsed")
	}
	// The weak link: neutral on a healthy slice, red below its minimum.
	const red = "rgb(197, 48, 48)"
	if c := eval[string](t, ctx, `getComputedStyle(document.querySelector('#card-SLICE-001 .weak')).color`); c == red {
		t.Errorf("SLICE-001's weak link (above its minimum) is red")
	}
	if c := eval[string](t, ctx, `getComputedStyle(document.querySelector('#card-SLICE-008 .weak')).color`); c != red {
		t.Errorf("SLICE-008's weak link (0.60, below its minimum) is %s, not red", c)
	}
	// Heartbeats: hidden by default, shown on request, and the choice is kept.
	const heartbeats = `[...document.querySelectorAll('#journal .commit .events')].filter(e => e.textContent === 'heartbeat').length`
	if n := eval[int](t, ctx, heartbeats); n != 0 {
		t.Errorf("%d heartbeat commits in the journal by default", n)
	}
	if note := eval[string](t, ctx, `document.getElementById('journal-note').textContent`); !strings.Contains(note, "heartbeats hidden") {
		t.Errorf("journal note %q does not say heartbeats are hidden", note)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`#show-heartbeats`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "heartbeats shown", heartbeats+" > 0")
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "heartbeats still shown after a reload", `document.getElementById('show-heartbeats').checked && `+heartbeats+" > 0")
}
