package cmdutil

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := &ProgressBar{w: &buf, label: "scanning", on: true}
	for i := 1; i <= 200; i++ {
		p.Update(i, 200)
	}
	p.Done()
	out := buf.String()
	if got := strings.Count(out, "\r"); got != 100 {
		t.Errorf("%d redraws for 200 files, want one per percent (100)", got)
	}
	if !strings.HasSuffix(out, "\rscanning [##############################] 200/200 files\n") {
		t.Errorf("last frame: %q", out[max(0, len(out)-80):])
	}
	var quiet bytes.Buffer
	q := &ProgressBar{w: &quiet}
	q.Update(1, 2)
	q.Done()
	if quiet.Len() != 0 {
		t.Errorf("a progress bar off a terminal wrote %q", quiet.String())
	}
}
