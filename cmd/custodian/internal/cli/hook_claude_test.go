package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/hook/claude"
)

const existingSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": ["Read(.env)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "gofmt -w \"$CLAUDE_FILE\""}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./scripts/audit.sh"}]}]
  },
  "zz_unknown": {"keep": [1, 2, 3]}
}
`

const existingMCP = `{"mcpServers": {"github": {"command": "gh-mcp", "args": ["serve"]}}}`

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestHookInstallClaude: install merges into existing settings, keeping
// every other key and hook in order; a second install writes the same
// bytes; uninstall removes only what install added.
func TestHookInstallClaude(t *testing.T) {
	t.Setenv("PATH", pathWithout(os.Getenv("PATH"), claude.FastBinary))
	withClaudeTools(t)
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(settings, []byte(existingSettings), 0o600)
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(existingMCP), 0o644)

	// --dry-run writes nothing.
	out, errs, code := runCLI(dir, "", now, "hook", "install", "--claude", "--mcp", "--dry-run")
	if code != 0 || !strings.Contains(out, "would write") || readFile(t, settings) != existingSettings {
		t.Fatalf("dry run: code %d out %q err %q", code, out, errs)
	}

	out, errs, code = runCLI(dir, "", now, "hook", "install", "--claude", "--mcp")
	if code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errs)
	}
	first, firstMCP := readFile(t, settings), readFile(t, filepath.Join(dir, ".mcp.json"))
	checkGolden(t, "testdata/hookclaude/settings.installed.json", first)
	checkGolden(t, "testdata/hookclaude/mcp.installed.json", firstMCP)
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o600 {
		t.Errorf("settings mode %v, want the file's 0600 kept", fi.Mode().Perm())
	}

	out, _, code = runCLI(dir, "", now, "hook", "install", "--claude", "--mcp")
	if code != 0 || readFile(t, settings) != first || readFile(t, filepath.Join(dir, ".mcp.json")) != firstMCP {
		t.Fatalf("second install changed the files (code %d)", code)
	}
	if !strings.Contains(out, "unchanged") {
		t.Errorf("second install says %q, want unchanged", out)
	}

	out, errs, code = runCLI(dir, "", now, "hook", "uninstall", "--claude", "--mcp")
	if code != 0 {
		t.Fatalf("uninstall: %d %s %s", code, out, errs)
	}
	removed := readFile(t, settings)
	checkGolden(t, "testdata/hookclaude/settings.uninstalled.json", removed)
	if strings.Contains(removed, "hook claude") || !strings.Contains(removed, "./scripts/audit.sh") || !strings.Contains(removed, "zz_unknown") {
		t.Errorf("uninstall left:\n%s", removed)
	}
	var before, after any
	json.Unmarshal([]byte(existingSettings), &before)
	json.Unmarshal([]byte(removed), &after)
	if b1, _ := json.Marshal(before); string(b1) != mustMarshal(after) {
		t.Errorf("install + uninstall is not the original settings:\n%s\n%s", b1, mustMarshal(after))
	}
	if mcp := readFile(t, filepath.Join(dir, ".mcp.json")); strings.Contains(mcp, "custodian") || !strings.Contains(mcp, "gh-mcp") {
		t.Errorf(".mcp.json after uninstall: %s", mcp)
	}
}

func mustMarshal(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestHookInstallClaudeScopesAndErrors(t *testing.T) {
	t.Setenv("PATH", pathWithout(os.Getenv("PATH"), claude.FastBinary))
	withClaudeTools(t)
	dir := t.TempDir()
	now := time.Now()
	// A fresh project: the local settings file is created.
	if _, errs, code := runCLI(dir, "", now, "hook", "install", "--claude", "--scope", "local"); code != 0 {
		t.Fatalf("local: %d %s", code, errs)
	}
	checkGolden(t, "testdata/hookclaude/settings.local.fresh.json", readFile(t, filepath.Join(dir, ".claude", "settings.local.json")))
	// User scope writes under $HOME.
	home := t.TempDir()
	t.Setenv("HOME", home)
	if _, errs, code := runCLI(dir, "", now, "hook", "install", "--claude", "--scope", "user"); code != 0 {
		t.Fatalf("user: %d %s", code, errs)
	}
	if !strings.Contains(readFile(t, filepath.Join(home, ".claude", "settings.json")), `"custodian hook claude"`) {
		t.Error("user settings lack the hook")
	}
	// Bad input changes nothing.
	bad := filepath.Join(dir, ".claude", "settings.json")
	os.WriteFile(bad, []byte(`{"hooks": [`), 0o644)
	_, errs, code := runCLI(dir, "", now, "hook", "install", "--claude")
	if code != 2 || !strings.Contains(errs, "INVALID_INPUT") || readFile(t, bad) != `{"hooks": [` {
		t.Errorf("invalid settings: code %d, %s", code, errs)
	}
	for _, args := range [][]string{
		{"hook", "install", "--claude", "--scope", "global"},
		{"hook", "install", "--claude", "--scope", "user", "--mcp"},
		{"hook", "install", "--mcp"},
		{"hook", "uninstall"},
	} {
		if _, errs, code := runCLI(dir, "", now, args...); code != 2 {
			t.Errorf("%v: code %d (%s), want 2", args, code, errs)
		}
	}
}

func TestPluginExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "custodian-plugin")
	now := time.Now()
	if _, errs, code := runCLI(t.TempDir(), "", now, "plugin", "export", dir); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	hooks := readFile(t, filepath.Join(dir, "hooks", "hooks.json"))
	checkGolden(t, "testdata/hookclaude/plugin.hooks.json", hooks)
	checkGolden(t, "testdata/hookclaude/plugin.mcp.json", readFile(t, filepath.Join(dir, ".mcp.json")))
	checkGolden(t, "testdata/hookclaude/plugin.plugin.json", readFile(t, filepath.Join(dir, ".claude-plugin", "plugin.json")))
	out, _, code := runCLI(t.TempDir(), "", now, "plugin", "export", dir)
	if code != 0 || readFile(t, filepath.Join(dir, "hooks", "hooks.json")) != hooks || strings.Count(out, "unchanged") != 3 {
		t.Errorf("second export: code %d, %q", code, out)
	}
}

// TestHookClaudeCommand runs the door in-process on a real project tree.
func TestHookClaudeCommand(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".impl"), 0o755)
	sub := filepath.Join(dir, "src")
	os.MkdirAll(sub, 0o755)
	in := `{"hook_event_name":"PreToolUse","cwd":"` + sub + `","tool_name":"Bash","tool_input":{"command":"echo '{}' > ../.impl/manifest.json"}}`
	out, _, code := runCLI(sub, in, time.Now(), "hook", "claude")
	if code != 0 || !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, ".impl/manifest.json") {
		t.Errorf("deny: code %d out %s", code, out)
	}
	out, _, code = runCLI(sub, `{"hook_event_name":"PreToolUse","cwd":"`+sub+`","tool_name":"Bash","tool_input":{"command":"ls"}}`, time.Now(), "hook", "claude")
	if code != 0 || out != "" {
		t.Errorf("unrelated: code %d out %q", code, out)
	}
	// Through symbolic links: a link to the manifest, a link to the state
	// directory.
	os.MkdirAll(filepath.Join(dir, ".asdd", "state"), 0o755)
	os.WriteFile(filepath.Join(dir, ".impl", "manifest.json"), []byte("{}"), 0o644)
	os.Symlink(filepath.Join(dir, ".impl", "manifest.json"), filepath.Join(sub, "m.json"))
	os.Symlink(filepath.Join(dir, ".asdd", "state"), filepath.Join(sub, "st"))
	for _, in := range []string{
		`{"hook_event_name":"PreToolUse","cwd":"` + sub + `","tool_name":"Write","tool_input":{"file_path":"` + filepath.Join(sub, "m.json") + `","content":"{}"}}`,
		`{"hook_event_name":"PreToolUse","cwd":"` + sub + `","tool_name":"Bash","tool_input":{"command":"echo x > m.json"}}`,
		`{"hook_event_name":"PreToolUse","cwd":"` + sub + `","tool_name":"Bash","tool_input":{"command":"echo x >> st/new-file"}}`,
	} {
		if out, _, code := runCLI(sub, in, time.Now(), "hook", "claude"); code != 0 || !strings.Contains(out, `"deny"`) {
			t.Errorf("through a link: %s -> %d %s", in, code, out)
		}
	}
	_, errs, code := runCLI(sub, `{not json .asdd/state/manifest.json`, time.Now(), "hook", "claude")
	if code != 2 || !strings.Contains(errs, "denied") {
		t.Errorf("bad input: code %d stderr %q", code, errs)
	}
}

// pathWithout is PATH less the directories holding an executable name.
// withClaudeTools puts stand-ins for what hook install --claude checks
// (custodian on PATH, bubblewrap, socat) first on PATH, and the admin
// credentials under a home directory of the test's, so that the installed
// settings are the same on every machine.
func withClaudeTools(t *testing.T) {
	t.Helper()
	bin := t.TempDir()
	for _, p := range []string{"custodian", "bwrap", "socat", "sandbox-exec"} {
		if err := os.WriteFile(filepath.Join(bin, p), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
}

func pathWithout(path, name string) string {
	var keep []string
	for _, d := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(d, name)); err != nil {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// With the small hook binary on PATH, install makes the hook run it (an
// unrelated call then costs about a millisecond); uninstall removes it.
func TestHookInstallPrefersTheFastBinary(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, claude.FastBinary), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	withClaudeTools(t)
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	if out, errs, code := runCLI(dir, "", now, "hook", "install", "--claude"); code != 0 {
		t.Fatalf("install: %d %s %s", code, out, errs)
	}
	settings := filepath.Join(dir, ".claude", "settings.json")
	if got := readFile(t, settings); !strings.Contains(got, `"custodian-hook hook claude"`) || !strings.Contains(got, `"custodian hook claude"`) {
		t.Fatalf("installed settings do not run custodian-hook for PreToolUse and custodian for SessionStart:\n%s", got)
	}
	if out, errs, code := runCLI(dir, "", now, "hook", "uninstall", "--claude"); code != 0 {
		t.Fatalf("uninstall: %d %s %s", code, out, errs)
	}
	// The file did not exist before the install: uninstall removes it.
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Fatalf("uninstall left %s: %v", settings, err)
	}
}
