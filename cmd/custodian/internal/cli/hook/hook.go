package hook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"github.com/custodian-dev/custodian/reason"
)

// HookMarker identifies a pre-commit hook this command wrote.
const HookMarker = "# custodian pre-commit hook"

// InstallOptions is what `custodian hook install` was asked to do.
type InstallOptions struct {
	App    *cmdutil.App
	Force  bool   // replace a pre-commit hook custodian did not write
	Binary string // the custodian binary the hook runs ("": the one on PATH)
	Claude bool   // install the Claude Code hook instead
	Scope  string // with Claude: project, local or user
	MCP    bool   // with Claude: add the MCP server to .mcp.json
	DryRun bool   // with Claude: write nothing
	// NoSandbox leaves Claude Code's sandbox block out (with Claude): the
	// hook and the file tools' deny rules alone guard the files.
	NoSandbox bool
}

// Runs are the functions hook's subcommands call with their options; a
// nil one runs the command.
type Runs struct {
	Install   func(context.Context, *InstallOptions) error
	Uninstall func(context.Context, *UninstallOptions) error
	Claude    func(context.Context, *ClaudeOptions) error
	Doctor    func(context.Context, *DoctorOptions) error
}

// NewHookCmd returns `custodian hook` and its subcommands install, claude
// and uninstall; each parses its command line into its options and calls
// its function in runs (nil: the command's own).
func NewHookCmd(app *cmdutil.App, runs *Runs) *cobra.Command {
	r := Runs{}
	if runs != nil {
		r = *runs
	}
	if r.Install == nil {
		r.Install = install
	}
	if r.Uninstall == nil {
		r.Uninstall = uninstall
	}
	if r.Claude == nil {
		r.Claude = answerClaude
	}
	if r.Doctor == nil {
		r.Doctor = doctor
	}
	cmd := &cobra.Command{Use: "hook", Short: "Git pre-commit hook (custodian check) and Claude Code hooks (custodian hook claude)"}
	opts := &InstallOptions{App: app}
	installCmd := &cobra.Command{
		Use:   "install [--force] [--binary PATH] | install --claude [--binary PATH] [--scope project|local|user] [--mcp] [--dry-run] [--no-sandbox]",
		Short: "Write the git pre-commit hook that runs `custodian check` (a commit with findings is refused)",
		Long: `Write the repository's pre-commit hook (honouring core.hooksPath) so that
every commit first runs ` + "`custodian check --read-only`" + ` on this project: a commit
while an artifact is missing, drifted or outside the project, or while
rebuilt state awaits review, is refused. The check only reports: it halts no
slice and writes no file. The hook runs the custodian on PATH when the
commit is made (it refuses the commit, saying so, when there is none);
--binary names a binary instead. An existing hook that custodian did not
write is left alone unless --force.

In CI, run the same check on the checkout:

  custodian check --full      # exit 0 clean, 5 with findings

With --claude it installs the Claude Code protection instead, into
.claude/settings.json (--scope local: .claude/settings.local.json, --scope
user: ~/.claude/settings.json), merged with the settings there (every other
key and entry kept in its order, never twice, written atomically):

  hooks         PreToolUse and SessionStart running ` + "`custodian hook claude`" + `
                (refused, exit 2, when that command could not start: no
                custodian on PATH; --binary names one)
  sandbox       Claude Code's OS sandbox for Bash (bubblewrap on Linux,
                Seatbelt on macOS): no write to the custodian's files or
                these settings, no read of the admin credential, the
                daemon's unix socket reachable; refused when the
                sandbox cannot start here (exit 2), saying what to install
  permissions   deny rules keeping Edit, Write, MultiEdit and NotebookEdit
                off the same files

--no-sandbox leaves the sandbox out; --mcp adds the custodian MCP server to
.mcp.json; --dry-run prints the result and writes nothing. A settings file
that is not JSON, or whose sandbox block turns the sandbox off, is refused
and left as it is. ` + "`custodian hook uninstall --claude`" + ` restores the file byte
for byte (or, when it changed since, removes only the custodian's entries);
` + "`custodian hook doctor`" + ` says whether the protection is live.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !opts.Claude && (opts.MCP || opts.DryRun || opts.NoSandbox || cmd.Flags().Changed("scope")) {
				return &reason.UsageError{Err: errors.New("--scope, --mcp, --dry-run and --no-sandbox go with --claude")}
			}
			return r.Install(app.Context(cmd), opts)
		},
	}
	installCmd.Flags().BoolVar(&opts.Force, "force", false, "replace a pre-commit hook custodian did not write")
	installCmd.Flags().StringVar(&opts.Binary, "binary", "", "the custodian binary the hook runs (default: custodian on PATH when the hook runs)")
	installCmd.Flags().BoolVar(&opts.Claude, "claude", false, "install the Claude Code hook (custodian hook claude) into the Claude Code settings instead")
	cmdutil.EnumFlag(installCmd, installCmd.Flags(), &opts.Scope, "scope", "project", []string{"project", "local", "user"}, "with --claude: project (.claude/settings.json), local (.claude/settings.local.json) or user (~/.claude/settings.json)")
	installCmd.Flags().BoolVar(&opts.MCP, "mcp", false, "with --claude: also add the custodian MCP server to .mcp.json")
	installCmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "with --claude: print what would be written, write nothing")
	installCmd.Flags().BoolVar(&opts.NoSandbox, "no-sandbox", false, "with --claude: leave Claude Code's sandbox out (the hook alone then guards the files)")
	cmd.AddCommand(installCmd, newHookClaudeCmd(app, r.Claude), newHookUninstallCmd(app, r.Uninstall), newHookDoctorCmd(app, r.Doctor))
	return cmd
}

// install writes the git pre-commit hook, or with Claude the Claude Code
// hook entries.
func install(_ context.Context, opts *InstallOptions) error {
	app := opts.App
	if opts.Claude {
		res, err := runClaudeInstall(app, opts.Scope, opts.Binary, opts.MCP, opts.DryRun, false, opts.NoSandbox)
		if err != nil {
			return err
		}
		return app.Render(res, func(w io.Writer) error { return printClaudeInstall(w, res, "installed the custodian hook in") })
	}
	res, err := installHook(app, opts.Binary, opts.Force)
	if err != nil {
		return err
	}
	return app.Render(res, func(w io.Writer) error {
		bin := "the custodian on PATH"
		if res.Binary != "" {
			bin = res.Binary
		}
		_, err := fmt.Fprintf(w, "installed %s: commits run `custodian check --read-only` first (with %s)\n", res.Path, bin)
		return err
	})
}

// HookResult is what `custodian hook install --json` prints.
type HookResult struct {
	Path    string `json:"path"`
	Binary  string `json:"binary,omitempty"` // empty: the custodian on PATH
	Project string `json:"project"`          // relative to the repository's top level
}

func installHook(app *cmdutil.App, binary string, force bool) (*HookResult, error) {
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	git := func(args ...string) (string, error) {
		c := exec.Command("git", args...)
		c.Dir = root
		out, err := c.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return "", reason.New(reason.NotFound, "%s is not in a git repository: %s", root, strings.TrimSpace(string(ee.Stderr)))
			}
			return "", fmt.Errorf("run git: %w", err)
		}
		return strings.TrimSpace(string(out)), nil
	}
	top, err := git("rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	hooks, err := git("rev-parse", "--git-path", "hooks")
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(hooks) {
		hooks = filepath.Join(root, hooks)
	}
	if binary != "" {
		if binary, err = filepath.Abs(binary); err != nil {
			return nil, err
		}
	}
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(realTop, realRoot)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, reason.New(reason.InvalidInput, "project %s is not inside its git repository %s", root, top)
	}
	path := filepath.Join(hooks, "pre-commit")
	if old, err := os.ReadFile(path); err == nil && !strings.Contains(string(old), HookMarker) && !force {
		return nil, reason.New(reason.Conflict, "%s exists and was not written by custodian; add `custodian check` to it yourself, or replace it with --force", path)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	script := hookScript(binary, filepath.ToSlash(rel))
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", hooks, err)
	}
	if err := atomicfile.WritePath(path, []byte(script), 0o755); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &HookResult{Path: path, Binary: binary, Project: filepath.ToSlash(rel)}, nil
}

// hookScript is the pre-commit hook: custodian check --read-only on the
// project at rel (from the repository's top level), with the binary given
// or, by default, the custodian command on PATH. It reports and refuses the
// commit; it never halts a slice or writes a file.
func hookScript(binary, rel string) string {
	find := `bin=$(command -v custodian) || {
	echo "custodian pre-commit hook: custodian is not on PATH, so the ASDD state was not checked." >&2
	echo "  install it (in a clone of custodian: go install ./cmd/custodian; once the module is published: go install github.com/custodian-dev/custodian/cmd/custodian@latest)," >&2
	echo "  or commit once with git commit --no-verify" >&2
	exit 1
}`
	if binary != "" {
		find = "bin=" + cmdutil.ShellQuote(binary) + `
[ -x "$bin" ] || {
	echo "custodian pre-commit hook: $bin is not an executable: reinstall with custodian hook install" >&2
	exit 1
}`
	}
	return fmt.Sprintf(`#!/bin/sh
%s: refuse the commit while the ASDD state is inconsistent,
# drifted or awaiting review (custodian check exits 5). The check only
# reports: it halts nothing and writes no file. Reinstall with
# `+"`custodian hook install`"+`; bypass once with `+"`git commit --no-verify`"+`.
%s
top=$(git rev-parse --show-toplevel) || exit 1
exec "$bin" -C "$top/%s" check --read-only
`, HookMarker, find, rel)
}
