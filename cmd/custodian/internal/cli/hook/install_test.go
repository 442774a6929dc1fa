package hook

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
)

// fakePath puts the named programs (each a script that succeeds) alone on
// PATH, and the admin credentials in a directory of the test's.
func fakePath(t *testing.T, programs ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, p := range programs {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

func claudeProject(t *testing.T, settings string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".asdd", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, ".claude", "settings.json")
	if settings != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, path
}

func hookCmd(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	app := &cmdutil.App{Dir: dir, Out: &out, Err: &out}
	err := cmdtest.Execute(NewHookCmd(app, nil), args...)
	return out.String(), err
}

// Installed then uninstalled, the user's settings come back byte for
// byte; installed twice, the file is the same; --dry-run writes nothing.
func TestClaudeInstallUndoesByteForByte(t *testing.T) {
	fakePath(t, "custodian", "bwrap", "socat", "sandbox-exec")
	user := "{\n    \"model\": \"opus\",\n    \"permissions\": {\"deny\": [\"Read(./.env)\"]}\n}\n"
	for name, settings := range map[string]string{"the user's file": user, "no file": ""} {
		t.Run(name, func(t *testing.T) {
			dir, path := claudeProject(t, settings)
			out, err := hookCmd(t, dir, "install", "--claude", "--dry-run")
			if err != nil || !strings.Contains(out, `"denyWrite"`) {
				t.Fatalf("dry run: %v\n%s", err, out)
			}
			if b, _ := os.ReadFile(path); string(b) != settings {
				t.Fatalf("--dry-run wrote the file:\n%s", b)
			}
			if out, err := hookCmd(t, dir, "install", "--claude"); err != nil {
				t.Fatalf("install: %v\n%s", err, out)
			}
			first, _ := os.ReadFile(path)
			if out, err := hookCmd(t, dir, "install", "--claude"); err != nil || !strings.Contains(out, "unchanged") {
				t.Fatalf("second install: %v\n%s", err, out)
			}
			if again, _ := os.ReadFile(path); !bytes.Equal(first, again) {
				t.Fatalf("a second install changed the file")
			}
			if out, err := hookCmd(t, dir, "uninstall", "--claude"); err != nil {
				t.Fatalf("uninstall: %v\n%s", err, out)
			}
			b, err := os.ReadFile(path)
			if settings == "" {
				if !os.IsNotExist(err) {
					t.Fatalf("uninstall left %s: %v\n%s", path, err, b)
				}
				return
			}
			if string(b) != settings {
				t.Fatalf("uninstall did not restore the file:\n%s\nwant:\n%s", b, settings)
			}
		})
	}
}

// A file changed after the install keeps the user's change on uninstall;
// only the custodian's entries go.
func TestClaudeUninstallKeepsLaterChanges(t *testing.T) {
	fakePath(t, "custodian", "bwrap", "socat", "sandbox-exec")
	dir, path := claudeProject(t, `{"model":"opus"}`)
	if out, err := hookCmd(t, dir, "install", "--claude"); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(path)
	b = bytes.Replace(b, []byte(`"model": "opus"`), []byte(`"model": "sonnet"`), 1)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := hookCmd(t, dir, "uninstall", "--claude"); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "{\n  \"model\": \"sonnet\"\n}\n" {
		t.Fatalf("after uninstall:\n%s", got)
	}
}

// What cannot be installed safely is refused, and the file left as it is:
// settings that are not JSON or turn the sandbox off, a hook command that
// could not start, a sandbox that cannot start.
func TestClaudeInstallRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, settings string
		programs       []string
		args           []string
		code           int
		want           string
	}{
		{"settings not JSON", `{"model": "opus",`, []string{"custodian", "bwrap", "socat", "sandbox-exec"}, nil, reason.ExitUsage, "left as it is"},
		{"the sandbox turned off", `{"sandbox": {"enabled": false}}`, []string{"custodian", "bwrap", "socat", "sandbox-exec"}, nil, reason.ExitUsage, "sandbox.enabled is false"},
		{"no custodian on PATH", `{}`, []string{"bwrap", "socat", "sandbox-exec"}, nil, reason.ExitUsage, "--binary"},
		{"--binary not executable", `{}`, []string{"bwrap", "socat", "sandbox-exec"}, []string{"--binary", "/nonexistent/custodian"}, reason.ExitUsage, "not an executable"},
		{"no bubblewrap", `{}`, []string{"custodian", "sandbox-exec"}, nil, reason.ExitUsage, "install"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakePath(t, tc.programs...)
			dir, path := claudeProject(t, tc.settings)
			out, err := hookCmd(t, dir, append([]string{"install", "--claude"}, tc.args...)...)
			if code := cmdtest.ExitCode(err); code != tc.code || !strings.Contains(err.Error()+out, tc.want) {
				t.Fatalf("exit %d (%v), want %d naming %q\n%s", code, err, tc.code, tc.want, out)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.settings {
				t.Fatalf("the file changed:\n%s", b)
			}
		})
	}
	// --no-sandbox installs without the sandbox where none can start.
	fakePath(t, "custodian")
	dir, path := claudeProject(t, `{}`)
	if out, err := hookCmd(t, dir, "install", "--claude", "--no-sandbox"); err != nil {
		t.Fatalf("--no-sandbox: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(`"sandbox"`)) || !bytes.Contains(b, []byte(`Edit(./.asdd/state/**)`)) {
		t.Fatalf("--no-sandbox wrote:\n%s", b)
	}
}

// hook doctor: live after install (the daemon's absence is a warning), not
// live (exit 5) without the settings, without the sandbox, or with a hook
// command that cannot start.
func TestHookDoctor(t *testing.T) {
	fakePath(t, "custodian", "bwrap", "socat", "sandbox-exec")
	dir, path := claudeProject(t, "")
	if out, err := hookCmd(t, dir, "doctor"); cmdtest.ExitCode(err) != reason.ExitIntegrity || !strings.Contains(out, "NOT live") {
		t.Fatalf("doctor before install: %v\n%s", err, out)
	}
	if out, err := hookCmd(t, dir, "install", "--claude"); err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	out, err := hookCmd(t, dir, "doctor")
	if err != nil || !strings.Contains(out, "protection is live") || !strings.Contains(out, "warn  daemon") {
		t.Fatalf("doctor after install: %v\n%s", err, out)
	}
	// The hook's program gone from PATH.
	t.Setenv("PATH", filepath.Dir(path))
	if out, err := hookCmd(t, dir, "doctor"); cmdtest.ExitCode(err) != reason.ExitIntegrity || !strings.Contains(out, "cannot start") {
		t.Fatalf("doctor without custodian on PATH: %v\n%s", err, out)
	}
	fakePath(t, "custodian")
	dir, _ = claudeProject(t, "")
	if out, err := hookCmd(t, dir, "install", "--claude", "--no-sandbox"); err != nil {
		t.Fatalf("install --no-sandbox: %v\n%s", err, out)
	}
	if out, err := hookCmd(t, dir, "doctor"); cmdtest.ExitCode(err) != reason.ExitIntegrity || !strings.Contains(out, "no sandbox block") {
		t.Fatalf("doctor after --no-sandbox: %v\n%s", err, out)
	}
}
