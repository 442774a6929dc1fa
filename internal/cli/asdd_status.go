package cli

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
)

func init() { Register("status", newStatusCmd) }

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func newStatusCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "The board: slices by phase with CCS and weak link, blockers, locks, escalations, heartbeat ages",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := loadManifest(app, cmd)
			if err != nil {
				return err
			}
			cfg, err := asddConfig(app)
			if err != nil {
				return err
			}
			b := asdd.NewBoard(m, cfg, app.Now())
			return app.Render(b, func(w io.Writer) error {
				var buf bytes.Buffer
				if err := writeBoard(&buf, b); err != nil {
					return err
				}
				_, err := w.Write(trimTrailingSpace(buf.Bytes()))
				return err
			})
		},
	}
}

// writeBoard is the text board.
func writeBoard(w io.Writer, b asdd.Board) error {
	head := fmt.Sprintf("ASDD board — revision %d", b.Revision)
	if b.Sprint != "" {
		head += ", sprint " + b.Sprint
	}
	head += ", global confidence " + ccsText(b.GlobalConfidence)
	fmt.Fprintln(w, head)
	if b.NeedsReview {
		fmt.Fprintf(w, "!! state marked %s: the pipeline is stopped until a human approves it\n", asdd.NeedsHumanReview)
	}
	fmt.Fprintln(w)
	if len(b.Slices) == 0 {
		fmt.Fprintln(w, "no slices yet: custodian slice add ID --name NAME")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PHASE\tSLICE\tCCS\tWEAK LINK\tTASKS\tLOCK\tNAME")
		for _, s := range b.Slices {
			phase := s.Status
			if s.Block != nil {
				phase = "BLOCKED@" + s.Block.AtPhase
			}
			weak := "—"
			if s.WeakLink != nil {
				weak = fmt.Sprintf("%s %s", s.WeakLink.Agent, asdd.FormatScore(s.WeakLink.Score))
			}
			tasks := "—"
			if s.TasksTotal > 0 {
				tasks = fmt.Sprintf("%d/%d", s.TasksDone, s.TasksTotal)
			}
			lock := "—"
			if s.Lock != nil {
				lock = s.Lock.Holder + " until " + s.Lock.Expires
				if s.Lock.Expired {
					lock = "expired (" + s.Lock.Holder + ")"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", phase, s.ID, ccsText(s.CCS), weak, tasks, lock, s.Name)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var blocked []asdd.BoardSlice
	for _, s := range b.Slices {
		if s.Block != nil || len(s.NeedsReview) > 0 {
			blocked = append(blocked, s)
		}
	}
	if len(blocked) > 0 {
		fmt.Fprintln(w, "\nBlockers:")
		for _, s := range blocked {
			if s.Block != nil {
				mode := asdd.ModeLabel(s.Block.FailureMode)
				if mode == "" {
					mode = "Blocked"
				}
				fmt.Fprintf(w, "  %s  %s at %s (LKG %s): %s\n", s.ID, mode, s.Block.AtPhase, s.Block.LKGPhase, s.Block.Reason)
				fmt.Fprintf(w, "      escalation %s, awaiting %s", dash(s.Block.Escalation), strings.Join(s.Block.AwaitingBy, " + "))
				if len(s.Block.Paused) > 0 {
					fmt.Fprintf(w, "; paused: %s", strings.Join(s.Block.Paused, ", "))
				}
				fmt.Fprintln(w)
				if s.WeakLink != nil {
					for _, u := range s.WeakLink.Uncertainty {
						fmt.Fprintf(w, "      weak link %s: %s\n", s.WeakLink.Agent, u)
					}
				}
			}
			if len(s.NeedsReview) > 0 {
				fmt.Fprintf(w, "  %s  %s: %s\n", s.ID, asdd.NeedsHumanReview, strings.Join(s.NeedsReview, ", "))
			}
		}
	}
	if len(b.Escalations) > 0 {
		fmt.Fprintln(w, "\nOpen escalations:")
		for _, e := range b.Escalations {
			fmt.Fprintf(w, "  %s  %s → %s  %s\n", e.ID, asdd.ModeLabel(e.FailureMode), strings.Join(e.RouteTo, ", "), e.Path)
		}
	}
	if len(b.Heartbeats) > 0 {
		fmt.Fprintln(w, "\nHeartbeats:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, h := range b.Heartbeats {
			age := "?"
			if h.AgeSeconds != nil {
				age = humanAge(time.Duration(*h.AgeSeconds)*time.Second) + " ago"
			}
			note := ""
			if h.Stale {
				note = "STALE"
			}
			work := h.Slice
			if h.Wave != nil {
				work += fmt.Sprintf(" wave %d", *h.Wave)
			}
			if h.Done != nil || h.Remaining != nil {
				work += fmt.Sprintf(" tasks %s done, %s left", intText(h.Done), intText(h.Remaining))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", h.Agent, h.Status, age, strings.TrimSpace(work), note)
		}
		return tw.Flush()
	}
	return nil
}

func intText(p *int) string {
	if p == nil {
		return "?"
	}
	return fmt.Sprint(*p)
}

// trimTrailingSpace removes the padding tabwriter leaves at line ends.
func trimTrailingSpace(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " ")
	}
	return bytes.Join(lines, []byte("\n"))
}

// humanAge is a duration for the board: "42s", "5m3s", "3h2m", "12d4h".
func humanAge(d time.Duration) string {
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
