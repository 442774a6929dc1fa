package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/custodian-dev/custodian/internal/syncbuf"
)

// Off a terminal nothing is drawn, whatever the writer.
func TestStartDrawsNothingOffATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	for name, b := range map[string]*Bar{"buffer": Start(&buf, 10, "x"), "file": Start(f, 10, "x"), "nil": Start(nil, 3, "x")} {
		if b.Shown() {
			t.Errorf("%s: bar shown off a terminal", name)
		}
		b.Describe("step %d", 1)
		b.Add(5)
		b.Finish()
		b.Finish()
	}
	if buf.Len() != 0 {
		t.Errorf("drew %q into a buffer", buf.String())
	}
	if fi, _ := f.Stat(); fi.Size() != 0 {
		t.Errorf("drew %d bytes into a file", fi.Size())
	}
	if Enabled(&buf) || Enabled(f) {
		t.Error("Enabled off a terminal")
	}
}

// A shown bar draws its description and count, and clears its line at the
// end; Add is safe from many goroutines; nothing is drawn after Finish.
func TestShownBar(t *testing.T) {
	var buf syncbuf.Buffer
	b := New(&buf, 40, "checking artifacts", true)
	if !b.Shown() {
		t.Fatal("not shown")
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				b.Add(1)
			}
		}()
	}
	wg.Wait()
	b.Describe("hashing %s", "specs/a.md")
	b.Add(0)
	b.Finish()
	out := buf.String()
	if !strings.Contains(out, "checking artifacts") || !strings.Contains(out, "/40") {
		t.Errorf("bar output lacks its description or count: %q", out)
	}
	if !strings.HasSuffix(out, "\r") {
		t.Errorf("the bar's line is not cleared at the end: %q", out[max(0, len(out)-40):])
	}
	n := buf.Len()
	b.Add(1)
	b.Describe("late")
	b.Finish()
	if buf.Len() != n {
		t.Errorf("drew after Finish: %q", buf.String()[n:])
	}
}

// A bar of unknown length is a spinner.
func TestSpinner(t *testing.T) {
	var buf syncbuf.Buffer
	b := New(&buf, 0, "rebuilding", true)
	b.Add(3)
	b.Finish()
	if !strings.Contains(buf.String(), "rebuilding") {
		t.Errorf("spinner output %q", buf.String())
	}
}
