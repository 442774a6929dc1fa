package agentstate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Key is the store key (and path relative to the project root) of the state.
const Key = ".agents/tmp/state.json"

// PhasesDir is where phase outputs are written.
const PhasesDir = ".agents/tmp/phases"

// Version is the schema version this package reads and writes.
const Version = 2

// TimeLayout is the timestamp format: UTC, whole seconds.
const TimeLayout = "2006-01-02T15:04:05Z"

// Stamp formats t as a state timestamp.
func Stamp(t time.Time) string { return t.UTC().Format(TimeLayout) }

// Statuses are the values of status (and of a stage's or phase's status).
var Statuses = []string{"pending", "in_progress", "stopped", "completed", "failed", "blocked", "restarting", "skipped"}

// Stages are the workflow's stages, in order.
var Stages = []string{"EXPLORE", "PLAN", "IMPLEMENT", "TEST", "FINAL"}

// Phases are the workflow's phases, in order.
var Phases = []string{"0", "1.1", "1.2", "1.3", "2.1", "2.2", "2.3", "3.1", "3.2", "3.3", "4.1", "4.2", "4.3"}

// StageOf returns the stage a phase belongs to ("" for an unknown phase).
func StageOf(phase string) string {
	if !slices.Contains(Phases, phase) {
		return ""
	}
	if phase == "0" {
		return "EXPLORE"
	}
	return Stages[int(phase[0]-'0')]
}

// Init returns the initial state of a workflow for task, started at now:
// the schema's defaults with status in_progress and startedAt set.
func Init(task string, now time.Time) (Object, error) {
	if strings.TrimSpace(task) == "" {
		return nil, reason.New(reason.InvalidInput, "a task description is required")
	}
	zero := json.Number("0")
	st := Object{
		{"version", json.Number("2")},
		{"task", task},
		{"status", "in_progress"},
		{"currentStage", "EXPLORE"},
		{"currentPhase", "0"},
		{"stages", Object{
			{"EXPLORE", Object{{"status", "pending"}, {"agentCount", zero}}},
			{"PLAN", Object{{"status", "pending"}, {"phases", Object{}}, {"restartCount", zero}}},
			{"IMPLEMENT", Object{{"status", "pending"}, {"phases", Object{}}, {"restartCount", zero}}},
			{"TEST", Object{{"status", "pending"}, {"enabled", true}, {"restartCount", zero}}},
			{"FINAL", Object{{"status", "pending"}, {"restartCount", zero}}},
		}},
		{"files", Object{}},
		{"failure", nil},
		{"compaction", Object{{"lastCompactedAt", nil}, {"history", []any{}}}},
		{"startedAt", Stamp(now)},
		{"updatedAt", nil},
		{"stoppedAt", nil},
	}
	return st, nil
}

// Decode parses a state file: a JSON object of schema version 2. It does
// not check the other fields (Validate does), so that a state with one bad
// value can still be read and repaired by an update.
func Decode(data []byte) (Object, error) {
	o, err := DecodeObject(data)
	if err != nil {
		return nil, reason.New(reason.CorruptState, "state at %s is not valid JSON: %w", Key, err)
	}
	v, ok := o.Get("version")
	if n, isNum := v.(json.Number); !ok || !isNum || n.String() != "2" {
		return nil, reason.New(reason.InvalidInput, "state at %s has version %s; this is schema v%d", Key, describe(v, ok), Version)
	}
	return o, nil
}

func describe(v any, ok bool) string {
	if !ok {
		return "(none)"
	}
	b, err := Encode(v)
	if err != nil {
		return typeName(v)
	}
	return string(b)
}

// Validate checks a state against schema v2: the version, the status, the
// current stage and phase, every stage (no stage outside the five) and its
// phases, files, failure, compaction and the timestamps. Fields the schema
// does not name are allowed.
func Validate(st Object) error {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if v, _ := st.Get("version"); !isNumber(v, "2") {
		bad("version must be 2")
	}
	if v, ok := st.Get("task"); ok {
		if _, isStr := v.(string); !isStr {
			bad("task must be a string, not %s", typeName(v))
		}
	}
	if v, ok := st.Get("status"); ok {
		checkStatus(bad, "status", v, false)
	}
	if v, ok := st.Get("currentStage"); ok && v != nil {
		if s, isStr := v.(string); !isStr || !slices.Contains(Stages, s) {
			bad("currentStage %s is not a stage (%s)", describe(v, true), strings.Join(Stages, ", "))
		}
	}
	if v, ok := st.Get("currentPhase"); ok && v != nil {
		if phaseID(v) == "" {
			bad("currentPhase %s is not a phase (%s)", describe(v, true), strings.Join(Phases, ", "))
		}
	}
	if v, ok := st.Get("stages"); ok {
		validateStages(bad, v)
	}
	if v, ok := st.Get("files"); ok {
		if o, isObj := v.(Object); !isObj {
			bad("files must be an object, not %s", typeName(v))
		} else {
			for _, f := range o {
				if _, isStr := f.Value.(string); !isStr {
					bad("files[%q] must be a path (a string), not %s", f.Key, typeName(f.Value))
				}
			}
		}
	}
	if v, ok := st.Get("failure"); ok && v != nil {
		validateFailure(bad, v)
	}
	if v, ok := st.Get("compaction"); ok {
		if o, isObj := v.(Object); !isObj {
			bad("compaction must be an object, not %s", typeName(v))
		} else {
			if t, ok := o.Get("lastCompactedAt"); ok {
				checkTime(bad, "compaction.lastCompactedAt", t)
			}
			if h, ok := o.Get("history"); ok {
				if _, isArr := h.([]any); !isArr {
					bad("compaction.history must be an array, not %s", typeName(h))
				}
			}
		}
	}
	for _, k := range []string{"startedAt", "updatedAt", "stoppedAt"} {
		if v, ok := st.Get(k); ok {
			checkTime(bad, k, v)
		}
	}
	if len(errs) > 0 {
		return reason.New(reason.InvalidInput, "invalid state: %s", strings.Join(errs, "; ")).With("problems", errs)
	}
	return nil
}

