package watch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// Options is what `custodian watch` was asked to follow.
type Options struct {
	App   *cmdutil.App
	Key   string  // the document
	From  *uint64 // print the history after this revision first (nil: only new commits)
	Count int     // stop after this many commits (0: until interrupted)
}

// NewCmd returns `custodian watch`; it parses the command line into
// Options and calls runF with them (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{App: app}
	var from uint64
	cmd := &cobra.Command{
		Use:   "watch [--key DOC] [--from REV] [--count N] [--json]",
		Short: "Follow the commits of a document as they happen",
		Long: `Prints every commit of a document from now on, in order and with no gap,
until interrupted (or until --count commits were printed). --from REV
prints the history after revision REV first (--from 0: from the first
commit). A document that does not exist is an error (NOT_FOUND), not a
silent wait. Through a running daemon it follows the
daemon's event stream and resumes by itself after a dropped connection;
without one it follows the journal file.

Text output is one line per commit: revision, time, actor, reason and the
domain events. --json prints one JSON object per line (the journal record
with its key).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Count < 0 {
				return reason.Usage("--count must not be negative")
			}
			opts.From = nil
			if cmd.Flags().Changed("from") {
				opts.From = &from
			}
			if runF == nil {
				runF = run
			}
			return runF(app.Context(cmd), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Key, "key", asdd.Key, "the document to follow: its key or its short name ("+cmdutil.ShortNames+")")
	f.Uint64Var(&from, "from", 0, "print the history after revision `REV` first (default: only new commits)")
	f.IntVar(&opts.Count, "count", 0, "stop after this many commits (0: follow until interrupted)")
	return cmd
}

// run prints the document's commits as they happen.
func run(ctx context.Context, opts *Options) error {
	app := opts.App
	svc, err := app.Service()
	if err != nil {
		return err
	}
	typed := opts.Key
	opts.Key = cmdutil.ResolveKey(typed)
	doc, err := svc.Doc(ctx, opts.Key)
	if err == nil && !doc.Exists() {
		err = reason.New(reason.NotFound, "no document %s", opts.Key)
	}
	if reason.CodeOf(err) == reason.NotFound {
		name := typed
		if opts.Key != typed {
			name += " (" + opts.Key + ")"
		}
		return reason.New(reason.NotFound, "no document %s to watch (nothing committed yet); %s", name, app.DocumentList(ctx))
	}
	if err != nil {
		return err
	}
	from := doc.Revision // follow from now
	if opts.From != nil {
		from = *opts.From
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	enc := json.NewEncoder(app.Out)
	enc.SetEscapeHTML(false)
	n := 0
	for c, err := range svc.Watch(ctx, opts.Key, from) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if app.JSON {
			if err := enc.Encode(c); err != nil {
				return err
			}
		} else {
			types := make([]string, len(c.Events))
			for i, e := range c.Events {
				types[i] = e.Type
			}
			line := fmt.Sprintf("%d\t%s\t%s\t%s", c.Rev, c.Time.UTC().Format(time.RFC3339), orDash(c.Actor), orDash(c.Reason))
			if len(types) > 0 {
				line += "\t[" + strings.Join(types, " ") + "]"
			}
			if _, err := fmt.Fprintln(app.Out, line); err != nil {
				return err
			}
		}
		n++
		if opts.Count > 0 && n >= opts.Count {
			return nil
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
