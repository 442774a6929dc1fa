package impl

import (
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// The script's plain-text output formats. Each function returns the lines
// without trailing newlines; the CLI joins them with "\n".

// TaskLines renders a task as --get-task does: one key=value line per field
// in the task's field order, strings raw, null as "null", numbers as
// written, arrays and objects as compact JSON.
func TaskLines(t Task) []string {
	fields := t.Fields()
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.Key + "=" + valueText(f.Value)
	}
	return out
}

// valueText renders one compact JSON value the way jq's string
// interpolation does: a string as its text, anything else as JSON.
func valueText(raw jsontext.Value) string {
	if raw.Kind() == '"' {
		if s, err := jsontext.AppendUnquote(nil, raw); err == nil {
			return string(s)
		}
	}
	return string(raw)
}

// TaskLine renders a task as --list-tasks does: id|phase|status|description.
func TaskLine(t Task) string {
	return oneLine(t.ID) + "|" + strconv.Itoa(t.Phase) + "|" + oneLine(string(t.Status)) + "|" + t.Description
}

// oneLine shows line breaks in a task id (or status) as \n and \r, so that
// an id written before ids were checked (CheckID) cannot forge another
// task's line (--ready, --list-tasks). The description, the last field,
// is printed as the script's jq printed it, line breaks included (the
// drop-in's output is byte for byte the script's; --json is the form for
// programs). Other control characters are the CLI's to escape
// (safetext.TerminalText).
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\r") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(s)
}

// PhaseStatusLines renders --phase-status: phase=, total=, one count per status.
func PhaseStatusLines(p PhaseStatus) []string {
	out := []string{"phase=" + strconv.Itoa(p.Phase), "total=" + strconv.Itoa(p.Total)}
	return append(out, countLines(p.Counts)...)
}

// SummaryLines renders --summary: plan_title=, plan_number=, total_phases=,
// total_tasks=, one count per status.
func SummaryLines(s Summary) []string {
	out := []string{
		"plan_title=" + s.PlanTitle,
		"plan_number=" + s.PlanNumber,
		"total_phases=" + strconv.Itoa(s.TotalPhases),
		"total_tasks=" + strconv.Itoa(s.TotalTasks),
	}
	return append(out, countLines(s.Counts)...)
}

func countLines(cs []Count) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c.Status) + "=" + strconv.Itoa(c.N)
	}
	return out
}

// ResumeLines renders --continue: phase=, status=, waiting_on= when
// blocked, then the runnable tasks as --list-tasks lines.
func ResumeLines(r Resume) []string {
	phase := ""
	if r.Phase != nil {
		phase = strconv.Itoa(*r.Phase)
	}
	out := []string{"phase=" + phase, "status=" + string(r.State)}
	if len(r.WaitingOn) > 0 {
		ws := make([]string, len(r.WaitingOn))
		for i, w := range r.WaitingOn {
			ws[i] = strconv.Itoa(w)
		}
		out = append(out, "waiting_on="+strings.Join(ws, ","))
	}
	for _, t := range r.Tasks {
		out = append(out, TaskLine(t))
	}
	return out
}

// StaleLine renders one --stale finding: id|status|branch|git state.
func StaleLine(s StaleTask) string {
	return s.ID + "|" + string(s.Status) + "|" + s.Branch + "|" + string(s.Git)
}