func isNumber(v any, text string) bool {
	n, ok := v.(json.Number)
	return ok && n.String() == text
}

// phaseID returns the phase a value names ("" if none). Phases are strings;
// a number that spells a phase (0, 2.1) is accepted as well.
func phaseID(v any) string {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case json.Number:
		s = t.String()
	}
	if slices.Contains(Phases, s) {
		return s
	}
	return ""
}

func checkStatus(bad func(string, ...any), where string, v any, nullOK bool) {
	if v == nil && nullOK {
		return
	}
	if s, ok := v.(string); !ok || !slices.Contains(Statuses, s) {
		bad("%s %s is not a status (%s)", where, describe(v, true), strings.Join(Statuses, ", "))
	}
}

func checkTime(bad func(string, ...any), where string, v any) {
	if v == nil {
		return
	}
	s, ok := v.(string)
	if !ok {
		bad("%s must be a timestamp or null, not %s", where, typeName(v))
		return
	}
	if _, err := time.Parse(time.RFC3339, s); err != nil {
		bad("%s %q is not an RFC 3339 timestamp", where, s)
	}
}

func checkCount(bad func(string, ...any), where string, v any) {
	n, ok := v.(json.Number)
	if !ok {
		bad("%s must be a number, not %s", where, typeName(v))
		return
	}
	if i, err := n.Int64(); err != nil || i < 0 {
		bad("%s %s is not a whole number >= 0", where, n)
	}
}

func validateStages(bad func(string, ...any), v any) {
	stages, ok := v.(Object)
	if !ok {
		bad("stages must be an object, not %s", typeName(v))
		return
	}
	for _, f := range stages {
		if !slices.Contains(Stages, f.Key) {
			bad("stage %q does not exist (stages: %s)", f.Key, strings.Join(Stages, ", "))
			continue
		}
		stage, ok := f.Value.(Object)
		if !ok {
			bad("stages.%s must be an object, not %s", f.Key, typeName(f.Value))
			continue
		}
		for _, sf := range stage {
			where := "stages." + f.Key + "." + sf.Key
			switch sf.Key {
			case "status":
				checkStatus(bad, where, sf.Value, false)
			case "agentCount", "restartCount":
				checkCount(bad, where, sf.Value)
			case "enabled":
				if _, isBool := sf.Value.(bool); !isBool {
					bad("%s must be true or false, not %s", where, typeName(sf.Value))
				}
			case "phases":
				phases, isObj := sf.Value.(Object)
				if !isObj {
					bad("%s must be an object, not %s", where, typeName(sf.Value))
					continue
				}
				for _, pf := range phases {
					if StageOf(pf.Key) != f.Key {
						bad("%s: phase %q is not a phase of %s", where, pf.Key, f.Key)
						continue
					}
					if po, isObj := pf.Value.(Object); isObj {
						if s, ok := po.Get("status"); ok {
							checkStatus(bad, where+"."+pf.Key+".status", s, false)
						}
					}
				}
			}
		}
	}
}

func validateFailure(bad func(string, ...any), v any) {
	f, ok := v.(Object)
	if !ok {
		bad("failure must be an object or null, not %s", typeName(v))
		return
	}
	if p, ok := f.Get("phase"); ok && p != nil && phaseID(p) == "" {
		bad("failure.phase %s is not a phase", describe(p, true))
	}
	if e, ok := f.Get("error"); ok {
		if _, isStr := e.(string); !isStr {
			bad("failure.error must be a string, not %s", typeName(e))
		}
	}
	if t, ok := f.Get("failedAt"); ok {
		checkTime(bad, "failure.failedAt", t)
	}
	if c, ok := f.Get("context"); ok && c != nil {
		if _, isObj := c.(Object); !isObj {
			bad("failure.context must be an object, not %s", typeName(c))
		}
	}
}

