package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar is a progress bar, or nothing when progress is not shown.
type Bar struct {
	mu   sync.Mutex
	pb   *progressbar.ProgressBar // nil: disabled
	w    io.Writer
	done bool
}

// Start returns a bar of total steps (total <= 0: a spinner of unknown
// length) described by what, drawn on w only when w is a terminal and
// $CUSTODIAN_NO_PROGRESS is not set; otherwise a bar that draws nothing.
func Start(w io.Writer, total int, what string) *Bar {
	return New(w, total, what, Enabled(w))
}

// Enabled reports whether Start draws on w: w is a terminal and
// $CUSTODIAN_NO_PROGRESS is not set.
func Enabled(w io.Writer) bool {
	if os.Getenv("CUSTODIAN_NO_PROGRESS") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New is Start with the decision made by the caller (tests draw into a
// buffer with show true).
func New(w io.Writer, total int, what string, show bool) *Bar {
	if !show || w == nil {
		return &Bar{}
	}
	max := int64(total)
	if total <= 0 {
		max = -1
	}
	b := &Bar{w: w}
	b.pb = progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionSetWidth(30),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(65*time.Millisecond),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionClearOnFinish(),
	)
	return b
}

// Shown reports whether the bar draws anything.
func (b *Bar) Shown() bool { return b.pb != nil }

// Add advances the bar by n steps.
func (b *Bar) Add(n int) {
	if b.pb == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		_ = b.pb.Add(n)
	}
}

// Describe changes the text beside the bar (what is being done now).
func (b *Bar) Describe(format string, a ...any) {
	if b.pb == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.pb.Describe(fmt.Sprintf(format, a...))
	}
}

// Finish completes the bar and clears its line, so that the command's own
// output starts on a clean line. It is idempotent.
func (b *Bar) Finish() {
	if b.pb == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	_ = b.pb.Finish()
}
