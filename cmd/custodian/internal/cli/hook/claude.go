package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/daemon"
	"github.com/custodian-dev/custodian/hook/claude"
	"github.com/custodian-dev/custodian/internal/admincred"
	"github.com/custodian-dev/custodian/reason"
)

// The Claude Code doors (DESIGN.md §8): `custodian hook claude` answers
// Claude Code's hooks; `hook install --claude` / `hook uninstall --claude`
// merge it into the settings; `plugin export DIR` writes it as a plugin.
// The decisions and the JSON merges live in package hook/claude.

// ClaudeOptions is what `custodian hook claude` was asked to do: answer the
// hook whose JSON is on App.In, for the project found from App.Dir.
type ClaudeOptions struct {
	App *cmdutil.App
}

func newHookClaudeCmd(app *cmdutil.App, runF func(context.Context, *ClaudeOptions) error) *cobra.Command {
	opts := &ClaudeOptions{App: app}
	return &cobra.Command{
		Use:   "claude",
		Short: "Answer a Claude Code hook (PreToolUse, SessionStart): JSON on stdin, the decision on stdout",
		Long: `Run by Claude Code as a command hook (install it with
` + "`custodian hook install --claude`" + `). It reads the hook's JSON on stdin and answers:

  PreToolUse Write/Edit/MultiEdit/NotebookEdit of a file the custodian keeps
              -> permissionDecision "deny", naming the command to use instead
  PreToolUse Bash writing such a file (>, >>, tee, mv, cp, sed -i, rm,
              truncate, dd of=, ...) -> "deny"; a call of task-manifest.sh
              -> "allow" with updatedInput running ` + "`custodian impl`" + `
  SessionStart -> additionalContext stating the protocol
  anything else -> no output (allowed)

Managed files: .asdd/state/**, .asdd/escalations/**, .asdd/config.yaml,
docs/agent-failure-log.md, .impl/manifest.json, .agents/tmp/state.json,
.workflow/.cycle/** and their journals, locks and temp files, in the project
found from the call's cwd (and, in a git worktree, in the main checkout).
Input that cannot be read blocks the call (exit 2) when it mentions a
managed file and is allowed otherwise; the reason goes to stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(app.Context(cmd), opts)
		},
	}
}

// answerClaude answers the hook (package hook/claude decides). At
// SessionStart it first makes sure the project's daemon runs (startDaemon):
// the hook runs outside the agent's sandbox, the agent's CLI inside it can
// only reach the daemon.
func answerClaude(ctx context.Context, opts *ClaudeOptions) error {
	app := opts.App
	in := app.In
	if in == nil {
		in = os.Stdin
	}
	b, err := io.ReadAll(io.LimitReader(in, 8<<20))
	if err != nil {
		return err
	}
	var ev struct {
		Event string `json:"hook_event_name"`
	}
	if json.Unmarshal(b, &ev) == nil && ev.Event == "SessionStart" {
		if err := startDaemon(ctx, app); err != nil && app.Err != nil {
			fmt.Fprintf(app.Err, "custodian: %v\n", err)
		}
	}
	if code := claude.Run(app.Dir, bytes.NewReader(b), app.Out, app.Err); code != 0 {
		return &cmdutil.ExitError{Code: code}
	}
	return nil
}

// startDaemon starts the project's daemon unless one answers (a custodian
// project only: one with state). It listens on the unix socket only, logs
// to .asdd/state/daemon.log, and takes the admin token from the project's
// credential (daemon.EnsureRunning).
func startDaemon(ctx context.Context, app *cmdutil.App) error {
	root, err := app.Root()
	if err != nil {
		return nil
	}
	project := false
	for _, d := range []string{".asdd", ".impl", ".agents/tmp", ".workflow/.cycle"} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(d))); err == nil {
			project = true
		}
	}
	if !project {
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("start the daemon: %w", err)
	}
	cmd := exec.Command(self, "-C", root, "serve", "--addr", "", "--log-level", "warn")
	sock := filepath.Join(root, filepath.FromSlash(cmdutil.DefaultSocket))
	_, err = daemon.EnsureRunning(ctx, sock, cmd, filepath.Join(root, ".asdd", "state", "daemon.log"))
	return err
}

// ClaudeInstall is what `hook install --claude --json` and `hook uninstall
// --claude --json` print.
type ClaudeInstall struct {
	Scope   string         `json:"scope"`
	DryRun  bool           `json:"dry_run,omitempty"`
	Files   []ClaudeChange `json:"files"`
	Command string         `json:"command,omitempty"`
	// Sandbox says install wrote the sandbox block (not --no-sandbox).
	Sandbox bool `json:"sandbox,omitempty"`
}

// ClaudeChange is one file install or uninstall wrote (or would write).
type ClaudeChange struct {
	Path    string `json:"path"`
	Changed bool   `json:"changed"`
	Content string `json:"content,omitempty"` // with --dry-run
}

// claudeSettingsPath is the settings file of a scope.
func claudeSettingsPath(app *cmdutil.App, scope string) (string, error) {
	switch scope {
	case "project", "local":
		root, err := app.WorkRoot()
		if err != nil {
			return "", err
		}
		name := "settings.json"
		if scope == "local" {
			name = "settings.local.json"
		}
		return filepath.Join(root, ".claude", name), nil
	case "user":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the home directory: %w", err)
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
	}
	return "", &reason.UsageError{Err: fmt.Errorf("--scope %q: want project, local or user", scope)}
}

func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// rewriteJSONFile applies edit to a JSON file (absent: empty) and writes the
// result atomically unless dry or unchanged.
func rewriteJSONFile(path string, dry bool, edit func([]byte) ([]byte, bool, error)) (ClaudeChange, error) {
	old, err := readOptional(path)
	if err != nil {
		return ClaudeChange{}, fmt.Errorf("read %s: %w", path, err)
	}
	next, changed, err := edit(old)
	if err != nil {
		return ClaudeChange{}, reason.New(reason.InvalidInput, "%s: %v (the file is left as it is)", path, err)
	}
	changed = changed && !bytes.Equal(old, next)
	ch := ClaudeChange{Path: path, Changed: changed}
	if dry {
		ch.Content = string(next)
		return ch, nil
	}
	if changed {
		if err := claude.WriteFileAtomic(path, next, 0o644); err != nil {
			return ClaudeChange{}, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return ch, nil
}

func runClaudeInstall(app *cmdutil.App, scope, binary string, mcp, dry, remove, noSandbox bool) (*ClaudeInstall, error) {
	path, err := claudeSettingsPath(app, scope)
	if err != nil {
		return nil, err
	}
	if mcp && scope == "user" {
		return nil, &reason.UsageError{Err: errors.New("--mcp with --scope user: Claude Code keeps user MCP servers in ~/.claude.json; run `claude mcp add --scope user custodian -- custodian mcp`")}
	}
	sb, err := sandboxFor(app, noSandbox || remove)
	if err != nil {
		return nil, err
	}
	res := &ClaudeInstall{Scope: scope, DryRun: dry, Sandbox: !noSandbox && !remove}
	var ch ClaudeChange
	if remove {
		sb.Off = false // whatever install wrote goes
		ch, err = uninstallSettings(path, sb)
	} else {
		var session string
		if res.Command, session, err = hookCommand(binary); err != nil {
			return nil, err
		}
		if !noSandbox {
			if err := sandboxRuntime(); err != nil {
				return nil, &reason.UsageError{Err: err}
			}
		}
		if !dry {
			// The credential the sandbox hides: made now, by the
			// human, so that its directory exists when a session's
			// sandbox is set up.
			root, err := app.Root()
			if err != nil {
				return nil, err
			}
			if _, _, err := admincred.Ensure(root); err != nil {
				return nil, err
			}
		}
		ch, err = installSettings(path, res.Command, session, sb, dry)
	}
	if err != nil {
		return nil, err
	}
	res.Files = append(res.Files, ch)
	if mcp {
		root, err := app.WorkRoot()
		if err != nil {
			return nil, err
		}
		ch, err := rewriteJSONFile(filepath.Join(root, ".mcp.json"), dry, func(b []byte) ([]byte, bool, error) {
			if remove {
				return claude.RemoveMCP(b)
			}
			out, err := claude.MergeMCP(b)
			return out, true, err
		})
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, ch)
	}
	return res, nil
}

func printClaudeInstall(w io.Writer, res *ClaudeInstall, verb string) error {
	for _, f := range res.Files {
		switch {
		case res.DryRun:
			fmt.Fprintf(w, "would write %s:\n%s", f.Path, f.Content)
		case f.Changed:
			fmt.Fprintf(w, "%s %s\n", verb, f.Path)
		default:
			fmt.Fprintf(w, "unchanged %s\n", f.Path)
		}
	}
	return nil
}

// UninstallOptions is what `custodian hook uninstall` was asked to do.
type UninstallOptions struct {
	App   *cmdutil.App
	Scope string // project, local or user
	MCP   bool   // also remove the custodian server from .mcp.json
}

// newHookUninstallCmd returns `custodian hook uninstall`; it parses the
// command line into UninstallOptions and calls runF with them.
func newHookUninstallCmd(app *cmdutil.App, runF func(context.Context, *UninstallOptions) error) *cobra.Command {
	opts := &UninstallOptions{App: app}
	var claudeFlag bool
	cmd := &cobra.Command{
		Use:   "uninstall --claude [--scope project|local|user] [--mcp]",
		Short: "Remove the Claude Code hook entries (and with --mcp the MCP server) that install added",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !claudeFlag {
				return &reason.UsageError{Err: errors.New("uninstall needs --claude (the git pre-commit hook is removed by deleting it)")}
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().BoolVar(&claudeFlag, "claude", false, "remove the Claude Code hook")
	cmdutil.EnumFlag(cmd, cmd.Flags(), &opts.Scope, "scope", "project", []string{"project", "local", "user"}, "settings file: project (.claude/settings.json), local (.claude/settings.local.json) or user (~/.claude/settings.json)")
	cmd.Flags().BoolVar(&opts.MCP, "mcp", false, "also remove the custodian server from .mcp.json")
	return cmd
}

// uninstall removes the custodian's entries from the scope's settings.
func uninstall(_ context.Context, opts *UninstallOptions) error {
	res, err := runClaudeInstall(opts.App, opts.Scope, "", opts.MCP, false, true, false)
	if err != nil {
		return err
	}
	return opts.App.Render(res, func(w io.Writer) error { return printClaudeInstall(w, res, "removed the custodian entries from") })
}

// ExportOptions is what `custodian plugin export` was asked to do.
type ExportOptions struct {
	App    *cmdutil.App
	Dir    string // where the plugin goes
	Binary string // the custodian command the hook runs ("": custodian on PATH)
}

// NewPluginCmd returns `custodian plugin` and its subcommand export, which
// parses its command line into ExportOptions and calls runF with them
// (export when runF is nil).
func NewPluginCmd(app *cmdutil.App, runF func(context.Context, *ExportOptions) error) *cobra.Command {
	if runF == nil {
		runF = export
	}
	cmd := &cobra.Command{Use: "plugin", Short: "Claude Code plugin packaging of the custodian's hook and MCP server"}
	opts := &ExportOptions{App: app}
	exportCmd := &cobra.Command{
		Use:   "export DIR",
		Short: "Write a Claude Code plugin (hooks/hooks.json, .mcp.json, .claude-plugin/plugin.json) into DIR",
		Long: `Write a ready Claude Code plugin into DIR for teams that distribute settings
as a plugin: .claude-plugin/plugin.json, hooks/hooks.json (the PreToolUse and
SessionStart hook running ` + "`custodian hook claude`" + `) and .mcp.json (the
custodian MCP server). Running it again rewrites the same bytes; other files
in DIR are left alone.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return runF(app.Context(cmd), opts)
		},
	}
	exportCmd.Flags().StringVar(&opts.Binary, "binary", "", "the custodian command the hook runs (default: custodian on PATH)")
	cmd.AddCommand(exportCmd)
	return cmd
}

// export writes the plugin's files, each only when its bytes change.
func export(_ context.Context, opts *ExportOptions) error {
	command := claude.Command
	if opts.Binary != "" {
		command = cmdutil.ShellQuote(opts.Binary) + " hook claude"
	}
	files, err := claude.PluginFiles(command)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	res := &ClaudeInstall{Scope: "plugin", Command: command}
	for _, n := range names {
		p := filepath.Join(opts.Dir, filepath.FromSlash(n))
		old, _ := readOptional(p)
		ch := ClaudeChange{Path: p, Changed: !bytes.Equal(old, files[n])}
		if ch.Changed {
			if err := claude.WriteFileAtomic(p, files[n], 0o644); err != nil {
				return fmt.Errorf("write %s: %w", p, err)
			}
		}
		res.Files = append(res.Files, ch)
	}
	return opts.App.Render(res, func(w io.Writer) error { return printClaudeInstall(w, res, "wrote") })
}
