package hook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/hook/claude"
	"github.com/custodian-dev/custodian/internal/admincred"
	"github.com/custodian-dev/custodian/internal/projectroot"
	"github.com/custodian-dev/custodian/managed"
	"github.com/custodian-dev/custodian/reason"
)

// The agent's sandbox (issue 30): `hook install --claude` writes into
// Claude Code's settings a sandbox block under which no Bash command of
// the agent's can write a custodian file or read the human's admin
// credential, and deny rules that keep its file tools off the same files.
// The CLI inside the sandbox reaches the daemon on its unix socket.

// sandboxFor returns the sandbox install writes for the project: paths
// relative to the session's directory (the work root, where
// .claude/settings.json is), absolute where the state lives elsewhere (a
// linked git worktree's state is the main checkout's).
func sandboxFor(app *cmdutil.App, off bool) (claude.Sandbox, error) {
	root, err := app.Root()
	if err != nil {
		return claude.Sandbox{}, err
	}
	work, err := app.WorkRoot()
	if err != nil {
		return claude.Sandbox{}, err
	}
	state := func(rel string) string {
		if root == work {
			return "./" + rel
		}
		return "/" + filepath.ToSlash(filepath.Join(root, filepath.FromSlash(rel)))
	}
	sb := claude.Sandbox{Off: off}
	for _, p := range managed.SandboxPaths() {
		sb.DenyWrite = append(sb.DenyWrite, state(p))
	}
	sb.Files = []string{state(managed.ConfigPath), state(managed.FailureLogPath)}
	// The settings that configure the sandbox, and the MCP servers the
	// session starts outside it.
	settings := []string{"./.claude/settings.json", "./.claude/settings.local.json", "./.mcp.json"}
	sb.DenyWrite = append(sb.DenyWrite, settings...)
	sb.Files = append(sb.Files, settings...)
	// The witness of the state's journals (store/file's witness.go): in a
	// git project it is .git/custodian, inside the session's directory,
	// which the sandbox leaves writable (elsewhere, the user's state
	// directory or a main checkout's .git, it is outside what the sandbox
	// lets a command write). It is made now so that there is a path to deny.
	witness, err := projectroot.WitnessDir(root)
	if err != nil {
		return claude.Sandbox{}, err
	}
	if rel, err := filepath.Rel(work, witness); witness != "" && err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		if err := os.MkdirAll(witness, 0o700); err != nil {
			return claude.Sandbox{}, fmt.Errorf("make the witness directory: %w", err)
		}
		sb.DenyWrite = append(sb.DenyWrite, "./"+filepath.ToSlash(rel))
	}
	sb.Sockets = []string{state(cmdutil.DefaultSocket)}
	cred, err := admincred.Dir()
	if err != nil {
		return claude.Sandbox{}, err
	}
	sb.DenyRead = []string{homePath(cred)}
	return sb, nil
}

// homePath writes an absolute path in the settings' syntax: ~/… under the
// home directory (the same for every member of a team), //… elsewhere.
func homePath(p string) string {
	if home, err := os.UserHomeDir(); err == nil {
		if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return "/" + filepath.ToSlash(p)
}

// sandboxRuntime checks that Claude Code's sandbox can start on this
// machine: on Linux bubblewrap and socat installed and bubblewrap able to
// make its namespaces; on macOS sandbox-exec. It says what to install.
func sandboxRuntime() error {
	const off = "; or install with --no-sandbox (the hook alone then guards the files: see docs/agents.md)"
	switch runtime.GOOS {
	case "linux":
		var missing []string
		for _, b := range []string{"bwrap", "socat"} {
			if _, err := exec.LookPath(b); err != nil {
				missing = append(missing, b)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("the agent's sandbox cannot start: %s not on PATH: install bubblewrap and socat (Debian/Ubuntu: apt-get install bubblewrap socat; Fedora: dnf install bubblewrap socat; Arch: pacman -S bubblewrap socat)%s", strings.Join(missing, " and "), off)
		}
		if out, err := exec.Command("bwrap", "--ro-bind", "/", "/", "true").CombinedOutput(); err != nil {
			return fmt.Errorf("the agent's sandbox cannot start: bubblewrap fails (%v: %s): unprivileged user namespaces are off (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0)%s", err, strings.TrimSpace(string(out)), off)
		}
	case "darwin":
		if _, err := exec.LookPath("sandbox-exec"); err != nil {
			return fmt.Errorf("the agent's sandbox cannot start: sandbox-exec is not on PATH%s", off)
		}
	default:
		return fmt.Errorf("no Claude Code sandbox on %s%s", runtime.GOOS, off)
	}
	return nil
}

// hookCommand returns the hook commands install writes (PreToolUse's, and
// SessionStart's, which starts the daemon and so runs the full binary),
// refusing (exit 2) one that could not start: Claude Code lets every call
// through when its hook cannot start.
func hookCommand(binary string) (pre, session string, err error) {
	if binary != "" {
		abs, err := filepath.Abs(binary)
		if err != nil {
			return "", "", err
		}
		if fi, err := os.Stat(abs); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return "", "", reason.Usage("--binary %s is not an executable file: the hook could not start, and Claude Code would let every call through", abs)
		}
		c := cmdutil.ShellQuote(abs) + " hook claude"
		return c, c, nil
	}
	if _, err := exec.LookPath("custodian"); err != nil {
		self, _ := os.Executable()
		return "", "", reason.Usage("custodian is not on PATH, so the hook command %q could not start, and Claude Code lets every call through when its hook cannot start: put custodian on PATH, or name the binary with --binary %s", claude.Command, cmdutil.ShellQuote(self))
	}
	// The small binary answers an unrelated call in about a millisecond
	// (the full one pays its package initialisation on every Write, Edit
	// and Bash call): used when it is installed.
	if _, err := exec.LookPath(claude.FastBinary); err == nil {
		return claude.FastBinary + " hook claude", claude.Command, nil
	}
	return claude.Command, claude.Command, nil
}

// backup is what install keeps of a settings file to undo it: the file as
// it was before the first install, and as install last wrote it.
type backup struct {
	Path      string `json:"path"`
	Existed   bool   `json:"existed"`
	Original  string `json:"original"`
	Installed string `json:"installed"`
}

// backupPath is where install keeps the backup of a settings file: beside
// the admin credentials (outside the project, hidden from the sandbox).
func backupPath(settings string) (string, error) {
	dir, err := admincred.Dir()
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(settings)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, "claude-settings", hex.EncodeToString(sum[:8])+".json"), nil
}

