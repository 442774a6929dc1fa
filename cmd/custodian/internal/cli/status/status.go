package status

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/mirror"
	"github.com/custodian-dev/custodian/internal/safetext"
)

// Options is what `custodian status` was asked to show: the board.
type Options struct {
	App *cmdutil.App
}

// NewCmd returns `custodian status`; it calls runF with its Options (run
// when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	return &cobra.Command{
		Use:   "status",
		Short: "The board: slices by phase with CCS and weak link, blockers, locks, escalations, heartbeat ages",
		Long: `The status board: slices by phase with their CCS and weak link, tasks and
locks; the blockers of halted slices; open escalations; agent heartbeats
with their age (STALE when an ACTIVE agent is silent past its timeout).

On a terminal the table is coloured; it is plain text when stdout is not a
terminal or NO_COLOR is set (CLICOLOR_FORCE=1 forces colour). --json prints
the board as JSON.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF == nil {
				runF = run
			}
			return runF(app.Context(cmd), opts)
		},
	}
}

// run prints the board, and the mirrors' lag when documents are mirrored.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	m, err := cmdutil.LoadManifest(ctx, app)
	if err != nil {
		return err
	}
	cfg, err := cmdutil.ASDDConfig(app)
	if err != nil {
		return err
	}
	b := asdd.NewBoard(m, cfg, app.Now())
	st := boardStyle{color: useColor(app.IsTTY, os.Getenv), floor: cfg.CCS.Floor}
	lags, err := mirror.Lags(ctx, app)
	if err != nil {
		return err
	}
	out := struct {
		asdd.Board
		Mirrors []mirror.Lag `json:"mirrors,omitempty"`
	}{b, lags}
	return app.Render(out, func(w io.Writer) error {
		var buf bytes.Buffer
		if err := writeBoardStyled(&buf, b, st); err != nil {
			return err
		}
		mirror.WriteLags(&buf, lags)
		_, err := w.Write(trimTrailingSpace(buf.Bytes()))
		return err
	})
}

// useColor decides whether terminal output is coloured: on a TTY unless
// NO_COLOR is set (https://no-color.org), or anywhere with CLICOLOR_FORCE
// set to something other than 0; never with TERM=dumb.
func useColor(tty bool, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	return tty
}

// boardStyle is how the board is drawn: plain, or with ANSI colours.
type boardStyle struct {
	color bool
	floor float64 // CCS below it is red
}

// ANSI SGR sequences of the board's colours.
const (
	sgrReset   = "\x1b[0m"
	sgrBold    = "\x1b[1m"
	sgrDim     = "\x1b[2m"
	sgrRed     = "\x1b[31m"
	sgrGreen   = "\x1b[32m"
	sgrYellow  = "\x1b[33m"
	sgrBlue    = "\x1b[34m"
	sgrMagenta = "\x1b[35m"
	sgrCyan    = "\x1b[36m"
	sgrBoldRed = "\x1b[1;31m"
	sgrHeader  = "\x1b[1;4m"
)

// paint wraps s in an SGR sequence when colour is on.
func (st boardStyle) paint(sgr, s string) string {
	if !st.color || sgr == "" || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

func (st boardStyle) phaseSGR(s asdd.BoardSlice) string {
	switch {
	case s.Block != nil || s.Status == asdd.Blocked:
		return sgrBoldRed
	case s.Status == asdd.Done:
		return sgrGreen
	case s.Status == asdd.QuickFix:
		return sgrMagenta
	case len(s.NeedsReview) > 0 || s.Status == asdd.NeedsHumanReview:
		return sgrYellow
	}
	return sgrCyan
}

func (st boardStyle) ccsSGR(v *float64) string {
	switch {
	case v == nil:
		return sgrDim
	case *v < st.floor:
		return sgrBoldRed
	case *v < 0.8:
		return sgrYellow
	}
	return sgrGreen
}

// cell is one table cell: its text and its colour.
type cell struct {
	text string
	sgr  string
}

// writeTable writes rows as left-aligned columns two spaces apart, the
// last column unpadded, as text/tabwriter does, but with widths counted
// on the text alone so that colour does not shift the columns.
func (st boardStyle) writeTable(w io.Writer, indent string, rows [][]cell) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(safetext.Terminal(c.text)))
		}
	}
	for _, r := range rows {
		var line strings.Builder
		line.WriteString(indent)
		for i, c := range r {
			text := safetext.Terminal(c.text) // a newline or tab in a name forges no row or column
			line.WriteString(st.paint(c.sgr, text))
			if i < len(r)-1 {
				line.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(text)+2))
			}
		}
		fmt.Fprintln(w, line.String())
	}
}

// writeBoardStyled is the text board, coloured when st says so (the zero
// boardStyle writes the plain text).
func writeBoardStyled(w io.Writer, b asdd.Board, st boardStyle) error {
	head := fmt.Sprintf("ASDD board — revision %d", b.Revision)
	if b.Sprint != "" {
		head += ", sprint " + cmdutil.Tx(b.Sprint)
	}
	head += ", global confidence " + cmdutil.CCSText(b.GlobalConfidence)
	fmt.Fprintln(w, st.paint(sgrBold, head))
	if b.NeedsReview {
		fmt.Fprintln(w, st.paint(sgrBoldRed, fmt.Sprintf("!! state marked %s: the pipeline is stopped until a human approves it", asdd.NeedsHumanReview)))
	}
	fmt.Fprintln(w)
	if len(b.Slices) == 0 {
		fmt.Fprintln(w, "no slices yet: custodian slice add ID --name NAME")
	} else {
		rows := [][]cell{{{"PHASE", sgrHeader}, {"SLICE", sgrHeader}, {"CCS", sgrHeader}, {"WEAK LINK", sgrHeader}, {"TASKS", sgrHeader}, {"LOCK", sgrHeader}, {"NAME", sgrHeader}}}
		for _, s := range b.Slices {
			phase := s.Status
			if s.Block != nil {
				phase = "BLOCKED@" + s.Block.AtPhase
			}
			weak, weakSGR := "—", sgrDim
			if s.WeakLink != nil {
				weak, weakSGR = fmt.Sprintf("%s %s", s.WeakLink.Agent, asdd.FormatScore(s.WeakLink.Score)), st.ccsSGR(&s.WeakLink.Score)
			}
			tasks, tasksSGR := "—", sgrDim
			if s.TasksTotal > 0 {
				tasks, tasksSGR = fmt.Sprintf("%d/%d", s.TasksDone, s.TasksTotal), ""
				if s.TasksDone == s.TasksTotal {
					tasksSGR = sgrGreen
				}
			}
			lock, lockSGR := "—", sgrDim
			if s.Lock != nil {
				lock, lockSGR = s.Lock.Holder+" until "+s.Lock.Expires, sgrBlue
				if s.Lock.Expires == "" {
					lock = s.Lock.Holder + " (LOCK for " + s.Lock.Requester + ")"
				}
				if s.Lock.Expired {
					lock, lockSGR = "expired ("+s.Lock.Holder+")", sgrDim
				}
			}
			rows = append(rows, []cell{{phase, st.phaseSGR(s)}, {s.ID, sgrBold}, {cmdutil.CCSText(s.CCS), st.ccsSGR(s.CCS)}, {weak, weakSGR}, {tasks, tasksSGR}, {lock, lockSGR}, {s.Name, ""}})
		}
		st.writeTable(w, "", rows)
	}
	var retro []asdd.BoardSlice
	for _, s := range b.Slices {
		if s.Retro != nil {
			retro = append(retro, s)
		}
	}
	if len(retro) > 0 {
		fmt.Fprintln(w, "\n"+st.paint(sgrBold, "Retro-spec validation:"))
		for _, s := range retro {
			fmt.Fprintf(w, "  %s  %s\n", st.paint(sgrBold, s.ID), s.Retro.Text())
		}
	}
	var blocked []asdd.BoardSlice
	for _, s := range b.Slices {
		if s.Block != nil || len(s.NeedsReview) > 0 {
			blocked = append(blocked, s)
		}
	}
	if len(blocked) > 0 {
		fmt.Fprintln(w, "\n"+st.paint(sgrBoldRed, "Blockers:"))
		for _, s := range blocked {
			if s.Block != nil {
				mode := asdd.ModeLabel(s.Block.FailureMode)
				if mode == "" {
					mode = "Blocked"
				}
				fmt.Fprintf(w, "  %s  %s: %s\n", st.paint(sgrBold, cmdutil.Tx(s.ID)), st.paint(sgrRed, fmt.Sprintf("%s at %s (LKG %s)", mode, cmdutil.Tx(s.Block.AtPhase), cmdutil.Tx(s.Block.LKGPhase))), cmdutil.Tx(s.Block.Reason))
				fmt.Fprintf(w, "      escalation %s, awaiting %s", cmdutil.Tx(cmdutil.Dash(s.Block.Escalation)), st.paint(sgrYellow, cmdutil.Tx(strings.Join(s.Block.AwaitingBy, " + "))))
				if len(s.Block.Paused) > 0 {
					fmt.Fprintf(w, "; paused: %s", cmdutil.Tx(strings.Join(s.Block.Paused, ", ")))
				}
				fmt.Fprintln(w)
				if s.Block.ReviewRequired != "" {
					fmt.Fprintf(w, "      review required: %s\n", s.Block.ReviewRequired)
				}
				if s.WeakLink != nil {
					for _, u := range s.WeakLink.Uncertainty {
						fmt.Fprintf(w, "      weak link %s: %s\n", cmdutil.Tx(s.WeakLink.Agent), cmdutil.Tx(u))
					}
				}
			}
			if len(s.NeedsReview) > 0 {
				fmt.Fprintf(w, "  %s  %s: %s\n", st.paint(sgrBold, cmdutil.Tx(s.ID)), st.paint(sgrYellow, asdd.NeedsHumanReview), cmdutil.Tx(strings.Join(s.NeedsReview, ", ")))
			}
		}
	}
	if len(b.Escalations) > 0 {
		fmt.Fprintln(w, "\n"+st.paint(sgrBold, "Open escalations:"))
		for _, e := range b.Escalations {
			fmt.Fprintf(w, "  %s  %s → %s  %s\n", st.paint(sgrBold, cmdutil.Tx(e.ID)), st.paint(sgrRed, asdd.ModeLabel(e.FailureMode)), cmdutil.Tx(strings.Join(e.RouteTo, ", ")), cmdutil.Tx(e.Path))
		}
	}
	if len(b.Heartbeats) > 0 {
		fmt.Fprintln(w, "\n"+st.paint(sgrBold, "Heartbeats:"))
		var rows [][]cell
		for _, h := range b.Heartbeats {
			age := "?"
			if h.AgeSeconds != nil {
				age = cmdutil.HumanAge(time.Duration(*h.AgeSeconds)*time.Second) + " ago"
			}
			var notes []string
			if h.Stale {
				notes = append(notes, "STALE")
			}
			if h.EscalatedAt != "" {
				notes = append(notes, "escalated "+h.EscalatedAt)
			} else if h.RetryRequestedAt != "" {
				notes = append(notes, "retry requested "+h.RetryRequestedAt)
			}
			note := strings.Join(notes, "; ")
			work := h.Slice
			if h.Wave != nil {
				work += fmt.Sprintf(" wave %d", *h.Wave)
			}
			if h.Done != nil || h.Remaining != nil {
				work += fmt.Sprintf(" tasks %s done, %s left", cmdutil.IntText(h.Done), cmdutil.IntText(h.Remaining))
			}
			statusSGR := ""
			switch h.Status {
			case asdd.HeartbeatActive:
				statusSGR = sgrGreen
			case asdd.HeartbeatIdle:
				statusSGR = sgrDim
			case asdd.HeartbeatPaused:
				statusSGR = sgrYellow
			}
			ageSGR := ""
			if h.Stale {
				ageSGR = sgrRed
			}
			rows = append(rows, []cell{{h.Agent, ""}, {h.Status, statusSGR}, {age, ageSGR}, {strings.TrimSpace(work), ""}, {note, sgrBoldRed}})
		}
		st.writeTable(w, "  ", rows)
	}
	return nil
}

// trimTrailingSpace removes the padding tabwriter leaves at line ends.
func trimTrailingSpace(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}
