package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/daemon"
	"github.com/custodian-dev/custodian/internal/admincred"
	"github.com/custodian-dev/custodian/reason"
)

// DoctorOptions is what `custodian hook doctor` was asked to do.
type DoctorOptions struct {
	App   *cmdutil.App
	Scope string
}

// Check is one finding of the doctor.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // ok, warn or fail
	Detail string `json:"detail"`
}

// DoctorReport is what `custodian hook doctor --json` prints.
type DoctorReport struct {
	Settings string  `json:"settings"`
	Live     bool    `json:"live"`
	Checks   []Check `json:"checks"`
}

func newHookDoctorCmd(app *cmdutil.App, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{App: app}
	cmd := &cobra.Command{
		Use:   "doctor [--scope project|local|user]",
		Short: "Say whether the Claude Code protection is live: hook, sandbox, credential, daemon",
		Long: `Check what makes the custodian the only writer of the project's state under
Claude Code: the hook command in the settings starts; the sandbox block is
there, on, and denies writing every custodian file; the sandbox can start on
this machine (bubblewrap and socat on Linux); the admin credential exists
and the sandbox denies reading it; the daemon answers on its socket (the
next session's SessionStart hook starts it otherwise). Exit 0 when the
protection is live, 5 when a check fails (a warning does not).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(app.Context(cmd), opts)
		},
	}
	cmdutil.EnumFlag(cmd, cmd.Flags(), &opts.Scope, "scope", "project", []string{"project", "local", "user"}, "settings file to check: project (.claude/settings.json), local (.claude/settings.local.json) or user (~/.claude/settings.json)")
	return cmd
}

// doctor runs the checks and reports them.
func doctor(ctx context.Context, opts *DoctorOptions) error {
	rep, err := runDoctor(ctx, opts.App, opts.Scope)
	if err != nil {
		return err
	}
	if err := opts.App.Render(rep, func(w io.Writer) error {
		for _, c := range rep.Checks {
			fmt.Fprintf(w, "%-4s  %-10s  %s\n", c.Status, c.Name, c.Detail)
		}
		if rep.Live {
			_, err := fmt.Fprintln(w, "protection is live")
			return err
		}
		_, err := fmt.Fprintln(w, "protection is NOT live")
		return err
	}); err != nil {
		return err
	}
	if !rep.Live {
		return &cmdutil.ExitError{Code: reason.ExitIntegrity}
	}
	return nil
}

func runDoctor(ctx context.Context, app *cmdutil.App, scope string) (*DoctorReport, error) {
	path, err := claudeSettingsPath(app, scope)
	if err != nil {
		return nil, err
	}
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	rep := &DoctorReport{Settings: path, Live: true}
	add := func(name, status, format string, args ...any) {
		rep.Checks = append(rep.Checks, Check{name, status, fmt.Sprintf(format, args...)})
		if status == "fail" {
			rep.Live = false
		}
	}
	var settings struct {
		Hooks   map[string][]struct{ Hooks []struct{ Command string } }
		Sandbox *struct {
			Enabled                  *bool
			FailIfUnavailable        *bool
			AllowUnsandboxedCommands *bool
			ExcludedCommands         []string
			Filesystem               struct{ DenyWrite, DenyRead []string }
			Network                  struct{ AllowAllUnixSockets *bool }
		}
	}
	b, err := os.ReadFile(path)
	switch {
	case err != nil:
		add("settings", "fail", "%v: run custodian hook install --claude", err)
	case json.Unmarshal(b, &settings) != nil:
		add("settings", "fail", "%s is not valid JSON", path)
	default:
		add("settings", "ok", "%s", path)
	}
	// The hook command starts.
	var cmds []string
	for _, ev := range []string{"PreToolUse", "SessionStart"} {
		found := ""
		for _, g := range settings.Hooks[ev] {
			for _, h := range g.Hooks {
				if strings.HasSuffix(strings.TrimSpace(h.Command), "hook claude") {
					found = h.Command
				}
			}
		}
		if found == "" {
			add("hook", "fail", "no %s entry running `custodian hook claude`: run custodian hook install --claude", ev)
			continue
		}
		cmds = append(cmds, found)
	}
	for _, c := range slices.Compact(cmds) {
		if bin, ok := startable(c); ok {
			add("hook", "ok", "%q starts (%s)", c, bin)
		} else {
			add("hook", "fail", "%q cannot start: %s is not an executable on PATH, and Claude Code lets every call through when its hook cannot start: reinstall with --binary PATH", c, bin)
		}
	}
	// The sandbox block.
	sb, err := sandboxFor(app, false)
	if err != nil {
		return nil, err
	}
	s := settings.Sandbox
	switch {
	case s == nil:
		add("sandbox", "fail", "no sandbox block: agents' commands can write the custodian's files (installed with --no-sandbox?)")
	case s.Enabled == nil || !*s.Enabled:
		add("sandbox", "fail", "sandbox.enabled is not true")
	case s.AllowUnsandboxedCommands == nil || *s.AllowUnsandboxedCommands:
		add("sandbox", "fail", "sandbox.allowUnsandboxedCommands is not false: an agent may run a command outside the sandbox")
	default:
		var missing []string
		for _, p := range sb.DenyWrite {
			if !slices.Contains(s.Filesystem.DenyWrite, p) {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			add("sandbox", "fail", "sandbox.filesystem.denyWrite lacks %s: run custodian hook install --claude", strings.Join(missing, ", "))
		} else {
			add("sandbox", "ok", "on; writes denied to %d paths", len(sb.DenyWrite))
		}
		if s.FailIfUnavailable == nil || !*s.FailIfUnavailable {
			add("sandbox", "warn", "sandbox.failIfUnavailable is not true: where the sandbox cannot start, commands run without it")
		}
		if len(s.ExcludedCommands) > 0 {
			add("sandbox", "warn", "sandbox.excludedCommands runs %s outside the sandbox: those commands can write the custodian's files", strings.Join(s.ExcludedCommands, ", "))
		}
		if s.Network.AllowAllUnixSockets == nil || !*s.Network.AllowAllUnixSockets {
			add("sandbox", "warn", "sandbox.network.allowAllUnixSockets is not true: on Linux the CLI cannot reach the daemon from inside the sandbox")
		}
	}
	if err := sandboxRuntime(); err != nil {
		add("runtime", "fail", "%v", err)
	} else {
		add("runtime", "ok", "the sandbox can start on this machine")
	}
	// The credential.
	cred, err := admincred.Path(root)
	if err != nil {
		return nil, err
	}
	if _, err := admincred.Read(root); err != nil {
		add("credential", "fail", "%v: custodian serve or init (run by the human) makes it", err)
	} else if s != nil && !slices.Contains(s.Filesystem.DenyRead, sb.DenyRead[0]) {
		add("credential", "fail", "%s exists but the sandbox does not deny reading %s: an agent could make the human decisions", cred, sb.DenyRead[0])
	} else if s != nil {
		add("credential", "ok", "%s, hidden from the sandbox (%s)", cred, sb.DenyRead[0])
	} else {
		add("credential", "warn", "%s: without the sandbox an agent running as you can read it", cred)
	}
	// The daemon.
	sock := filepath.Join(root, filepath.FromSlash(cmdutil.DefaultSocket))
	if daemon.Answers(ctx, sock) {
		add("daemon", "ok", "answers on %s", sock)
	} else {
		add("daemon", "warn", "not running: the next session's SessionStart hook starts it (or run custodian serve); until then the agents' changes fail in the sandbox")
	}
	return rep, nil
}

// startable reports whether a hook command's program can start: an
// executable path, or a name found on PATH.
func startable(command string) (string, bool) {
	f := strings.Fields(command)
	if len(f) == 0 {
		return "", false
	}
	bin := strings.Trim(f[0], `'"`)
	if strings.HasPrefix(f[0], "'") && !strings.HasSuffix(f[0], "'") {
		// A quoted path with spaces: up to the closing quote.
		if i := strings.Index(command[1:], "'"); i >= 0 {
			bin = command[1 : i+1]
		}
	}
	p, err := exec.LookPath(bin)
	if err != nil {
		return bin, false
	}
	return p, true
}
