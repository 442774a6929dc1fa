// Command gendocs writes Custodian's command reference (docs/commands/):
// one Markdown page per visible command and sub-command, generated with
// cobra/doc from the commands themselves.
//
//	go generate ./internal/cli       (or: go run ./internal/cli/gendocs -out docs/commands)
//
// It is a tool of the repository, not a command of the shipped binary:
// cobra/doc links go-md2man and blackfriday, whose package initialisation
// every custodian process paid for (about 0.6 ms of a 6 ms `custodian
// version`). The output does not depend on the environment or the date
// ($CUSTODIAN_* defaults are left out, no generation stamp), so the
// checked-in pages change only when a command does, and TestReferenceIsCurrent
// fails when they are stale. Pages of commands that no longer exist are
// removed.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
)

func main() {
	out := flag.String("out", "docs/commands", "`directory` to write the pages to")
	flag.Parse()
	if flag.NArg() > 0 || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: gendocs [-out DIR]")
		os.Exit(2)
	}
	n, err := WriteCommandDocs(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %d pages to %s\n", n, *out)
}

// WriteCommandDocs writes the Markdown reference of every visible command
// into dir (replacing the custodian*.md pages there) and returns the number
// of pages.
func WriteCommandDocs(dir string) (int, error) {
	root := docsRoot()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("docs: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "custodian*.md"))
	if err != nil {
		return 0, fmt.Errorf("docs: %w", err)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return 0, fmt.Errorf("docs: %w", err)
		}
	}
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return 0, fmt.Errorf("docs: %w", err)
	}
	pages, err := filepath.Glob(filepath.Join(dir, "custodian*.md"))
	if err != nil {
		return 0, fmt.Errorf("docs: %w", err)
	}
	return len(pages), nil
}

// docsRoot is the command tree as a user without any $CUSTODIAN_* setting
// sees it, with the default completion command added and no date stamps.
func docsRoot() *cobra.Command {
	// Flags take some defaults from $CUSTODIAN_* (--store, --server,
	// --token…) when the commands are built: build them with none set.
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "CUSTODIAN_") {
			os.Unsetenv(k)
			defer os.Setenv(k, v)
		}
	}
	app := &cmdutil.App{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}
	root := cli.NewRoot(app)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}
