package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil/cmdtest"
	"github.com/custodian-dev/custodian/reason"
	"github.com/spf13/cobra"
)

// The reference has one page per visible command, none for hidden ones,
// no date stamp and no value from the environment, and is the same when
// generated twice (stale pages are removed).
func TestCommandDocs(t *testing.T) {
	t.Setenv("CUSTODIAN_TOKEN", "s3cret-from-env")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "custodian_gone.md"), []byte("a command that no longer exists"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.md"), []byte("not ours"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := WriteCommandDocs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c.HasParent() {
			return
		}
		want = append(want, strings.ReplaceAll(c.CommandPath(), " ", "_")+".md")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(docsRoot())
	if n != len(want) {
		t.Errorf("%d pages, want %d", n, len(want))
	}
	first := map[string][]byte{}
	for _, name := range want {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no page for %s: %v", name, err)
			continue
		}
		first[name] = b
		if bytes.Contains(b, []byte("Auto generated")) || bytes.Contains(b, []byte("s3cret-from-env")) {
			t.Errorf("%s has a date stamp or an environment value", name)
		}
	}
	for _, name := range []string{"custodian_status.md", "custodian_serve.md", "custodian_completion_bash.md"} {
		if _, ok := first[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	if b := first["custodian_serve.md"]; !bytes.Contains(b, []byte("--admin-token")) {
		t.Error("serve's page lacks --admin-token")
	}
	for _, gone := range []string{"custodian_gone.md", "custodian_docs.md"} {
		if _, err := os.Stat(filepath.Join(dir, gone)); err == nil {
			t.Errorf("%s exists", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.md")); err != nil {
		t.Errorf("a file that is not a command page was removed: %v", err)
	}
	if _, err := WriteCommandDocs(dir); err != nil {
		t.Fatal(err)
	}
	for name, b := range first {
		again, _ := os.ReadFile(filepath.Join(dir, name))
		if !bytes.Equal(b, again) {
			t.Errorf("%s differs when generated again", name)
		}
	}
}

// `custodian docs` writes under the project root by default.
func TestDocsCommand(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &errb, Now: time.Now}
	if code := Run(app, []string{"-C", dir, "docs"}); code != 0 {
		t.Fatalf("docs: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, DocsDir, "custodian.md")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "pages to") {
		t.Errorf("output %q", out.String())
	}
}

// Shell completion: scripts for bash, zsh and fish, and dynamic
// completion of command names.
func TestCompletion(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		app := &cmdutil.App{In: strings.NewReader(""), Out: &out, Err: &errb, Now: time.Now}
		if code := Run(app, args); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return out.String()
	}
	for shell, marker := range map[string]string{"bash": "complete -o default -F __start_custodian custodian", "zsh": "#compdef custodian", "fish": "complete -c custodian"} {
		if got := run("completion", shell); !strings.Contains(got, marker) {
			t.Errorf("completion %s lacks %q", shell, marker)
		}
	}
	got := run("__complete", "sta")
	for _, want := range []string{"status", "state"} {
		if !strings.Contains(got, want+"\t") && !strings.Contains(got, want+"\n") {
			t.Errorf("completing \"sta\" does not offer %s:\n%s", want, got)
		}
	}
	if strings.Contains(run("__complete", "do"), "docs") {
		t.Error("the hidden docs command is offered")
	}
}

func TestDocsFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{nil, DocsDir, 0},
		{[]string{"--out", "/tmp/ref"}, "/tmp/ref", 0},
		{[]string{"--out", ""}, "", reason.ExitUsage},
		{[]string{"extra"}, "", reason.ExitUsage},
	} {
		var got *DocsOptions
		err := cmdtest.Execute(newDocsCmd(&cmdutil.App{}, func(_ context.Context, o *DocsOptions) error { got = o; return nil }), tc.args...)
		if code := cmdtest.ExitCode(err); code != tc.code {
			t.Errorf("docs %q: exit %d (%v), want %d", tc.args, code, err, tc.code)
			continue
		}
		if tc.code == 0 && (got == nil || got.Out != tc.want) {
			t.Errorf("docs %q: options %+v, want --out %s", tc.args, got, tc.want)
		}
	}
}
