package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// Every command that has subcommands, at any depth, answers an unknown word
// or a bare noun with exit 2 and a message naming the command.
func TestUnknownSubcommandEverywhere(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	root := NewRoot(&App{Now: time.Now})
	var nouns [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.HasSubCommands() {
			nouns = append(nouns, path)
		}
		for _, s := range c.Commands() {
			walk(s, append(append([]string(nil), path...), s.Name()))
		}
	}
	walk(root, nil)
	if len(nouns) < 8 {
		t.Fatalf("only %d commands with subcommands found: %v", len(nouns), nouns)
	}
	for _, path := range nouns {
		name := strings.Join(append([]string{"custodian"}, path...), " ")
		_, stderr, code := runCLI(dir, "", now, append(path, "nosuchcommand", "x")...)
		if code != 2 || !strings.Contains(stderr, `unknown command "nosuchcommand" for "`+name+`"`) {
			t.Errorf("%s nosuchcommand: exit %d, stderr %q; want exit 2 and unknown command", name, code, stderr)
		}
		if len(path) == 0 {
			continue
		}
		_, stderr, code = runCLI(dir, "", now, path...)
		if code != 2 || !strings.Contains(stderr, name+" needs a subcommand: ") {
			t.Errorf("bare %s: exit %d, stderr %q; want exit 2 and the list of subcommands", name, code, stderr)
		}
	}
}

func TestUnknownSubcommandSuggests(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tasks", "complete", "SLICE-001", "T1"}, `custodian: unknown command "complete" for "custodian tasks": did you mean "done"? (custodian tasks: add, done, ready)`},
		{[]string{"slcie", "list"}, `custodian: unknown command "slcie" for "custodian": did you mean "slice"? (see custodian --help)`},
		{[]string{"slice", "foo"}, `custodian: unknown command "foo" for "custodian slice" (custodian slice: add, list, show)`},
		{[]string{"state", "foo"}, `custodian: unknown command "foo" for "custodian state" (custodian state: compact, init, read, record-failure, record-output, update)`},
		{[]string{"cycle", "creat"}, `custodian: unknown command "creat" for "custodian cycle": did you mean "create"? (see custodian cycle --help)`},
		{[]string{"hook", "uninstall"}, `custodian: unknown command "uninstall" for "custodian hook": did you mean "install"? (custodian hook: install)`},
	} {
		_, stderr, code := runCLI(dir, "", now, tc.args...)
		if code != 2 || strings.TrimSpace(stderr) != tc.want {
			t.Errorf("custodian %s: exit %d\n got %q\nwant %q", strings.Join(tc.args, " "), code, strings.TrimSpace(stderr), tc.want)
		}
	}
	// The bare root is the overview, exit 0.
	out, _, code := runCLI(dir, "", now)
	if code != 0 || !strings.Contains(out, "Available Commands:") {
		t.Errorf("bare custodian: exit %d, %q", code, out)
	}
}

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC)
	out, _, code := runCLI(dir, "", now, "version")
	if code != 0 || !strings.HasPrefix(out, "custodian ") || !strings.Contains(out, " go1.") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
	flagOut, _, code := runCLI(dir, "", now, "--version")
	if code != 0 || flagOut != out {
		t.Errorf("--version: exit %d, %q; want %q", code, flagOut, out)
	}
	js, _, code := runCLI(dir, "", now, "version", "--json")
	var b BuildInfo
	if err := json.Unmarshal([]byte(js), &b); err != nil || code != 0 || b.Version == "" || b.Go == "" || b.Platform == "" {
		t.Errorf("version --json: exit %d, %q (%v)", code, js, err)
	}
	// The one-line form names the commit, its date and a linked build date.
	s := BuildInfo{Version: "v1.2.0", Commit: "0123456789abcdef0123", Modified: true, CommitDate: "2026-11-25T17:00:00Z", BuildDate: "2026-11-25T18:00:00Z", Go: "go1.26.8", Platform: "linux/amd64"}.String()
	if want := "custodian v1.2.0 (commit 0123456789ab-dirty, committed 2026-11-25T17:00:00Z, built 2026-11-25T18:00:00Z) go1.26.8 linux/amd64"; s != want {
		t.Errorf("String:\n got %q\nwant %q", s, want)
	}
}