// Update deep-merges patch into the state, sets updatedAt and validates
// the result.
func Update(cur, patch Object, now time.Time) (Object, error) {
	next := Merge(cur, patch).(Object)
	next.Set("updatedAt", Stamp(now))
	if err := Validate(next); err != nil {
		return nil, err
	}
	return next, nil
}

var extPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]{1,16}$`) })

// OutputPath returns where a phase's output goes:
// .agents/tmp/phases/{phase}-output.{ext}.
func OutputPath(phase, ext string) (string, error) {
	if !slices.Contains(Phases, phase) {
		return "", reason.New(reason.InvalidInput, "phase %q is not a phase (%s)", phase, strings.Join(Phases, ", "))
	}
	if !extPattern().MatchString(ext) {
		return "", reason.New(reason.InvalidInput, "extension %q: use letters and digits only (md, json, txt)", ext)
	}
	return PhasesDir + "/" + phase + "-output." + ext, nil
}

// RecordOutput records that phase's output is at path: files[phase] = path.
func RecordOutput(cur Object, phase, path string, now time.Time) (Object, error) {
	if StageOf(phase) == "" {
		return nil, reason.New(reason.InvalidInput, "phase %q is not a phase (%s)", phase, strings.Join(Phases, ", "))
	}
	return Update(cur, Object{{"files", Object{{phase, path}}}}, now)
}

// Failure is what record-failure records.
type Failure struct {
	Phase   string
	Error   string
	Context Object // nil: {}
}

// RecordFailure sets status failed and the failure record of the seed:
// phase, error, failedAt, context.
func RecordFailure(cur Object, f Failure, now time.Time) (Object, error) {
	if StageOf(f.Phase) == "" {
		return nil, reason.New(reason.InvalidInput, "phase %q is not a phase (%s)", f.Phase, strings.Join(Phases, ", "))
	}
	if strings.TrimSpace(f.Error) == "" {
		return nil, reason.New(reason.InvalidInput, "a failure needs an error message")
	}
	ctx := f.Context
	if ctx == nil {
		ctx = Object{}
	}
	next := cur.Clone()
	next.Set("status", "failed")
	next.Set("failure", Object{{"phase", f.Phase}, {"error", f.Error}, {"failedAt", Stamp(now)}, {"context", ctx.Clone()}})
	next.Set("updatedAt", Stamp(now))
	if err := Validate(next); err != nil {
		return nil, err
	}
	return next, nil
}

// Compact records a context compaction: compaction.lastCompactedAt = now
// and a history entry {compactedAt, stage, phase[, summary]} with the stage
// and phase the workflow was at.
func Compact(cur Object, summary string, now time.Time) (Object, error) {
	next := cur.Clone()
	comp, _ := next.Get("compaction")
	co, ok := comp.(Object)
	if !ok {
		if comp != nil {
			return nil, reason.New(reason.InvalidInput, "compaction must be an object, not %s", typeName(comp))
		}
		co = Object{{"lastCompactedAt", nil}, {"history", []any{}}}
	}
	hist, _ := co.Get("history")
	h, ok := hist.([]any)
	if !ok && hist != nil {
		return nil, reason.New(reason.InvalidInput, "compaction.history must be an array, not %s", typeName(hist))
	}
	stage, _ := next.Get("currentStage")
	phase, _ := next.Get("currentPhase")
	entry := Object{{"compactedAt", Stamp(now)}, {"stage", stage}, {"phase", phase}}
	if summary != "" {
		entry = append(entry, Field{"summary", summary})
	}
	co.Set("lastCompactedAt", Stamp(now))
	co.Set("history", append(slices.Clone(h), entry))
	next.Set("compaction", co)
	next.Set("updatedAt", Stamp(now))
	if err := Validate(next); err != nil {
		return nil, err
	}
	return next, nil
}

// Lookup returns the value at a dotted path ("stages.PLAN.status"); keys
// that contain dots cannot be addressed, except phase ids, which are tried
// whole first ("files.2.1").
func Lookup(st Object, path string) (any, error) {
	if path == "" {
		return st, nil
	}
	var cur any = st
	rest := path
	for rest != "" {
		o, ok := cur.(Object)
		if !ok {
			return nil, reason.New(reason.NotFound, "%s: %s is not an object", path, typeName(cur))
		}
		found := false
		// The longest key that matches a prefix of rest wins, so "2.1"
		// addresses a phase rather than key "2" then "1".
		for end := len(rest); end > 0; end-- {
			if end < len(rest) && rest[end] != '.' {
				continue
			}
			if v, ok := o.Get(rest[:end]); ok {
				cur, found = v, true
				rest = strings.TrimPrefix(rest[end:], ".")
				break
			}
		}
		if !found {
			return nil, reason.New(reason.NotFound, "no field %s in the state", path)
		}
	}
	return cur, nil
}
