package cmdutil

// Output: text or --json, tables, progress, and the small formatters the
// commands share.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/safetext"
)

// Dash is s, or "-" for an empty s (a table cell).
func Dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// CCSText is a CCS for a table: three decimals, or "-" when not computed.
func CCSText(v *float64) string {
	if v == nil {
		return "—"
	}
	return asdd.FormatScore(*v)
}

// Render writes v as indented JSON when --json is set, otherwise calls text.
func (a *App) Render(v any, text func(w io.Writer) error) error {
	if a.JSON {
		return WriteJSON(a.Out, v)
	}
	// Text from the state goes to a terminal: no escape sequence, control
	// character or bidirectional override in it is passed on
	// (safetext.TerminalText); the output's own newlines, tabs and colours
	// are.
	var buf bytes.Buffer
	err := text(&buf)
	if _, werr := a.Out.Write(safetext.TerminalText(buf.Bytes())); err == nil {
		err = werr
	}
	return err
}

// WriteJSON writes v as indented JSON followed by a newline.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Ms is a duration in milliseconds with two decimals: "1.25ms".
func Ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

// SortedKeys is the keys of m in order.
func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// Tx is text from the state fit for a terminal (safetext.Terminal).
func Tx(s string) string { return safetext.Terminal(s) }

// IntText is *p as text, or "?" for nil.
func IntText(p *int) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

// HumanAge is a duration for the board: "42s", "5m3s", "3h2m", "12d4h".
func HumanAge(d time.Duration) string {
	switch {
	case d < 0:
		return "in the future: " + (-d).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Plural returns "1 file", "2 files", "3 entries".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// IntegrityPlural is one when n is 1, else many.
func IntegrityPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ShellQuote quotes s for a POSIX shell.
func ShellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// NewTable is the tab writer integrity commands print tables with.
func NewTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// ProgressBar draws a progress bar on a terminal's stderr; elsewhere it stays
// silent so that output is stable.
type ProgressBar struct {
	w     io.Writer
	label string
	on    bool
	last  int
}

// NewProgress is a progress bar labelled label on app's stderr, drawn
// only when both stdout and stderr are terminals.
func NewProgress(app *App, label string) *ProgressBar {
	return &ProgressBar{w: app.Err, label: label, on: app.IsTTY && IsTerminal(app.Err)}
}

// Update draws done of total.
func (p *ProgressBar) Update(done, total int) {
	if !p.on || total == 0 {
		return
	}
	pct := done * 100 / total
	if pct == p.last && done != total {
		return
	}
	p.last = pct
	const width = 30
	fill := done * width / total
	fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d files", p.label, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total)
}

// Done ends the bar's line.
func (p *ProgressBar) Done() {
	if p.on && p.last > 0 {
		fmt.Fprintln(p.w)
	}
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}
