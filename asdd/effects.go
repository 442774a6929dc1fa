package asdd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/custodian-dev/custodian/internal/safetext"
)

// Effect kinds.
const (
	// EffectMarkArtifact prefixes a file with a marker line (MarkContent).
	EffectMarkArtifact = "mark_artifact"
	// EffectUnmarkArtifact takes a file's marker line away again
	// (UnmarkContent): its agent passed.
	EffectUnmarkArtifact = "unmark_artifact"
	// EffectWriteFile writes Content to Path, replacing it.
	EffectWriteFile = "write_file"
	// EffectUpsertRow puts Content as the row keyed Key in the markdown
	// table at Path, creating the file with Header if needed.
	EffectUpsertRow = "upsert_row"
)

// FailureLogPath is the Agent Failure Log (seed 004).
const FailureLogPath = "docs/agent-failure-log.md"

// FailureLogColumns are the log's columns, as seed 004 names them.
var FailureLogColumns = []string{"Date", "Agent", "Phase", "Failure Mode", "Confidence Score", "Resolution", "Time to Resolve", "Root Cause"}

// Effect is a change to a file outside the manifest that a commit calls
// for. Rules return effects as data; package asdd/effects applies them,
// after the commit, inside the project root. Every effect is idempotent:
// applying it twice leaves the same file as applying it once.
type Effect struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Marker  string `json:"marker,omitempty"`
	Content string `json:"content,omitempty"`
	Key     string `json:"key,omitempty"`
	Header  string `json:"header,omitempty"`
}

// MarkContent returns content with marker as its first line, followed by a
// blank line. Content already marked with it is returned unchanged.
func MarkContent(marker string, content []byte) []byte {
	line := []byte(marker + "\n\n")
	if bytes.HasPrefix(content, line) {
		return content
	}
	return append(line, content...)
}

// UnmarkContent returns content without the marker line MarkContent put
// first; ok is false when content does not begin with it.
func UnmarkContent(marker string, content []byte) (out []byte, ok bool) {
	return bytes.CutPrefix(content, []byte(marker+"\n\n"))
}

// EscalationEffects are the files an escalation calls for: its notice
// under .asdd/escalations/ and its row in the agent failure log. They are
// derived from the escalation alone, so they can be re-applied at any time.
func EscalationEffects(s *Slice, e *Escalation) []Effect {
	out := []Effect{
		{Kind: EffectWriteFile, Path: e.Path, Content: NoticeText(s, e)},
		{Kind: EffectUpsertRow, Path: FailureLogPath, Key: e.ID, Content: FailureLogRow(e), Header: FailureLogHeader()},
	}
	if u := steeringUpdateOf(s, e.ID); u != nil {
		out = append(out, Effect{Kind: EffectWriteFile, Path: u.Path, Content: SteeringProposalText(s, e, u)})
	}
	return out
}

// AllEffects re-derives the effects of every escalation of every slice and
// the markers of every open halt: applying them repairs files lost after a
// crash between commit and effects.
func AllEffects(m *Manifest, cfg *Config) []Effect {
	var out []Effect
	for _, s := range m.Slices {
		if s.Status == Blocked && len(s.HaltedArtifacts) > 0 {
			marker := DefaultMarker
			if a, ok := cfg.Agent(s.HaltedAgent); ok {
				marker = a.ArtifactMarker()
			}
			for _, p := range s.Artifacts() {
				for _, hp := range s.HaltedArtifacts {
					if hp == p {
						out = append(out, Effect{Kind: EffectMarkArtifact, Path: p, Marker: marker})
					}
				}
			}
		}
		for i := range s.Escalations {
			out = append(out, EscalationEffects(s, &s.Escalations[i])...)
		}
	}
	return out
}