func readBackup(settings string) (*backup, string, error) {
	p, err := backupPath(settings)
	if err != nil {
		return nil, "", err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, p, nil
	}
	if err != nil {
		return nil, p, err
	}
	var bk backup
	if err := json.Unmarshal(b, &bk); err != nil {
		return nil, p, fmt.Errorf("%s: %w", p, err)
	}
	return &bk, p, nil
}

func writeBackup(p string, bk *backup) error {
	b, err := json.MarshalIndent(bk, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return claude.WriteFileAtomic(p, append(b, '\n'), 0o600)
}

// installSettings merges the hook and the sandbox into the settings file
// at path, keeping a backup to undo it byte for byte.
func installSettings(path, command, session string, sb claude.Sandbox, dry bool) (ClaudeChange, error) {
	old, err := readOptional(path)
	if err != nil {
		return ClaudeChange{}, fmt.Errorf("read %s: %w", path, err)
	}
	next, err := claude.MergeHooksFor(old, command, session)
	if err == nil {
		next, err = claude.MergeSandbox(next, sb)
	}
	if err != nil {
		return ClaudeChange{}, reason.New(reason.InvalidInput, "%s: %v (the file is left as it is)", path, err)
	}
	ch := ClaudeChange{Path: path, Changed: !bytes.Equal(old, next)}
	if dry {
		ch.Content = string(next)
		return ch, nil
	}
	bk, bp, err := readBackup(path)
	if err != nil {
		return ClaudeChange{}, err
	}
	if bk == nil || !claude.HasHook(old) {
		// A first install (or one after the entries were removed by
		// hand): the file as it is now is what uninstall restores.
		_, statErr := os.Stat(path)
		bk = &backup{Path: path, Existed: statErr == nil, Original: string(old)}
	}
	bk.Installed = string(next)
	if err := writeBackup(bp, bk); err != nil {
		return ClaudeChange{}, fmt.Errorf("keep the settings' backup: %w", err)
	}
	if ch.Changed {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return ClaudeChange{}, err
		}
		if err := claude.WriteFileAtomic(path, next, 0o644); err != nil {
			return ClaudeChange{}, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return ch, nil
}

// uninstallSettings undoes installSettings: the file comes back byte for
// byte when nobody changed it since, else only the custodian's entries go
// (the user's later changes stay).
func uninstallSettings(path string, sb claude.Sandbox) (ClaudeChange, error) {
	cur, err := readOptional(path)
	if err != nil {
		return ClaudeChange{}, fmt.Errorf("read %s: %w", path, err)
	}
	bk, bp, err := readBackup(path)
	if err != nil {
		return ClaudeChange{}, err
	}
	_, statErr := os.Stat(path)
	if bk != nil && statErr == nil && string(cur) == bk.Installed {
		if bk.Existed {
			err = claude.WriteFileAtomic(path, []byte(bk.Original), 0o644)
		} else {
			err = os.Remove(path)
		}
		if err != nil {
			return ClaudeChange{}, fmt.Errorf("restore %s: %w", path, err)
		}
		return ClaudeChange{Path: path, Changed: true}, os.Remove(bp)
	}
	if statErr != nil {
		return ClaudeChange{Path: path}, nil
	}
	var orig []byte
	if bk != nil && bk.Existed {
		orig = []byte(bk.Original)
	}
	next, _, err := claude.RemoveHooks(cur)
	if err == nil {
		next, err = claude.RemoveSandbox(next, orig, sb)
	}
	if err != nil {
		return ClaudeChange{}, reason.New(reason.InvalidInput, "%s: %v (the file is left as it is)", path, err)
	}
	if bytes.Equal(cur, next) {
		return ClaudeChange{Path: path}, nil
	}
	if err := claude.WriteFileAtomic(path, next, 0o644); err != nil {
		return ClaudeChange{}, fmt.Errorf("write %s: %w", path, err)
	}
	if bk != nil {
		_ = os.Remove(bp)
	}
	return ClaudeChange{Path: path, Changed: true}, nil
}
