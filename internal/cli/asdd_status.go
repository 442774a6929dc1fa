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

// Board is the status board: what `custodian status --json` prints.
type Board struct {
	Revision         uint64           `json:"revision"`
	Sprint           string           `json:"current_sprint,omitempty"`
	GlobalConfidence *float64         `json:"global_confidence_score,omitempty"`
	Slices           []BoardSlice     `json:"slices"`
	Escalations      []escalationView `json:"open_escalations"`
	Heartbeats       []BoardHeartbeat `json:"heartbeats"`
	NeedsReview      bool             `json:"needs_human_review"`
}

// BoardSlice is one slice on the board.
type BoardSlice struct {
	ID          string     `json:"slice_id"`
	Name        string     `json:"name,omitempty"`
	Type        string     `json:"type,omitempty"`
	Status      string     `json:"status"`
	CCS         *float64   `json:"ccs,omitempty"`
	WeakLink    *WeakLink  `json:"weak_link,omitempty"`
	Block       *BlockView `json:"block,omitempty"`
	Lock        *LockView  `json:"lock,omitempty"`
	TasksDone   int        `json:"tasks_done"`
	TasksTotal  int        `json:"tasks_total"`
	TasksReady  []string   `json:"tasks_ready,omitempty"`
	NeedsReview []string   `json:"needs_human_review,omitempty"`
}

// WeakLink is the lowest-scoring CCS agent of a slice.
type WeakLink struct {
	Agent       string   `json:"agent"`
	Score       float64  `json:"score"`
	Uncertainty []string `json:"uncertainty_factors,omitempty"`
}

// BlockView is a halted slice's block record, in short.
type BlockView struct {
	AtPhase     string   `json:"blocked_at_phase"`
	LKGPhase    string   `json:"lkg_phase"`
	FailureMode string   `json:"failure_mode,omitempty"`
	Reason      string   `json:"block_reason"`
	Since       string   `json:"rollback_timestamp"`
	Escalation  string   `json:"escalation,omitempty"`
	AwaitingBy  []string `json:"awaiting_sign_off,omitempty"`
	Paused      []string `json:"paused_agents,omitempty"`
}

// LockView is a slice's lease.
type LockView struct {
	Holder  string `json:"holder"`
	Expires string `json:"expires"`
	Expired bool   `json:"expired"`
}

// BoardHeartbeat is one agent's heartbeat with its age.
type BoardHeartbeat struct {
	Agent      string `json:"agent"`
	Status     string `json:"status"`
	Slice      string `json:"current_slice,omitempty"`
	Wave       *int   `json:"current_wave,omitempty"`
	Done       *int   `json:"tasks_completed,omitempty"`
	Remaining  *int   `json:"tasks_remaining,omitempty"`
	Last       string `json:"last_execution"`
	AgeSeconds *int64 `json:"age_seconds,omitempty"`
	// Stale: ACTIVE and silent for longer than the heartbeat timeout.
	Stale bool `json:"stale"`
}

// NewBoard builds the board of m at time now.
func NewBoard(m *asdd.Manifest, cfg *asdd.Config, now time.Time) Board {
	b := Board{Revision: m.Revision, Sprint: m.ProjectContext.CurrentSprint, GlobalConfidence: m.ProjectContext.GlobalConfidenceScore,
		Slices: []BoardSlice{}, Escalations: []escalationView{}, Heartbeats: []BoardHeartbeat{}, NeedsReview: m.NeedsReview()}
	for _, s := range m.Slices {
		bs := BoardSlice{ID: s.SliceID, Name: s.Name, Type: s.Type, Status: s.Status, CCS: s.CCS, NeedsReview: s.NeedsHumanReview}
		if wl, ok := asdd.WeakLink(s, cfg); ok {
			bs.WeakLink = &WeakLink{Agent: wl.Agent, Score: wl.Score, Uncertainty: wl.UncertaintyFactors}
		}
		if s.Status == asdd.Blocked {
			var awaiting []string
			required := s.SignOffsRequired
			if len(required) == 0 { // a block record written by hand or by a rebuild
				required = cfg.Escalation.SignOff
			}
			for _, r := range required {
				if !slices.ContainsFunc(s.SignOffs, func(x asdd.SignOff) bool { return x.Role == r }) {
					awaiting = append(awaiting, r)
				}
			}
			bs.Block = &BlockView{AtPhase: s.BlockedAtPhase, LKGPhase: s.LKGPhase, FailureMode: s.FailureMode, Reason: s.BlockReason,
				Since: s.RollbackTimestamp, Escalation: s.EscalationID, AwaitingBy: awaiting, Paused: s.PausedAgents}
		}
		if s.Lock != nil {
			exp, ok := asdd.ParseTimestamp(s.Lock.Expires)
			bs.Lock = &LockView{Holder: s.Lock.Holder, Expires: s.Lock.Expires, Expired: ok && !now.Before(exp)}
		}
		for _, t := range s.Tasks {
			bs.TasksTotal++
			if t.Status == asdd.TaskDone {
				bs.TasksDone++
			}
		}
		for _, t := range asdd.Ready(s) {
			bs.TasksReady = append(bs.TasksReady, t.ID)
		}
		for _, e := range s.Escalations {
			if e.Status == asdd.EscalationOpen {
				b.Escalations = append(b.Escalations, escalationView{Slice: s.SliceID, Escalation: e})
			}
		}
		b.Slices = append(b.Slices, bs)
	}
	slices.SortStableFunc(b.Slices, func(x, y BoardSlice) int { return boardOrder(x) - boardOrder(y) })
	for _, k := range sortedKeys(m.AgentHeartbeats) {
		h := m.AgentHeartbeats[k]
		bh := BoardHeartbeat{Agent: k, Status: h.Status, Slice: h.CurrentSlice, Wave: h.CurrentWave, Done: h.TasksCompleted, Remaining: h.TasksRemaining, Last: h.LastExecution}
		if t, ok := asdd.ParseTimestamp(h.LastExecution); ok {
			age := int64(now.Sub(t) / time.Second)
			bh.AgeSeconds = &age
			bh.Stale = h.Status == asdd.HeartbeatActive && now.Sub(t) > cfg.Heartbeat.Timeout.D()
		}
		b.Heartbeats = append(b.Heartbeats, bh)
	}
	return b
}

// boardOrder sorts slices by phase: the lifecycle in order, then BLOCKED
// (by the phase it was halted at), QUICK_FIX, others.
func boardOrder(s BoardSlice) int {
	switch {
	case s.Status == asdd.Blocked && s.Block != nil:
		return asdd.PhaseIndex(s.Block.AtPhase)*10 + 5
	case asdd.PhaseIndex(s.Status) >= 0:
		return asdd.PhaseIndex(s.Status) * 10
	case s.Status == asdd.QuickFix:
		return 1000
	}
	return 2000
}

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
			b := NewBoard(m, cfg, app.Now())
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
func writeBoard(w io.Writer, b Board) error {
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
	var blocked []BoardSlice
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
