package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// DocsDir is where `custodian docs` writes the command reference, relative
// to the project root.
const DocsDir = "docs/commands"

// DocsOptions is what `custodian docs` was asked to do.
type DocsOptions struct {
	App *cmdutil.App
	Out string // the directory to write to (relative: to the project root)
}

// newDocsCmd returns `custodian docs`; it parses the command line into
// DocsOptions and calls runF with them (runDocs when runF is nil).
func newDocsCmd(app *cmdutil.App, runF func(context.Context, *DocsOptions) error) *cobra.Command {
	if runF == nil {
		runF = runDocs
	}
	opts := &DocsOptions{App: app}
	cmd := &cobra.Command{
		Use:    "docs [--out docs/commands]",
		Short:  "Write the command reference (one Markdown page per command) from the commands themselves",
		Hidden: true,
		Long: `Generates the command reference with cobra/doc: one Markdown page per
command and sub-command, with its usage, description, flags and links to
its parent and children. The output does not depend on the environment or
the date ($CUSTODIAN_* defaults are left out, no generation stamp), so the
checked-in pages change only when a command does. Pages of commands that
no longer exist are removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Out == "" {
				return reason.Usage("--out names a directory")
			}
			return runF(app.Context(cmd), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Out, "out", DocsDir, "`directory` to write the pages to (relative to the project root)")
	return cmd
}

// runDocs writes the reference into opts.Out.
func runDocs(_ context.Context, opts *DocsOptions) error {
	app, dir := opts.App, opts.Out
	if !filepath.IsAbs(dir) {
		root, err := app.WorkRoot()
		if err != nil {
			return err
		}
		dir = filepath.Join(root, dir)
	}
	n, err := WriteCommandDocs(dir)
	if err != nil {
		return err
	}
	return app.Render(map[string]any{"dir": dir, "pages": n}, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "wrote %d pages to %s\n", n, dir)
		return err
	})
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
	app := &cmdutil.App{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}
	root := NewRoot(app)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	env := map[string]bool{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "CUSTODIAN_") && v != "" {
			env[v] = true
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		// A default taken from $CUSTODIAN_* (--store, --server, --token…)
		// is the environment's, not the command's.
		for _, fs := range []*pflag.FlagSet{c.Flags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				if env[f.DefValue] {
					f.DefValue = ""
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return root
}
