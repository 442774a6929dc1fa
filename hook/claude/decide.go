// Package claude is Custodian's Claude Code hook (DESIGN.md §8): the
// decision of `custodian hook claude` as a pure function from the hook's
// JSON input (and where the project is) to Claude Code's answer, and the
// settings, MCP and plugin files that install it.
//
// PreToolUse of Write, Edit, MultiEdit or NotebookEdit on a managed file is
// denied, naming the custodian command to use instead; a Bash command is
// parsed (mvdan.cc/sh/v3) and denied when it would write a managed file; a
// call of a plugin's task-manifest.sh is allowed, rewritten to
// `custodian impl` with the same arguments. SessionStart answers with the
// protocol as additional context. Anything the hook cannot decide about a
// managed path is denied (fail closed); everything else is allowed with no
// output.
package claude

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Input is the JSON Claude Code writes on the hook's stdin (the fields the
// hook reads; the others are ignored).
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
	Source         string          `json:"source"` // SessionStart: startup, resume, clear, compact
}

// Output is the hook's JSON answer on stdout.
type Output struct {
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is hookSpecificOutput.
type Specific struct {
	HookEventName            string         `json:"hookEventName"`
	PermissionDecision       string         `json:"permissionDecision,omitempty"` // allow, deny, ask
	PermissionDecisionReason string         `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             map[string]any `json:"updatedInput,omitempty"`
	AdditionalContext        string         `json:"additionalContext,omitempty"`
}

// Env is where the project is, as the door found it.
type Env struct {
	// Roots are the absolute project roots managed paths are relative to:
	// the root found from cwd and, in a git worktree, the main checkout's.
	Roots      []string
	ProjectDir string // $CLAUDE_PROJECT_DIR
	Home       string
	Binary     string // the custodian command a rewrite calls ("custodian")
	// Resolve, when set, follows symbolic links in an absolute path (the
	// door reads the file system; nil in tests): a write through a link to
	// a managed file is a write of that file.
	Resolve func(string) string
	// Tracked, when set, reports whether git tracks a state document under
	// a project root (the door asks git; nil in tests: assumed tracked).
	Tracked func(root string) bool
	// ReadPatch, when set, reads a patch file a `git apply` names (size-
	// capped); nil: its content is unknown.
	ReadPatch func(string) ([]byte, error)
}

// Result is the hook's answer: Output on stdout (nil: print nothing), Exit
// as the process status (2 blocks the call when the input could not be
// read), Stderr as a diagnostic.
type Result struct {
	Output *Output
	Exit   int
	Stderr string
}

// Decision is the permission decision of a PreToolUse answer ("" when the
// hook has nothing to say), for tests and logs.
func (r Result) Decision() string {
	if r.Exit == 2 {
		return "deny"
	}
	if r.Output == nil || r.Output.HookSpecificOutput == nil {
		return ""
	}
	return r.Output.HookSpecificOutput.PermissionDecision
}

// Parse reads the hook input.
func Parse(raw []byte) (*Input, error) {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("hook input is not JSON: %w", err)
	}
	return &in, nil
}

// Decide answers one hook call. in is nil when raw did not parse.
func Decide(in *Input, raw []byte, env Env) Result {
	if in == nil {
		return undecidable(raw, "hook input is not a JSON object")
	}
	switch in.HookEventName {
	case "SessionStart":
		return Result{Output: &Output{&Specific{HookEventName: "SessionStart", AdditionalContext: Protocol}}}
	case "PreToolUse":
	case "":
		return undecidable(raw, "hook input has no hook_event_name")
	default:
		return Result{} // not ours: say nothing
	}
	switch in.ToolName {
	case "Write", "Edit", "MultiEdit", "NotebookEdit":
		return decideFile(in, raw, env)
	case "Bash":
		return decideBash(in, raw, env)
	case "":
		return undecidable(raw, "PreToolUse input has no tool_name")
	}
	return Result{}
}

// undecidable answers input the hook cannot read: blocked (exit 2) when it
// mentions a managed path, allowed otherwise; the reason goes to stderr.
func undecidable(raw []byte, why string) Result {
	if MightBeManaged(string(raw)) {
		return Result{Exit: 2, Stderr: "custodian hook: " + why + " and it mentions a file the custodian keeps: denied to be safe. Change state with `custodian` commands (custodian --help)."}
	}
	return Result{Stderr: "custodian hook: " + why + "; it names no managed file: allowed"}
}

func deny(reason string) Result {
	return Result{Output: &Output{&Specific{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: reason}}}
}

func decideFile(in *Input, raw []byte, env Env) Result {
	var ti struct {
		FilePath     *string `json:"file_path"`
		NotebookPath *string `json:"notebook_path"`
	}
	if err := json.Unmarshal(in.ToolInput, &ti); err != nil || (ti.FilePath == nil && ti.NotebookPath == nil) {
		return undecidable(raw, in.ToolName+" input has no file_path")
	}
	p := ti.FilePath
	if p == nil {
		p = ti.NotebookPath
	}
	target := *p
	if !filepath.IsAbs(target) {
		if in.Cwd == "" || !filepath.IsAbs(in.Cwd) {
			if MightBeManaged(target) {
				return deny(fmt.Sprintf("%s: relative path with no cwd might be a file the custodian keeps: denied to be safe. %s", target, Advice(Classify(target))))
			}
			return Result{}
		}
		target = filepath.Join(in.Cwd, target)
	}
	target = filepath.Clean(target)
	targets := []string{target}
	if env.Resolve != nil {
		if r := env.Resolve(target); r != target {
			targets = append(targets, r)
		}
	}
	for _, t := range targets {
		if rel, ok := UserSettings(env.Home, t, false, false); ok {
			return deny(fmt.Sprintf("%s holds the custodian's hook and may not be edited by an agent (%s of %s). %s", rel, in.ToolName, t, Advice(Settings)))
		}
		for _, root := range env.Roots {
			rel, err := filepath.Rel(root, t)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				continue
			}
			if k := Classify(filepath.ToSlash(rel)); k != NotManaged {
				return deny(fmt.Sprintf("%s is kept by the custodian and may not be edited directly (%s of %s). %s",
					filepath.ToSlash(rel), in.ToolName, target, Advice(k)))
			}
		}
	}
	return Result{}
}

func decideBash(in *Input, raw []byte, env Env) Result {
	var ti map[string]any
	if err := json.Unmarshal(in.ToolInput, &ti); err != nil {
		return undecidable(raw, "Bash tool_input is not an object")
	}
	cmd, ok := ti["command"].(string)
	if !ok {
		return undecidable(raw, "Bash tool_input has no command")
	}
	cwd := in.Cwd
	if !filepath.IsAbs(cwd) {
		cwd = ""
	}
	res, err := AnalyzeBash(cmd, PathEnv{Cwd: cwd, Home: env.Home, ProjectDir: env.ProjectDir, Roots: env.Roots,
		Resolve: env.Resolve, Tracked: env.Tracked, ReadPatch: env.ReadPatch}, env.Binary)
	if err != nil {
		if MightBeManaged(cmd) {
			return deny(fmt.Sprintf("the command does not parse as Bash (%v) and mentions a file the custodian keeps: denied to be safe. %s", err, Advice(NotManaged)))
		}
		return Result{Stderr: fmt.Sprintf("custodian hook: %v; it names no managed file: allowed", err)}
	}
	if res.Exhausted {
		return deny(fmt.Sprintf("this command is too long or too complex for the hook to analyse within its budget (%d steps, %v; %d bytes at most): denied to be safe. Split it into smaller commands.", MaxSteps, MaxTime, MaxCommand))
	}
	if len(res.Human) > 0 {
		return deny(HumanAdvice(res.Human))
	}
	if len(res.Writes) > 0 {
		var list []string
		kinds := map[Kind]bool{}
		for _, w := range res.Writes {
			if s := w.String(); !slices.Contains(list, s) {
				list = append(list, s)
			}
			kinds[w.Kind] = true
		}
		var advice []string
		for _, k := range []Kind{ASDD, Config, Impl, AgentState, Cycle, Settings, NotManaged} {
			if kinds[k] {
				advice = append(advice, Advice(k))
			}
		}
		for _, w := range res.Writes {
			if w.Unsure {
				advice = append(advice, "To read a managed file with a program the hook does not know, feed it from a reader: `custodian get KEY | PROGRAM` or `jq . FILE | PROGRAM`.")
				break
			}
		}
		for _, w := range res.Writes {
			if strings.HasPrefix(w.Op, "git ") {
				advice = append(advice, "git must not put the custodian's files back to another revision (that rewinds the state behind its back): limit the git command to your own paths (`git stash push -- PATHS`, `git checkout -- PATHS`), or ask the human.")
				break
			}
		}
		return deny("this command may write files the custodian keeps: " + strings.Join(list, "; ") + ". " + strings.Join(advice, " "))
	}
	if res.Rewritten != "" {
		ti["command"] = res.Rewritten
		return Result{Output: &Output{&Specific{HookEventName: "PreToolUse", PermissionDecision: "allow",
			PermissionDecisionReason: "task-manifest.sh is served by the custodian: rewritten to `" + res.Rewritten + "`",
			UpdatedInput:             ti}}}
	}
	return Result{}
}

// Advice names the door to use instead of writing a managed file of kind k.
func Advice(k Kind) string {
	switch k {
	case ASDD:
		return "Change ASDD state through the custodian: `custodian propose`, `custodian slice add`, `custodian heartbeat`, `custodian lock`/`unlock`, `custodian halt`, or the custodian MCP server's tools (propose, slice_add, heartbeat, lock, task_claim, task_done); read it with `custodian status` or `custodian get`. Approvals, resolutions, reviews and rollbacks are the human's decisions."
	case Config:
		return ".asdd/config.yaml is the custodian's configuration: a human edits it outside the agent session."
	case Settings:
		return "The Claude Code settings hold the custodian's hook and sandbox: a human changes them (custodian hook install/uninstall) outside the agent session."
	case Impl:
		return "Change the task manifest with `custodian impl` (task-manifest.sh's arguments, e.g. `custodian impl --update-status --task-id ID --status passed`) or the MCP tools impl_add_task / impl_update_status."
	case AgentState:
		return "Change .agents/tmp/state.json with `custodian state update`, `custodian apply --key .agents/tmp/state.json --jq PROGRAM` or the MCP tool state_update."
	case Cycle:
		return "Change a cycle with `custodian cycle …` (`custodian cycle put ID --if-revision N` for a whole document, `custodian cycle append ID --log NAME` for a coordination log) or the MCP tool cycle_update."
	}
	return "Change state only through `custodian` commands (custodian --help) or the custodian MCP server's tools."
}

// HumanAdvice is the reason a human decision run by an agent is denied:
// who makes it, and what the agent does instead.
func HumanAdvice(cmds []string) string {
	return fmt.Sprintf("`%s` is a human decision: the human (the Tech Lead, or the role it names) makes it at their own terminal, never an agent. "+
		"Do not run it or work around it. Stop and tell the user what needs their decision; for a failure you detected, "+
		"`custodian halt SLICE --agent A --mode MODE --reason TEXT` halts the slice and notifies the Tech Lead.", strings.Join(cmds, "`, `"))
}

// Protocol is the SessionStart context.
const Protocol = `This project's pipeline state is kept by Custodian, the only writer of these files:
.asdd/state/manifest.json (ASDD slices), .impl/manifest.json (task manifest), .agents/tmp/state.json (agent state),
.workflow/.cycle/*.json (dev cycles), the journals, locks, escalations and config beside them, and .claude/settings.json.
Read them freely (cat, jq, custodian get/status). Never write them with Write/Edit, the shell or git (stash, reset --hard,
clean, checkout of them): such calls are denied.
Propose every change through the custodian, which validates it against the pipeline's rules and commits it atomically,
or rejects it with a reason code and changes nothing. The agent operations:
- ASDD: custodian propose / slice add / heartbeat / lock / unlock (your own lease) / halt; custodian status to see the board.
- Tasks: custodian impl with task-manifest.sh's arguments (calls of task-manifest.sh are run by custodian impl).
- Agent state: custodian state update, or custodian apply --key .agents/tmp/state.json --jq PROGRAM.
- Cycles: custodian cycle ... ; custodian cycle put ID --if-revision N; custodian cycle append ID --log NAME.
If the custodian MCP server is connected, its tools do the same (status, slice_show, slice_add, propose, heartbeat,
lock, unlock, tasks_ready, task_claim, task_done, escalations, impl_*, state_read/state_update, cycle_read/cycle_update,
history). A rejection names its reason (e.g. INVALID_TRANSITION,
BELOW_THRESHOLD, SLICE_LOCKED, CONFLICT): fix the proposal, do not work around it.
The human makes the human decisions at their own terminal: approve, resolve, review, rollback, init, repair, rebuild,
migrate, assumption correct, a forced unlock. Never run them; when one is needed, stop and tell the user (or halt the slice).`
