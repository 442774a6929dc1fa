package watch

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reason"
)

// NewCmd returns `custodian watch`.
func NewCmd(app *cmdutil.App) *cobra.Command {
	var key string
	var from uint64
	var count int
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
			if count < 0 {
				return reason.Usage("--count must not be negative")
			}
			st, err := app.Store()
			if err != nil {
				return err
			}
			doc, err := st.Get(app.Context(cmd), key)
			if err == nil && !doc.Exists() {
				err = reason.New(reason.NotFound, "no document %s", key)
			}
			if reason.CodeOf(err) == reason.NotFound {
				return reason.New(reason.NotFound, "no document %s to watch (nothing committed yet; the ASDD manifest is %s)", key, asdd.Key)
			}
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("from") {
				from = doc.Revision // follow from now
			}
			ctx, stop := signal.NotifyContext(app.Context(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			enc := json.NewEncoder(app.Out)
			enc.SetEscapeHTML(false)
			n := 0
			for c, err := range st.Watch(ctx, key, from) {
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
				if count > 0 && n >= count {
					return nil
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&key, "key", asdd.Key, "the document to follow")
	f.Uint64Var(&from, "from", 0, "print the history after revision `REV` first (default: only new commits)")
	f.IntVar(&count, "count", 0, "stop after this many commits (0: follow until interrupted)")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
