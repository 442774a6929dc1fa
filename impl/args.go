package impl

import (
	"strconv"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// Op is one operation of the task-manifest.sh command line.
type Op string

// The operations: the script's eight and the three ADR-008 asked for.
const (
	OpInit         Op = "init"
	OpAddTask      Op = "add-task"
	OpGetTask      Op = "get-task"
	OpGetPlanPath  Op = "get-plan-path"
	OpUpdateStatus Op = "update-status"
	OpListTasks    Op = "list-tasks"
	OpPhaseStatus  Op = "phase-status"
	OpSummary      Op = "summary"
	OpContinue     Op = "continue"
	OpReady        Op = "ready"
	OpStale        Op = "stale"
	OpHelp         Op = "help"
)

var ops = map[string]Op{
	"--init": OpInit, "--add-task": OpAddTask, "--get-task": OpGetTask,
	"--get-plan-path": OpGetPlanPath, "--update-status": OpUpdateStatus,
	"--list-tasks": OpListTasks, "--phase-status": OpPhaseStatus,
	"--summary": OpSummary, "--continue": OpContinue, "--ready": OpReady,
	"--stale": OpStale, "--help": OpHelp, "-h": OpHelp,
}

// Args is a parsed task-manifest.sh command line.
type Args struct {
	Op              Op
	PlanPath        string
	PlanNumber      string
	PlanTitle       string
	TaskID          string
	Phase           string
	Description     string
	DependsOn       string // "none" (the default) or "1,2"
	BoundedContexts string // "" or "A,B"
	Status          string
	Branch          string
	CheckResults    string
	Error           string
	Base            string // --stale: the branch tasks merge into
	Force           bool
	// Custodian's global flags, accepted anywhere on the line.
	Dir    string
	JSON   bool
	Server string // --server URL
	Store  string // --store URL
}

// ParseArgs parses the script's arguments as the script does: options in
// any order, later ones win, the last operation flag is the operation.
// "--name=value" is accepted as well as "--name value". Errors carry the
// script's wording.
func ParseArgs(argv []string) (Args, error) {
	a := Args{DependsOn: "none"}
	values := map[string]*string{
		"--plan-path": &a.PlanPath, "--plan-number": &a.PlanNumber, "--plan-title": &a.PlanTitle,
		"--task-id": &a.TaskID, "--phase": &a.Phase, "--description": &a.Description,
		"--depends-on": &a.DependsOn, "--bounded-contexts": &a.BoundedContexts,
		"--status": &a.Status, "--branch": &a.Branch, "--check-results": &a.CheckResults,
		"--error": &a.Error, "--base": &a.Base, "--dir": &a.Dir, "-C": &a.Dir,
		"--server": &a.Server, "--store": &a.Store,
	}
	for i := 0; i < len(argv); i++ {
		arg := argv[i]
		if op, ok := ops[arg]; ok {
			a.Op = op
			continue
		}
		switch arg {
		case "--force":
			a.Force = true
			continue
		case "--json":
			a.JSON = true
			continue
		}
		name, val, inline := strings.Cut(arg, "=")
		dst, ok := values[name]
		if !ok {
			return Args{}, reason.New(reason.InvalidInput, "Unknown argument: %s", arg)
		}
		if !inline {
			if i+1 >= len(argv) {
				return Args{}, reason.New(reason.InvalidInput, "%s needs a value", name)
			}
			i++
			val = argv[i]
		}
		*dst = val
	}
	if a.Op == "" {
		return Args{}, reason.New(reason.InvalidInput, "an operation is required (--init, --add-task, --get-task, etc.)")
	}
	return a, nil
}

// ParsePhase parses a phase number as jq's tonumber would accept it for
// the script: a whole number, surrounding blanks ignored.
func ParsePhase(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, reason.New(reason.InvalidInput, "phase %q is not a whole number", s)
	}
	return n, nil
}

// ParseDependsOn parses --depends-on: "none" or "" for no dependency,
// otherwise comma-separated phase numbers.
func ParseDependsOn(s string) ([]int, error) {
	if s == "none" || s == "" {
		return []int{}, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int, 0, len(parts))
	for _, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, reason.New(reason.InvalidInput, "--depends-on %q: %q is not a phase number", s, p)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseBoundedContexts splits --bounded-contexts on commas exactly as the
// script does (no trimming): "" is no context, "A,B" is ["A","B"].
func ParseBoundedContexts(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}
