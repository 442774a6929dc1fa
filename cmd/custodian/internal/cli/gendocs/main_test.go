package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var update = flag.Bool("update", false, "rewrite docs/commands from the commands")

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

// The checked-in reference (docs/commands) is what the commands generate
// today: a command or flag changed without regenerating it fails here.
// go generate ./internal/cli (or this test with -update) rewrites it.
func TestReferenceIsCurrent(t *testing.T) {
	t.Setenv("CUSTODIAN_TOKEN", "")
	t.Setenv("CUSTODIAN_STORE", "")
	t.Setenv("CUSTODIAN_SERVER", "")
	checked := filepath.Join("..", "..", "..", "..", "..", "docs", "commands")
	if *update {
		if _, err := WriteCommandDocs(checked); err != nil {
			t.Fatal(err)
		}
	}
	fresh := t.TempDir()
	if _, err := WriteCommandDocs(fresh); err != nil {
		t.Fatal(err)
	}
	pages := func(dir string) []string {
		t.Helper()
		ps, err := filepath.Glob(filepath.Join(dir, "custodian*.md"))
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ps {
			ps[i] = filepath.Base(p)
		}
		return ps
	}
	want, got := pages(fresh), pages(checked)
	if !slices.Equal(got, want) {
		t.Fatalf("docs/commands has the pages %q, the commands make %q: run go generate ./internal/cli", got, want)
	}
	for _, name := range want {
		a, _ := os.ReadFile(filepath.Join(checked, name))
		b, _ := os.ReadFile(filepath.Join(fresh, name))
		if !bytes.Equal(a, b) {
			t.Errorf("docs/commands/%s is stale: run go generate ./internal/cli", name)
		}
	}
}