// FailureLogHeader is the log file's heading and table header.
func FailureLogHeader() string {
	var b strings.Builder
	b.WriteString("# Agent Failure Log\n\n")
	b.WriteString("Written by the custodian: one row per pipeline halt, completed when a human resolves it. Feeds the Knowledge Agent's learning loop.\n\n")
	b.WriteString("| " + strings.Join(FailureLogColumns, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat(" --- |", len(FailureLogColumns)) + "\n")
	return b.String()
}

// FailureLogRow is the escalation's row in the failure log.
func FailureLogRow(e *Escalation) string {
	score := "—"
	if e.Score != nil {
		score = FormatScore(*e.Score)
	}
	if e.FailureMode == ModeCCSFloor && e.CCS != nil {
		score = "CCS " + FormatScore(*e.CCS)
	}
	resolution, ttr := "open — routed to "+strings.Join(e.RouteTo, ", "), "—"
	if e.Status == EscalationResolved {
		resolution = fmt.Sprintf("%s by %s: %s", e.Resolution, e.ResolvedBy, e.Rationale)
		ttr = e.TimeToResolve
	}
	root := e.RootCause
	if root == "" {
		root = e.Reason
	}
	cells := []string{e.RaisedAt, orDefault(e.Agent, "—"), e.Phase, ModeLabel(e.FailureMode), score, resolution, ttr, root}
	for i, c := range cells {
		cells[i] = cell(c)
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// cell is s fit for one cell of the failure log's table: no line break,
// no bare pipe, no HTML (safetext.Cell).
func cell(s string) string { return safetext.Cell(s) }

// md is s fit for one line of a notice: no line break, no HTML comment,
// no leading character that would start a list item or heading
// (safetext.Inline), so that no text a proposal carries can forge a line
// such as "- Status: RESOLVED".
func md(s string) string { return safetext.Inline(s) }

func mdAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = md(s)
	}
	return out
}

// NoticeText is the escalation notice a Tech Lead receives (seed 004,
// rollback procedure step 3): confidence score, conflicting artifacts,
// failure mode category.
func NoticeText(s *Slice, e *Escalation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Escalation %s — %s\n\n", md(e.ID), ModeLabel(e.FailureMode))
	fmt.Fprintf(&b, "- Status: %s\n", e.Status)
	fmt.Fprintf(&b, "- Slice: %s", md(s.SliceID))
	if s.Name != "" {
		fmt.Fprintf(&b, " (%s)", md(s.Name))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "- Failure mode category: %s (%s)\n", ModeLabel(e.FailureMode), e.FailureMode)
	if e.Agent != "" {
		fmt.Fprintf(&b, "- Agent: %s\n", md(e.Agent))
	}
	fmt.Fprintf(&b, "- Phase: %s (last known good: %s)\n", e.Phase, Previous(e.Phase))
	if e.Score != nil {
		fmt.Fprintf(&b, "- Confidence score: %s\n", FormatScore(*e.Score))
	}
	if e.CCS != nil {
		fmt.Fprintf(&b, "- Cumulative confidence score: %s\n", FormatScore(*e.CCS))
	}
	fmt.Fprintf(&b, "- Raised: %s\n", md(e.RaisedAt))
	fmt.Fprintf(&b, "- Routed to: %s\n", strings.Join(mdAll(e.RouteTo), ", "))
	if e.Action != "" {
		fmt.Fprintf(&b, "- Action required: %s\n", md(e.Action))
	}
	if e.ReviewRequired != "" {
		fmt.Fprintf(&b, "- Review required: %s\n", md(e.ReviewRequired))
	}
	if e.FeatureBranch != "" {
		fmt.Fprintf(&b, "- Feature branch: %s\n", md(e.FeatureBranch))
	}
	if e.SteeringProposal != "" {
		fmt.Fprintf(&b, "- Steering-update proposal: %s (takes effect only once approved)\n", md(e.SteeringProposal))
	}
	fmt.Fprintf(&b, "\n## Reason\n\n%s\n", md(e.Reason))
	if len(e.Uncertainty) > 0 {
		b.WriteString("\n## Uncertainty factors\n\n")
		for _, u := range e.Uncertainty {
			fmt.Fprintf(&b, "- %s\n", md(u))
		}
	}
	if len(e.Findings) > 0 {
		b.WriteString("\n## Further findings\n\n")
		for _, f := range e.Findings {
			fmt.Fprintf(&b, "- %s\n", md(f))
		}
	}
	if len(e.Artifacts) > 0 {
		b.WriteString("\n## Artifacts\n\n")
		if e.ArtifactHashes != nil {
			b.WriteString("Every artifact of the slice, for a full human review, with the hash the custodian recorded:\n\n")
		}
		for _, a := range e.Artifacts {
			switch hs, ok := e.ArtifactHashes[a]; {
			case ok:
				fmt.Fprintf(&b, "- %s `%s`\n", md(a), md(hs))
			case e.ArtifactHashes != nil:
				fmt.Fprintf(&b, "- %s (no recorded hash)\n", md(a))
			default:
				fmt.Fprintf(&b, "- %s\n", md(a))
			}
		}
	}
	if len(e.Conflict) > 0 {
		b.WriteString("\n## Conflict diff\n\n| Field | Theirs | Ours |\n| --- | --- | --- |\n")
		for _, c := range e.Conflict {
			fmt.Fprintf(&b, "| %s | %s: %s %s (r%d) | %s: %s %s |\n", cell(c.Field),
				cell(c.Theirs.Agent), cell(c.Theirs.Value), cell(shortHash(c.Theirs.Hash)), c.Theirs.Revision,
				cell(c.Ours.Agent), cell(c.Ours.Value), cell(shortHash(c.Ours.Hash)))
		}
	}
	b.WriteString("\n## Resolution\n\n")
	if e.Status == EscalationResolved {
		fmt.Fprintf(&b, "- Decision: %s\n- By: %s\n- At: %s (after %s)\n- Rationale: %s\n", md(e.Resolution), md(e.ResolvedBy), md(e.ResolvedAt), md(e.TimeToResolve), md(e.Rationale))
		if a := e.Arbitration; a != nil {
			fmt.Fprintf(&b, "- Arbitration: in favour of %s over %s on %s\n", md(a.Favoured), md(a.Overruled), strings.Join(mdAll(a.Fields), ", "))
		}
		if e.RootCause != "" {
			fmt.Fprintf(&b, "- Root cause: %s\n", md(e.RootCause))
		}
	} else {
		id := safetext.Terminal(s.SliceID) // in a code block: shown as typed
		fmt.Fprintf(&b, "Open. Resolve with one of:\n\n")
		fmt.Fprintf(&b, "    custodian resolve %s --role ROLE --rationale TEXT --action rerun   # approve a revised agent run\n", id)
		fmt.Fprintf(&b, "    custodian resolve %s --role ROLE --rationale TEXT --action return --to PHASE\n", id)
		fmt.Fprintf(&b, "    custodian approve %s --role ROLE --rationale TEXT                  # accept the output as it is\n", id)
	}
	return b.String()
}

func shortHash(h string) string {
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

func marshalCompact(v any) (json.RawMessage, error) { return json.Marshal(v) }

// CommitEffects is what to apply after committing out: its own effects,
// plus the escalation notices and failure-log rows of every slice it
// touched, derived again from the manifest, so that effects lost to a
// crash between an earlier commit and its effects are repaired by the next
// commit on the slice. All are idempotent.
func CommitEffects(out *Outcome) []Effect {
	effs := append([]Effect(nil), out.Effects...)
	seen := map[string]bool{}
	for _, e := range effs {
		seen[e.Kind+" "+e.Path+" "+e.Key] = true
	}
	touched := map[string]bool{}
	for _, ev := range out.Events {
		if ev.Slice == "" || touched[ev.Slice] {
			continue
		}
		touched[ev.Slice] = true
		s := out.Manifest.Slice(ev.Slice)
		if s == nil {
			continue
		}
		for i := range s.Escalations {
			for _, e := range EscalationEffects(s, &s.Escalations[i]) {
				if !seen[e.Kind+" "+e.Path+" "+e.Key] {
					seen[e.Kind+" "+e.Path+" "+e.Key] = true
					effs = append(effs, e)
				}
			}
		}
	}
	return effs
}
