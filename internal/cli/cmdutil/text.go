package cmdutil

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/internal/safetext"
	"github.com/custodian-dev/custodian/reason"
)

// Ms is a duration in milliseconds with two decimals: "1.25ms".
func Ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

// ParseInts parses a comma-separated list of positive integers ("1,16,64").
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, reason.Usage("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseSizes parses a comma-separated list of sizes in bytes, with an
// optional KB or MB suffix ("64KB,1MB").
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		mult := 1
		switch {
		case strings.HasSuffix(f, "MB"):
			mult, f = 1<<20, strings.TrimSuffix(f, "MB")
		case strings.HasSuffix(f, "KB"):
			mult, f = 1<<10, strings.TrimSuffix(f, "KB")
		case strings.HasSuffix(f, "B"):
			f = strings.TrimSuffix(f, "B")
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, reason.Usage("%q is not a size (like 10KB or 1MB)", f)
		}
		out = append(out, n*mult)
	}
	return out, nil
}

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

// ExactArgs and RangeArgs check the number of arguments, as usage errors
// (exit 2).
func ExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return reason.Usage("%s takes %d argument(s), got %d (usage: %s)", cmd.CommandPath(), n, len(args), cmd.UseLine())
		}
		return nil
	}
}

// RangeArgs accepts lo to hi arguments (a usage error otherwise).
func RangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return reason.Usage("%s takes %d to %d arguments, got %d (usage: %s)", cmd.CommandPath(), lo, hi, len(args), cmd.UseLine())
		}
		return nil
	}
}

// MarkRequired makes flags required, checked before the command runs and
// reported as a usage error (exit 2).
func MarkRequired(cmd *cobra.Command, names ...string) {
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		for _, n := range names {
			if !cmd.Flags().Changed(n) {
				return reason.Usage("%s needs --%s (usage: %s)", cmd.CommandPath(), n, cmd.UseLine())
			}
		}
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
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
